#pragma once
/// @file
/// Stability detection and the switch to per-cluster FedAvg (CLoVE ICML version, summary 003
/// "Cluster-wise Federated Aggregation + Stability Determination"; official code: early stopping,
/// clove-official-setup.md Sec. 11).

#include <vector>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/comm/communicator.hpp>

namespace cflrun::run {

/// Each rank keeps the assignment history of the clients it hosts, as the clients themselves would:
/// a client is *stable* once the model it trained stayed the same over its last `window` + 1
/// participating rounds (window 2 is close to the official rule, which compares a client's latest
/// assignment with the one two rounds before). Before every round the participants report whether
/// they are stable; once at least `fraction` of them are, the server switches for good: no more
/// loss vectors or clustering, every client keeps training its last model and the server sends
/// each client only that model (plain FedAvg within each cluster).
class StabilityMonitor {
 public:
  /// @param first, end  the hosted clients [first, end) of this rank.
  /// @param window      rounds a client's model must stay unchanged; 0 disables the switch.
  /// @param fraction    share of stable participants that triggers the switch, in (0, 1].
  StabilityMonitor(const comm::Communicator& comm, int first, int end, int window, double fraction);

  /// Whether the switch is enabled (window > 0).
  bool enabled() const { return window_ > 0; }
  /// Whether the run has switched to per-cluster FedAvg.
  bool switched() const { return switch_round_ >= 0; }
  /// 0-based round in which the switch happened (the first round without clustering), or -1.
  int switch_round() const { return switch_round_; }

  /// Collective, before round `round`: the hosted participants report their stability (a
  /// reduction of two counts); if at least `fraction` of all participants are stable the run
  /// switches now. @return switched().
  bool check(int round, const std::vector<int>& participants);

  /// Collective, after the switch: each rank reports the last model of its hosted participants
  /// (-1 for a client that never trained, a newcomer under partial participation).
  /// @return on rank 0: [p] last model per participant, in participant order; elsewhere empty.
  std::vector<int> last_models(const std::vector<int>& participants) const;

  /// Records this round's models of the hosted clients (entries of `assignment`, [M], -1 = absent).
  void record(const std::vector<int>& assignment);

  /// What it keeps across rounds: "stability_last_model", "stability_streak" [hosted] int64 and
  /// "stability_switch_round" [1] int64 (for checkpoints).
  algo::AlgorithmState state() const;
  /// Restores what state() returned. @throws DataError if a tensor is missing or of another shape.
  void restore(const algo::AlgorithmState& state);

 private:
  bool hosts(int client) const { return client >= first_ && client < end_; }

  const comm::Communicator& comm_;
  int first_;
  int end_;
  int window_;
  double fraction_;
  int switch_round_ = -1;
  std::vector<int> last_model_;  // [hosted] last trained model, -1 = never trained
  std::vector<int> streak_;      // [hosted] consecutive participations with last_model_
};

}  // namespace cflrun::run
