// Clients one after another on the run's working model (client_executor.hpp).
#include "executors.hpp"

#include "client_rule.hpp"

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {

std::vector<TrainedClient> SerialExecutor::train(const TrainingRound& round,
                                                 const std::vector<ClientStart>& starts) {
  std::vector<TrainedClient> trained;
  for (const auto& start : starts) {
    auto view = clients_.view(start.i, round.round, round.seed, round.models.states());
    trained.push_back(
        train_client(clients_, procedure_, round, start, view, round.models.working_model()));
  }
  return trained;
}

std::vector<algo::ClientScore> SerialExecutor::evaluate(const ScoringRound& round,
                                                        const std::vector<ClientStart>& scored) {
  std::vector<algo::ClientScore> scores;
  for (const auto& start : scored) {
    auto view = clients_.view(start.i, round.round, round.seed, round.models.states());
    auto& model = round.models.working_model();
    load_start(clients_, round.models, start, model);
    scores.push_back(score_client(clients_, procedure_, round, start.i, view, model));
  }
  return scores;
}

torch::Tensor SerialExecutor::standard_updates(ModelSet& models,
                                               std::vector<algo::LocalClient>& clients,
                                               const torch::Tensor& start,
                                               const local::LocalUpdateSettings& settings,
                                               core::Purpose purpose) {
  std::vector<torch::Tensor> trained;
  auto& model = models.working_model();
  for (const auto& client : clients) {
    model::load_flat_state(model, start);
    standard_update(clients_, client, model, settings, purpose);
    trained.push_back(model::flatten_state(model));
  }
  return stacked_rows(trained, start);
}

torch::Tensor stacked_rows(const std::vector<torch::Tensor>& rows, const torch::Tensor& like) {
  return rows.empty() ? torch::empty({0, like.numel()}, torch::kFloat32) : torch::stack(rows);
}

void one_after_another(ModelSet& models, std::size_t count, const ClientExecutor::Work& work) {
  for (std::size_t n = 0; n < count; ++n) {
    work(n, models.working_model());
  }
}

void SerialExecutor::for_each_client(ModelSet& models, std::size_t count, bool /*concurrent*/,
                                     const Work& work) {
  one_after_another(models, count, work);
}

}  // namespace cflrun::run::detail
