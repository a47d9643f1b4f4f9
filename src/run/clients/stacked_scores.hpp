#pragma once
// Private to src/run/clients: scoring every hosted client in stacked forward passes (one per
// model) for procedures that score a model as it is (algo::ClientProcedure::scores_as_is).

#include <vector>

#include <cflrun/run/clients/client_group.hpp>

namespace cflrun::run::detail {

/// Each hosted client's accuracy and loss on `samples` (its test samples, clients.test(), for the
/// evaluation; its training samples, clients.train(), for --train-accuracy) under its assigned
/// model (NaN for -1): each model's samples in chunks of local::eval_chunk rows, work items of
/// kChunksPerItem chunks on the executor's threads where it has them; the per-sample scores are
/// summed per client in sample order afterwards, so the result does not depend on how the items
/// are spread.
/// @param assignment  [M] model of every client (global ids), or -1.
ClientEvaluation scores_by_assignment(const HostedClients& clients, ClientExecutor& executor,
                                      const std::vector<int>& assignment, ModelSet& models,
                                      const StackedSamples& samples);

/// Each hosted client's test accuracy and loss on its local model (FedSoft's personalised models).
ClientEvaluation scores_of_local_models(const HostedClients& clients, ModelSet& models);

}  // namespace cflrun::run::detail
