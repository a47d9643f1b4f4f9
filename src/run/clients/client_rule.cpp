#include "client_rule.hpp"

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run::detail {

torch::Tensor start_state(const HostedClients& clients, ModelSet& models,
                          const ClientStart& start) {
  return start.start == algo::kLocalModel ? clients.local_model(start.i)
                                          : models.states()[start.start];
}

void load_start(const HostedClients& clients, ModelSet& models, const ClientStart& start,
                model::Network& model) {
  model::load_flat_state(model, start_state(clients, models, start));
  model.train();
}

TrainedClient train_client(HostedClients& clients, algo::ClientProcedure& procedure,
                           const TrainingRound& round, const ClientStart& start,
                           algo::LocalClient& view, model::Network& model) {
  load_start(clients, round.models, start, model);
  auto settings = round.settings;
  if (view.max_steps > 0) {  // a straggler's partial work
    settings.max_steps = static_cast<int>(view.max_steps);
  }
  if (round.plan.proximal_weights.defined()) {
    settings.proximal.importance = round.plan.proximal_weights[view.id];
  }
  auto& kept = clients.kept_optimizers();
  settings.optimizer = kept.enabled() ? kept.for_update(start.i, model, round.settings) : nullptr;
  clients.seed_dropout(model, start.i, round.round, round.seed, core::Purpose::kLocalUpdate);
  TrainedClient trained;
  trained.loss = procedure.train(view, model, settings, round.plan.payload);
  if (procedure.report_length() > 0) {
    trained.report = procedure.report(view, model);
  }
  // Option I sends the locally trained state, Option II the gradient (CLoVE Alg. 1 lines 11-12).
  trained.result = round.settings.gradient_averaging ? model::flatten_gradients(model)
                                                     : model::flatten_state(model);
  return trained;
}

algo::ClientScore score_client(HostedClients& clients, algo::ClientProcedure& procedure,
                               const ScoringRound& round, int i, algo::LocalClient& view,
                               model::Network& model) {
  clients.seed_dropout(model, i, round.round, round.seed, core::Purpose::kFineTune);
  return procedure.evaluate(view, model, round.payload);
}

double standard_update(HostedClients& clients, const algo::LocalClient& client,
                       model::Network& model, const local::LocalUpdateSettings& settings,
                       core::Purpose purpose) {
  const int i = client.id - clients.first_client();
  clients.seed_dropout(model, i, client.round, client.seed, purpose);
  if (settings.gradient_averaging) {
    return local::local_gradient(model, client.train_inputs, client.train_targets,
                                 settings.batch_size, settings.objective);
  }
  auto generator =
      core::make_torch_generator(client.seed, purpose, static_cast<std::uint64_t>(client.id),
                                 static_cast<std::uint64_t>(client.round));
  return local::local_update(model, client.train_inputs, client.train_targets, settings, generator);
}

}  // namespace cflrun::run::detail
