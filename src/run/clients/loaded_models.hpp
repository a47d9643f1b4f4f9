#pragma once
// Private to src/run/clients: the K models as the executor's threads hold them while scoring
// (the loss query, the evaluation), one inference forward per thread and model.

#include <deque>
#include <memory>
#include <mutex>

#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/inference_forward.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run::detail {

/// Scoring chunks (local::eval_chunk rows each) per work item of the loss query and the
/// evaluation on the executor's threads.
constexpr std::int64_t kChunksPerItem = 4;

/// A thread's model while scoring: which of the K models it holds, and its inference forward
/// (built once per model, not per work item: a frozen module costs milliseconds to build).
struct LoadedModel {
  model::Network* network = nullptr;
  int j = -1;
  std::unique_ptr<model::InferenceForward> forward;
};

/// The loaded models of the executor's threads, one per network it hands out.
class LoadedModels {
 public:
  explicit LoadedModels(ModelSet& models) : models_(models) {}
  /// Puts the networks back in train mode (an eager inference forward left them in eval mode).
  ~LoadedModels() {
    for (auto& entry : entries_) {
      entry.network->train();
    }
  }
  LoadedModels(const LoadedModels&) = delete;
  LoadedModels& operator=(const LoadedModels&) = delete;

  /// `network` holding model j, and its inference forward.
  model::InferenceForward& holding(model::Network& network, int j) {
    LoadedModel* loaded = nullptr;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      for (auto& entry : entries_) {
        loaded = entry.network == &network ? &entry : loaded;
      }
      if (loaded == nullptr) {
        loaded = &entries_.emplace_back();
        loaded->network = &network;
      }
    }
    if (loaded->j != j) {
      model::load_flat_state(network, models_.states()[j]);
      loaded->forward = std::make_unique<model::InferenceForward>(network);
      loaded->j = j;
    }
    return *loaded->forward;
  }

 private:
  ModelSet& models_;
  std::mutex mutex_;
  std::deque<LoadedModel> entries_;  // a deque: entries stay where they are as it grows
};

}  // namespace cflrun::run::detail
