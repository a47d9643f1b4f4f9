#include <cflrun/algo/client_procedure.hpp>

#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

double ClientProcedure::train(LocalClient& client, model::Network& model,
                              const local::LocalUpdateSettings& settings,
                              const AlgorithmState& /*payload*/) {
  auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                              static_cast<std::uint64_t>(client.id),
                                              static_cast<std::uint64_t>(client.round));
  return local::local_update(model, client.train_inputs, client.train_targets, settings, generator);
}

std::vector<double> ClientProcedure::report(LocalClient& /*client*/, model::Network& /*model*/) {
  return {};
}

ClientScore ClientProcedure::evaluate(LocalClient& client, model::Network& model,
                                      const AlgorithmState& /*payload*/) {
  return local::score(model, client.objective, client.test_inputs, client.test_targets);
}

}  // namespace cflrun::algo
