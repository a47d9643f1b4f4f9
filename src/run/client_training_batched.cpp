// The clients' local updates client-batched (ClientGroup::set_client_batch): up to client_batch_
// clients train as one model::ClientBatchedNetwork, in decreasing order of their sample counts so
// that the clients still training at every step are a prefix of the stacked parameters.
#include <cflrun/run/client_group.hpp>

#include <algorithm>
#include <numeric>

#include <torch/types.h>

#include <cflrun/local/batched_update.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {
namespace {

/// Bytes one float of a client's flat state takes client-batched: the parameter, its gradient and
/// the optimizer's two moments (Adam).
constexpr std::int64_t kStackedBytesPerFloat = 16;

}  // namespace

bool ClientGroup::trains_batched(ModelSet& models, const algo::RoundPlan& plan,
                                 std::size_t clients) {
  if (client_batch_ <= 1 || clients < 2 || procedure_ || kept_optimizers_.enabled() ||
      plan.proximal_weights.defined()) {
    return false;
  }
  return batched_ || model::ClientBatchedNetwork::supports(models.working_model());
}

void ClientGroup::train_chunk(const std::vector<TrainingStart>& starts,
                              const std::vector<std::size_t>& chunk, ModelSet& models, int round,
                              std::uint64_t seed, const local::LocalUpdateSettings& settings,
                              std::vector<torch::Tensor>& results,
                              std::vector<double>& train_loss) {
  std::vector<torch::Tensor> states;
  std::vector<local::BatchedClient> clients;
  for (const auto n : chunk) {
    const auto [i, start] = starts[n];
    states.push_back(start == algo::kLocalModel ? local_states_[i] : models.states()[start]);
    clients.push_back({train_.offset(i), train_.count(i),
                       client_generator(i, round, seed, core::Purpose::kLocalUpdate),
                       dropout_seed(i, round, seed, core::Purpose::kLocalUpdate)});
  }
  batched_->load(torch::stack(states));
  const auto g = static_cast<int>(chunk.size());
  const auto losses =
      settings.gradient_averaging
          ? local::batched_local_gradient(*batched_, train_.inputs(), train_.targets(), clients,
                                          settings.batch_size, settings.objective)
          : local::batched_local_update(*batched_, train_.inputs(), train_.targets(), clients,
                                        settings);
  const auto trained = settings.gradient_averaging ? batched_->gradients(g) : batched_->states(g);
  for (std::size_t c = 0; c < chunk.size(); ++c) {
    results[chunk[c]] = trained[static_cast<std::int64_t>(c)];
    train_loss[static_cast<std::size_t>(starts[chunk[c]].i)] = losses[c];
  }
}

void ClientGroup::train_batched(const std::vector<TrainingStart>& starts, ModelSet& models,
                                int round, std::uint64_t seed,
                                const local::LocalUpdateSettings& settings,
                                const TrainedClient& receive, std::vector<double>& train_loss) {
  auto most = static_cast<std::size_t>(client_batch_);
  if (client_batch_bytes_ > 0) {
    const auto client_bytes =
        kStackedBytesPerFloat * model::flat_state_size(models.working_model());
    most = std::min(most, static_cast<std::size_t>(
                              std::max<std::int64_t>(1, client_batch_bytes_ / client_bytes)));
  }
  const auto capacity = static_cast<int>(std::min(most, starts.size()));
  if (!batched_ || batched_->capacity() < capacity) {
    batched_ =
        std::make_unique<model::ClientBatchedNetwork>(models.working_model(), capacity, device_);
  }
  std::vector<std::size_t> order(starts.size());  // most samples first
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return train_.count(starts[a].i) > train_.count(starts[b].i);
  });
  std::vector<torch::Tensor> results(starts.size());
  for (std::size_t first = 0; first < order.size(); first += static_cast<std::size_t>(capacity)) {
    const auto last = std::min(order.size(), first + static_cast<std::size_t>(capacity));
    train_chunk(starts,
                {order.begin() + static_cast<std::ptrdiff_t>(first),
                 order.begin() + static_cast<std::ptrdiff_t>(last)},
                models, round, seed, settings, results, train_loss);
  }
  for (std::size_t n = 0; n < starts.size(); ++n) {
    deliver(starts[n].i, results[n], settings.gradient_averaging, receive);
  }
}

}  // namespace cflrun::run
