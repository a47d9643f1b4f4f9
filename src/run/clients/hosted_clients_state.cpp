// What the hosted clients keep across rounds as named tensors, for checkpoints: local models,
// kept optimizers and the procedure's per-client memories.
#include <cflrun/run/clients/hosted_clients.hpp>

#include <string>

namespace cflrun::run {
namespace {

constexpr const char* kWho = "client state";
constexpr const char* kMemory = "memory.";  // memory.<hosted index>.<name>

}  // namespace

algo::AlgorithmState HostedClients::state() const {
  algo::AlgorithmState state;
  for (std::size_t i = 0; i < memories_.size(); ++i) {
    for (const auto& [name, tensor] : memories_[i]) {
      state.emplace(kMemory + std::to_string(i) + "." + name, tensor.clone());
    }
  }
  if (has_local_models()) {
    state.emplace("local_models", local_states_.clone());
  }
  if (kept_optimizers_.enabled()) {
    kept_optimizers_.add_state(state);
  }
  return state;
}

void HostedClients::restore(const algo::AlgorithmState& state, model::Network& model,
                            const local::LocalUpdateSettings& settings) {
  clear_memories();
  const std::string prefix = kMemory;
  for (const auto& [name, tensor] : state) {
    if (name.rfind(prefix, 0) == 0) {
      const auto dot = name.find('.', prefix.size());
      memories_.at(std::stoul(name.substr(prefix.size(), dot - prefix.size())))
          .emplace(name.substr(dot + 1), tensor.clone());
    }
  }
  if (has_local_models()) {
    local_states_ = algo::state_tensor(state, kWho, "local_models",
                                       {static_cast<std::int64_t>(size()), local_states_.size(1)})
                        .clone();
  }
  if (kept_optimizers_.enabled()) {
    kept_optimizers_.restore(state, model, settings);
  }
}

}  // namespace cflrun::run
