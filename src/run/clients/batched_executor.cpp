// Clients client-batched (client_executor.hpp, --client-batch): up to `capacity` clients train or
// are scored as one model::ClientBatchedNetwork through their procedure's client-batched forms, in
// decreasing order of their training samples so that the clients still training at every step are
// a prefix of the stacked parameters.
#include "executors.hpp"

#include "client_rule.hpp"

#include <algorithm>
#include <numeric>

#include <cflrun/local/local_update.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {
namespace {

/// Bytes one float of a client's flat state takes client-batched: the parameter, its gradient and
/// the optimizer's two moments (Adam).
constexpr std::int64_t kStackedBytesPerFloat = 16;

}  // namespace

std::string BatchedExecutor::describe() const {
  return "client-batched (up to " + std::to_string(capacity_) + " at a time)";
}

model::ClientBatchedNetwork& BatchedExecutor::network(ModelSet& models, std::size_t clients) {
  auto most = static_cast<std::int64_t>(capacity_);
  if (state_bytes_ > 0) {
    const auto client_bytes =
        kStackedBytesPerFloat * model::flat_state_size(models.working_model());
    most = std::min(most, std::max<std::int64_t>(1, state_bytes_ / client_bytes));
  }
  const auto capacity = static_cast<int>(std::min(most, static_cast<std::int64_t>(clients)));
  if (!network_ || network_->capacity() < capacity) {
    network_ = std::make_unique<model::ClientBatchedNetwork>(models.working_model(), capacity,
                                                             clients_.device());
  }
  return *network_;
}

std::vector<std::vector<std::size_t>> BatchedExecutor::chunks(
    const std::vector<ClientStart>& starts, std::int64_t capacity,
    const local::LocalUpdateSettings* training) const {
  const auto count = [&](std::size_t n) { return clients_.train().count(starts[n].i); };
  // A local update's passes (local::local_steps: monotone in the count) must not increase along
  // the chunk; a straggler's step limit may put it behind clients with fewer samples.
  const auto steps = [&](std::size_t n) -> std::int64_t {
    if (training == nullptr) {
      return 0;
    }
    return local::local_steps(count(n), *training, clients_.step_limit(starts[n].i));
  };
  std::vector<std::size_t> order(starts.size());  // most steps, then most samples first
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return steps(a) != steps(b) ? steps(a) > steps(b) : count(a) > count(b);
  });
  std::vector<std::vector<std::size_t>> chunks;
  for (std::size_t first = 0; first < order.size(); first += static_cast<std::size_t>(capacity)) {
    const auto last = std::min(order.size(), first + static_cast<std::size_t>(capacity));
    chunks.emplace_back(order.begin() + static_cast<std::ptrdiff_t>(first),
                        order.begin() + static_cast<std::ptrdiff_t>(last));
  }
  return chunks;
}

algo::ClientBatch BatchedExecutor::batch(std::vector<algo::LocalClient>& views) const {
  algo::ClientBatch batch;
  batch.train_inputs = clients_.train().inputs();
  batch.train_targets = clients_.train().targets();
  batch.test_inputs = clients_.test().inputs();
  batch.test_targets = clients_.test().targets();
  for (auto& view : views) {
    const int i = view.id - clients_.first_client();
    batch.clients.push_back(&view);
    batch.train_offsets.push_back(clients_.train().offset(i));
    batch.test_offsets.push_back(clients_.test().offset(i));
  }
  return batch;
}

void BatchedExecutor::each_chunk(ModelSet& models, int round, std::uint64_t seed,
                                 const std::vector<ClientStart>& starts, const ChunkWork& work,
                                 const local::LocalUpdateSettings* training) {
  if (starts.empty()) {
    return;
  }
  auto& stacked = network(models, starts.size());
  for (const auto& chunk : chunks(starts, stacked.capacity(), training)) {
    std::vector<torch::Tensor> states;
    std::vector<algo::LocalClient> views;
    for (const auto n : chunk) {
      states.push_back(start_state(clients_, models, starts[n]));
      views.push_back(clients_.view(starts[n].i, round, seed, models.states()));
    }
    stacked.load(torch::stack(states));
    auto clients = batch(views);
    work(chunk, clients, stacked);
  }
}

std::vector<TrainedClient> BatchedExecutor::train(const TrainingRound& round,
                                                  const std::vector<ClientStart>& starts) {
  std::vector<TrainedClient> trained(starts.size());
  each_chunk(
      round.models, round.round, round.seed, starts,
      [&](const std::vector<std::size_t>& chunk, algo::ClientBatch& clients,
          model::ClientBatchedNetwork& stacked) {
        begin_updates(round, clients);
        const auto losses =
            procedure_.train_batched(clients, stacked, round.settings, round.plan.payload);
        end_updates(round, clients);
        auto reports = procedure_.report_batched(clients, stacked);
        const auto g = static_cast<int>(chunk.size());
        const auto results =
            round.settings.gradient_averaging ? stacked.gradients(g) : stacked.states(g);
        for (std::size_t c = 0; c < chunk.size(); ++c) {
          auto& client = trained[chunk[c]];
          client.result = results[static_cast<std::int64_t>(c)].to(torch::kFloat32);
          client.loss = losses[c];
          client.report = std::move(reports[c]);
        }
      },
      &round.settings);
  return trained;
}

std::vector<algo::ClientScore> BatchedExecutor::evaluate(const ScoringRound& round,
                                                         const std::vector<ClientStart>& scored) {
  std::vector<algo::ClientScore> scores(scored.size());
  each_chunk(round.models, round.round, round.seed, scored,
             [&](const std::vector<std::size_t>& chunk, algo::ClientBatch& clients,
                 model::ClientBatchedNetwork& stacked) {
               const auto chunk_scores =
                   procedure_.evaluate_batched(clients, stacked, round.payload);
               for (std::size_t c = 0; c < chunk.size(); ++c) {
                 scores[chunk[c]] = chunk_scores[c];
               }
             });
  return scores;
}

void BatchedExecutor::begin_updates(const TrainingRound& round, algo::ClientBatch& batch) {
  auto& kept = clients_.kept_optimizers();
  for (const auto* client : batch.clients) {
    const int i = client->id - clients_.first_client();
    if (round.plan.proximal_weights.defined()) {
      batch.proximal_importance.push_back(round.plan.proximal_weights[client->id]);
    }
    if (kept.enabled()) {
      batch.kept_optimizers.push_back(kept.begin_update(i, round.settings));
    }
  }
}

void BatchedExecutor::end_updates(const TrainingRound& round, const algo::ClientBatch& batch) {
  auto& kept = clients_.kept_optimizers();
  for (std::size_t c = 0; c < batch.kept_optimizers.size(); ++c) {
    kept.end_update(batch.clients[c]->id - clients_.first_client(), batch.kept_optimizers[c],
                    round.models.working_model(), round.settings);
  }
}

torch::Tensor BatchedExecutor::standard_updates(ModelSet& models,
                                                std::vector<algo::LocalClient>& clients,
                                                const torch::Tensor& start,
                                                const local::LocalUpdateSettings& settings,
                                                core::Purpose purpose) {
  std::vector<ClientStart> starts;
  for (const auto& client : clients) {
    starts.push_back({client.id - clients_.first_client(), 0});
  }
  std::vector<torch::Tensor> trained(clients.size());
  if (clients.empty()) {
    return stacked_rows(trained, start);
  }
  auto& stacked = network(models, clients.size());
  for (const auto& chunk : chunks(starts, stacked.capacity())) {
    std::vector<algo::LocalClient> views;
    for (const auto n : chunk) {
      views.push_back(clients[n]);
    }
    const auto g = static_cast<std::int64_t>(chunk.size());
    stacked.load(start.reshape({1, -1}).expand({g, -1}));
    auto batch_of_chunk = batch(views);
    algo::standard_train_batched(batch_of_chunk, stacked, settings, purpose);
    const auto states = stacked.states(static_cast<int>(g));
    for (std::size_t c = 0; c < chunk.size(); ++c) {
      trained[chunk[c]] = states[static_cast<std::int64_t>(c)].to(torch::kFloat32);
    }
  }
  return torch::stack(trained);
}

void BatchedExecutor::for_each_client(ModelSet& models, std::size_t count, bool /*concurrent*/,
                                      const Work& work) {
  one_after_another(models, count, work);
}

}  // namespace cflrun::run::detail
