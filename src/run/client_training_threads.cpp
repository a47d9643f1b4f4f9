// The clients' local updates on several threads at once (ClientGroup::set_training_threads): each
// client trains on one thread with one LibTorch intra-op thread, its own copy of the model and its
// own (seed, purpose, client, round) stream, so what it computes does not depend on the threads;
// an algorithm's client procedure too where it runs_concurrently (FedPAC).
#include <cflrun/run/client_group.hpp>

#include <atomic>
#include <functional>
#include <exception>
#include <mutex>
#include <thread>

#include <ATen/Parallel.h>
#include <torch/types.h>

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {
namespace {

/// LibTorch's intra-op thread count set to `threads` for the guard's life, then restored. A new
/// thread starts its OpenMP team at that count, and LibTorch 2.x's kernels size their partial sums
/// by the process-wide count (at::get_num_threads), not by the calling thread's team: a client's
/// results equal its --threads 1 results only while that count is 1.
class IntraOpThreads {
 public:
  explicit IntraOpThreads(int threads) : previous_(at::get_num_threads()) {
    at::set_num_threads(threads);
  }
  ~IntraOpThreads() { at::set_num_threads(previous_); }
  IntraOpThreads(const IntraOpThreads&) = delete;
  IntraOpThreads& operator=(const IntraOpThreads&) = delete;

 private:
  int previous_;
};

}  // namespace

bool ClientGroup::trains_on_threads() const {
  return training_threads_ > 1 && (!procedure_ || procedure_->runs_concurrently()) &&
         !kept_optimizers_.enabled() && device_.is_cpu();
}

bool ClientGroup::procedure_on_threads() const {
  return procedure_ && procedure_->runs_concurrently() && trains_on_threads();
}

void ClientGroup::on_threads(ModelSet& models, std::size_t count,
                             const std::function<void(std::size_t, model::Network&)>& work) {
  while (static_cast<int>(thread_models_.size()) < training_threads_) {
    thread_models_.push_back(models.make_network());
  }
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  const auto run = [&](model::Network* network) {
    try {
      for (std::size_t n = next++; n < count; n = next++) {
        work(n, *network);
      }
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      failure = failure ? failure : std::current_exception();
      next = count;
    }
  };
  const IntraOpThreads one_thread_each(1);
  std::vector<std::thread> threads;
  for (int t = 0; t < training_threads_; ++t) {
    threads.emplace_back(run, thread_models_[static_cast<std::size_t>(t)].get());
  }
  for (auto& thread : threads) {
    thread.join();
  }
  if (failure) {
    std::rethrow_exception(failure);
  }
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
