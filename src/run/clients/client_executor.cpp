// The choice of a ClientExecutor at set-up (client_executor.hpp).
#include <cflrun/run/clients/client_executor.hpp>

#include "executors.hpp"

#include <cflrun/model/client_batched.hpp>

namespace cflrun::run {
namespace {

/// Why the clients cannot train client-batched ("" if they can).
std::string why_not_batched(const algo::ClientProcedure& procedure,
                            const model::Network& reference) {
  if (!model::ClientBatchedNetwork::supports(reference)) {
    return "the model has no client-batched form";
  }
  if (!procedure.not_batched().empty()) {
    return "the algorithm's clients: " + procedure.not_batched();
  }
  return "";
}

/// Why the clients cannot train on several threads at once ("" if they can).
std::string why_not_threads(const HostedClients& clients, const algo::ClientProcedure& procedure) {
  if (!clients.device().is_cpu()) {
    return "training threads are for the CPU";
  }
  if (!procedure.runs_concurrently()) {
    return "the algorithm's clients must run one after another";
  }
  if (clients.kept_optimizers().enabled()) {
    return "the clients keep their optimizers on the shared working model";
  }
  return "";
}

}  // namespace

std::unique_ptr<ClientExecutor> make_client_executor(HostedClients& clients,
                                                     algo::ClientProcedure& procedure,
                                                     const ExecutionSettings& execution,
                                                     const model::Network& reference,
                                                     std::string& why) {
  why.clear();
  if (execution.client_batch > 1) {
    const auto refused = why_not_batched(procedure, reference);
    if (refused.empty()) {
      return std::make_unique<detail::BatchedExecutor>(clients, procedure, execution.client_batch,
                                                       execution.client_batch_bytes);
    }
    why = "not client-batched: " + refused;
  }
  if (execution.threads > 1) {
    const auto refused = why_not_threads(clients, procedure);
    if (refused.empty()) {
      return std::make_unique<detail::ThreadedExecutor>(clients, procedure, execution.threads);
    }
    why += (why.empty() ? "" : "; ") + ("not on threads: " + refused);
  }
  return std::make_unique<detail::SerialExecutor>(clients, procedure);
}

}  // namespace cflrun::run
