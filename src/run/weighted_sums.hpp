#pragma once
// Private to src/run: the per-model weighted sums of the clients' trained results.
#include <cstdint>
#include <vector>

#include <torch/types.h>

namespace cflrun::run {

/// The weighted sums of the clients' results for K models, sum_c W[s, c] x_c for every model s,
/// then the weights' totals sum_c W[s, c]: one float64 vector [K p + K] (the layout
/// ModelSet::average reads), added client by client in the order add() is called. Models whose
/// rows of W are bitwise equal share one accumulator: their sums are the same additions in the same
/// order, so copying the first one's is exact and saves the others' work (FedPAC weights its M
/// bodies alike: O(p) per client instead of O(M p)).
class WeightedSums {
 public:
  /// No models: values() is empty.
  WeightedSums() = default;
  /// @param weights  [K, M] float64 CPU W, M clients.
  /// @param p        floats per result.
  WeightedSums(const torch::Tensor& weights, std::int64_t p);
  /// Adds `result` [p] float64 CPU (client's trained state or part of it) to the sums of every
  /// model s with W[s, client] > 0, and W[s, client] to its total.
  void add(int client, const torch::Tensor& result);
  /// The sums [K p + K], each model's copied from the first model with the same row of W.
  std::vector<double> values() const;

 private:
  torch::Tensor weights_;  // [K, M] float64 contiguous
  std::int64_t p_ = 0;
  std::vector<std::int64_t> distinct_;     // the first model of each distinct row of W
  std::vector<std::int64_t> first_equal_;  // [K] the first model whose row equals model s's
  torch::Tensor sums_;                     // [K p + K] float64, kept for the models in distinct_
};

}  // namespace cflrun::run
