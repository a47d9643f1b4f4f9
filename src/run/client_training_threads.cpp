// The clients' local updates on several threads at once (ClientGroup::set_training_threads): each
// client trains on one thread with one LibTorch intra-op thread, its own copy of the model and its
// own (seed, purpose, client, round) stream, so what it computes does not depend on the threads;
// an algorithm's client procedure too where it runs_concurrently (FedPAC).
#include <cflrun/run/client_group.hpp>

#include <torch/types.h>

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

bool ClientGroup::trains_on_threads() const {
  return training_threads_.count() > 1 && (!procedure_ || procedure_->runs_concurrently()) &&
         !kept_optimizers_.enabled() && device_.is_cpu();
}

bool ClientGroup::procedure_on_threads() const {
  return procedure_ && procedure_->runs_concurrently() && trains_on_threads();
}

void ClientGroup::on_threads(ModelSet& models, std::size_t count,
                             const TrainingThreads::Work& work) {
  training_threads_.run([&models] { return models.make_network(); }, count, work);
}

void ClientGroup::train_on_threads(const std::vector<TrainingStart>& starts,
                                   const algo::RoundPlan& plan, ModelSet& models, int round,
                                   std::uint64_t seed, const local::LocalUpdateSettings& settings,
                                   const TrainedClient& receive, std::vector<double>& train_loss) {
  std::vector<algo::LocalClient> views;  // made here: view() is not safe to call on several threads
  for (std::size_t n = 0; procedure_ && n < starts.size(); ++n) {
    views.push_back(view(starts[n].i, round, seed, models.states()));
  }
  const bool reports = procedure_ && procedure_->report_length() > 0;
  std::vector<std::vector<double>> client_reports(starts.size());
  std::vector<torch::Tensor> results(starts.size());
  on_threads(models, starts.size(), [&](std::size_t n, model::Network& network) {
    const auto [i, start] = starts[n];
    auto local = settings;
    model::load_flat_state(network,
                           start == algo::kLocalModel ? local_states_[i] : models.states()[start]);
    if (plan.proximal_weights.defined()) {
      local.proximal.importance = plan.proximal_weights[first_ + i];
    }
    auto& loss = train_loss[static_cast<std::size_t>(i)];
    if (procedure_) {
      seed_dropout(network, i, round, seed, core::Purpose::kLocalUpdate);
      loss = procedure_->train(views[n], network, local, plan.payload);
    } else {
      loss = train_client(network, i, round, seed, local);
    }
    client_reports[n] = reports ? procedure_->report(views[n], network) : std::vector<double>{};
    results[n] = settings.gradient_averaging ? model::flatten_gradients(network)
                                             : model::flatten_state(network);
  });
  for (std::size_t n = 0; n < starts.size(); ++n) {
    if (reports) {  // in client order, as one client after another would
      reports_.emplace_back(first_ + starts[n].i, std::move(client_reports[n]));
    }
    deliver(starts[n].i, results[n], settings.gradient_averaging, receive);
  }
}

}  // namespace cflrun::run
