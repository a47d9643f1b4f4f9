// Clients on several training threads at once (client_executor.hpp, --parallel-clients): each
// client on one thread with one LibTorch intra-op thread, its own copy of the model and its own
// streams, so that what it computes does not depend on the threads.
#include "executors.hpp"

#include "client_rule.hpp"

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {

std::string ThreadedExecutor::describe() const {
  return "on " + std::to_string(threads_.count()) + " threads";
}

std::vector<algo::LocalClient> ThreadedExecutor::views(const std::vector<ClientStart>& starts,
                                                       int round, std::uint64_t seed,
                                                       const torch::Tensor& server_states) {
  std::vector<algo::LocalClient> views;
  for (const auto& start : starts) {
    views.push_back(clients_.view(start.i, round, seed, server_states));
  }
  return views;
}

std::vector<TrainedClient> ThreadedExecutor::train(const TrainingRound& round,
                                                   const std::vector<ClientStart>& starts) {
  auto client_views = views(starts, round.round, round.seed, round.models.states());
  std::vector<TrainedClient> trained(starts.size());
  threads_.run([&] { return round.models.make_network(); }, starts.size(),
               [&](std::size_t n, model::Network& network) {
                 trained[n] =
                     train_client(clients_, procedure_, round, starts[n], client_views[n], network);
               });
  return trained;
}

std::vector<algo::ClientScore> ThreadedExecutor::evaluate(const ScoringRound& round,
                                                          const std::vector<ClientStart>& scored) {
  auto client_views = views(scored, round.round, round.seed, round.models.states());
  std::vector<algo::ClientScore> scores(scored.size());
  threads_.run([&] { return round.models.make_network(); }, scored.size(),
               [&](std::size_t n, model::Network& network) {
                 load_start(clients_, round.models, scored[n], network);
                 scores[n] = score_client(clients_, procedure_, round, scored[n].i, client_views[n],
                                          network);
               });
  return scores;
}

torch::Tensor ThreadedExecutor::standard_updates(ModelSet& models,
                                                 std::vector<algo::LocalClient>& clients,
                                                 const torch::Tensor& start,
                                                 const local::LocalUpdateSettings& settings,
                                                 core::Purpose purpose) {
  std::vector<torch::Tensor> trained(clients.size());
  threads_.run([&] { return models.make_network(); }, clients.size(),
               [&](std::size_t n, model::Network& network) {
                 model::load_flat_state(network, start);
                 network.train();
                 standard_update(clients_, clients[n], network, settings, purpose);
                 trained[n] = model::flatten_state(network);
               });
  return stacked_rows(trained, start);
}

void ThreadedExecutor::for_each_client(ModelSet& models, std::size_t count, bool concurrent,
                                       const Work& work) {
  if (!concurrent) {
    one_after_another(models, count, work);
    return;
  }
  threads_.run([&models] { return models.make_network(); }, count, work);
}

}  // namespace cflrun::run::detail
