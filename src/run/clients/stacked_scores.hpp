#pragma once
// Private to src/run/clients: scoring every hosted client in stacked forward passes (one per
// model) for procedures that score a model as it is (algo::ClientProcedure::scores_as_is).

#include <vector>

#include <cflrun/run/clients/client_group.hpp>

namespace cflrun::run::detail {

/// Each hosted client's test accuracy and loss on its assigned model (NaN for -1), one stacked
/// forward pass per model over the clients assigned to it.
/// @param assignment  [M] model of every client (global ids), or -1.
ClientEvaluation scores_by_assignment(const HostedClients& clients,
                                      const std::vector<int>& assignment, ModelSet& models);

/// Each hosted client's test accuracy and loss on its local model (FedSoft's personalised models).
ClientEvaluation scores_of_local_models(const HostedClients& clients, ModelSet& models);

}  // namespace cflrun::run::detail
