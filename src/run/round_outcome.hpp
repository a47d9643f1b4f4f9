#pragma once
// Private to src/run: what one round did and how long its phases took, shared by the round driver
// (experiment_state.hpp), which fills it, and the recorder (round_recorder.hpp), which records it.
#include <cflrun/run/experiment.hpp>

#include <array>
#include <chrono>
#include <cstdint>
#include <iterator>
#include <vector>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/client_statistic.hpp>

namespace cflrun::run::detail {

constexpr std::size_t kPhases = std::size(kPhaseNames);
enum Phase : std::size_t { kQuery, kPlan, kLocalUpdate, kAggregate, kEvaluate, kIo };
/// Values each rank reports per hosted client after evaluation: accuracy, test loss, train loss,
/// test samples.
constexpr std::size_t kClientFields = 4;

using Clock = std::chrono::steady_clock::time_point;

/// Seconds since `start`; moves `start` to now.
inline double seconds_since(Clock& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

/// What one round did, kept for the record.
struct RoundOutcome {
  int round = 0;                           // 0-based
  std::vector<int> participants;           // every rank: this round's clients, increasing ids
  std::vector<algo::ClientQuery> queries;  // every rank: the algorithm's queries of this round
  std::vector<algo::QueryAnswer> answers;  // rank 0: their answers
  algo::RoundPlan plan;                    // every rank (weights and models only where needed)
  std::vector<int> newcomers;          // stability switch: participants that answered loss vectors
  std::vector<double> train_loss;      // this rank's hosted clients
  std::vector<double> train_accuracy;  // this rank's hosted clients, --train-accuracy only
  std::vector<bool> trained_models;    // rank 0: [K] whether model s had a non-zero weight
  int live_models = 0;                 // rank 0: Aggregation::live_models of the round (0 = all K)
  torch::Tensor aggregated_models;     // rank 0: Aggregation::models (undefined: weighted averages)
  std::vector<int> clustering;         // rank 0: Aggregation::clustering (empty: the assignment)
  algo::AlgorithmState evaluation_payload;  // rank 0: what receive_reports returned
  std::vector<double>
      weighted_head_sums;  // rank 0, with head weights: K*H head sums then K weights
  std::array<double, kPhases> phase_seconds{};  // every rank: its own clock; rank 0's recorded
};

/// Floats of one client's answer to a query of `kind`: K loss values, or the length of the
/// algorithm's own statistic (0 without one). `state_size` is P, or 0 before the models exist.
std::int64_t answer_length(algo::QueryKind kind, int num_models,
                           const algo::ClientStatistic* statistic, std::int64_t state_size);

}  // namespace cflrun::run::detail
