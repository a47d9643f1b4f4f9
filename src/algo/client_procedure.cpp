#include <cflrun/algo/client_procedure.hpp>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {

std::vector<double> ClientProcedure::report(LocalClient& /*client*/, model::Network& /*model*/) { return {}; }

std::vector<double> ClientProcedure::statistics(LocalClient& client, model::Network& /*model*/) {
  throw ConfigError("client " + std::to_string(client.id) + " was asked for statistics its algorithm does not compute");
}

ClientScore ClientProcedure::evaluate(LocalClient& client, model::Network& model, const AlgorithmState& /*payload*/) {
  return local::score(model, client.objective, client.test_inputs, client.test_targets);
}

}  // namespace cflrun::algo
