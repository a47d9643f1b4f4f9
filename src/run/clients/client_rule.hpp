#pragma once
// Private to src/run/clients: what one client's work is, whatever runs it (one after another or on
// a training thread): written once here, so that every executor computes the same.

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/run/clients/client_executor.hpp>
#include <cflrun/run/clients/hosted_clients.hpp>

namespace cflrun::run::detail {

/// The flat state hosted client `start.i` starts from: [P] float32 CPU, a row of the server models
/// or its local model. @throws ConfigError for a local model the clients do not keep.
torch::Tensor start_state(const HostedClients& clients, ModelSet& models, const ClientStart& start);

/// Loads `start`'s state into `model` in train mode.
void load_start(const HostedClients& clients, ModelSet& models, const ClientStart& start,
                model::Network& model);

/// The local update of one client (CLoVE Alg. 1 lines 11-12, or its algorithm's own): `model`
/// holding its start state, with its proximal weights and kept optimizer (if any), its dropout
/// masks from its (seed, kLocalUpdate, client, round) stream, trained by procedure.train() on
/// `view`, then reported and flattened (its gradient under gradient averaging).
TrainedClient train_client(HostedClients& clients, algo::ClientProcedure& procedure,
                           const TrainingRound& round, const ClientStart& start,
                           algo::LocalClient& view, model::Network& model);

/// The score of one client: `model` holding the model it is scored on, its dropout masks from its
/// (seed, kFineTune, client, round) stream (Per-FedAvg's fine-tuning step), procedure.evaluate().
algo::ClientScore score_client(HostedClients& clients, algo::ClientProcedure& procedure,
                               const ScoringRound& round, int i, algo::LocalClient& view,
                               model::Network& model);

/// The standard local update of one client on `model` (trained in place): its dropout masks and
/// mini-batches from its (seed, `purpose`, client, round) stream; under gradient averaging its
/// gradient (algo::ClientServices::local_update).
double standard_update(HostedClients& clients, const algo::LocalClient& client,
                       model::Network& model, const local::LocalUpdateSettings& settings,
                       core::Purpose purpose);

}  // namespace cflrun::run::detail
