#pragma once
/// @file
/// The holdout sets of the source distributions of a mixture partition, on which every model is
/// scored each round (FedSoft Sec. 5: cluster models are judged on holdout data of each source).

#include <vector>

#include <torch/types.h>

#include <cflrun/data/client_data.hpp>
#include <cflrun/model/objective.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// Accuracy and mean loss of every model on every source's holdout set.
struct SourceScores {
  std::vector<float> accuracy;  ///< [K * S] row-major, fraction correct; NaN without labels.
  std::vector<float> loss;  ///< [K * S] row-major, mean per-sample loss (model::per_sample_loss).
};

/// Holds the S holdout sets (data::ClientData::holdout) on the compute device.
class SourceHoldouts {
 public:
  /// Materialises the holdout of every source of `data`; none for a hard partition.
  SourceHoldouts(const data::ClientData& data, model::Objective objective, torch::Device device);

  /// S, the number of sources (0 for a hard partition).
  int size() const { return static_cast<int>(counts_.size(0)); }

  /// Scores every model of `models` on every source (eval mode, no gradients).
  SourceScores evaluate(ModelSet& models) const;

 private:
  model::Objective objective_;
  torch::Tensor inputs_;   // [n, ...sample shape]: every source's holdout, source by source
  torch::Tensor targets_;  // [n]
  torch::Tensor source_;   // [n] int64: the source of each sample
  torch::Tensor counts_;   // [S] float64: holdout samples per source
};

}  // namespace cflrun::run
