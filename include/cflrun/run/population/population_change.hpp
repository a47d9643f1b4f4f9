#pragma once
/// @file
/// Changes of a federation's population over the rounds (issue 45): clients drifting to another
/// cluster's distribution, a cluster's distribution changing, a new cluster appearing, two clusters
/// merging, one splitting. Declared as text (`--changes`), one event per `;`-separated item:
///
///     drift round=30 fraction=0.2          20 % of the joined clients, drawn, each to another
///                                          cluster drawn among the current ones
///     drift round=30 clients=3,7 to=2      clients 3 and 7 to cluster 2's distribution
///     shift round=50 cluster=1             cluster 1's clients to a new distribution (a new label
///                                          permutation, rotation or class set)
///     appear round=40                      a new cluster of --clients-per-cluster new clients
///     merge round=60 clusters=0,3          cluster 3's clients to cluster 0's distribution
///     split round=60 cluster=2 [fraction=0.5]  that share of cluster 2's clients, drawn, to a new
///                                          distribution
///
/// Rounds are 1-based: the event's clients hold their new data from that round on.

#include <string>
#include <vector>

namespace cflrun::run {

/// The kinds of population change (issue 45; not from a paper: the drift scenarios FedDrift and
/// similar studies evaluate one algorithm at a time).
enum class ChangeKind {
  kDrift,   ///< clients move to another current cluster's distribution.
  kShift,   ///< a cluster's clients move to a new distribution together.
  kAppear,  ///< a new cluster of new clients joins.
  kMerge,   ///< one cluster's clients take another's distribution.
  kSplit,   ///< a share of a cluster's clients moves to a new distribution.
};

/// The word of a change kind in `--changes` ("drift", "shift", "appear", "merge", "split").
std::string change_kind_name(ChangeKind kind);

/// One event of `--changes`. Fields an event kind does not use keep their defaults.
struct PopulationChange {
  ChangeKind kind = ChangeKind::kDrift;
  int round = 0;             ///< 1-based round from which the change holds.
  double fraction = -1.0;    ///< drift: share of joined clients; split: share of the cluster.
  std::vector<int> clients;  ///< drift: the clients that move (instead of a fraction).
  int to = -1;               ///< drift with clients: the target cluster.
  int cluster = -1;          ///< shift and split: the cluster; merge: the one that stays.
  int merged = -1;           ///< merge: the cluster whose clients join `cluster`.
  /// Whether the event brings a distribution no cluster had before (shift, appear, split).
  bool new_distribution() const {
    return kind == ChangeKind::kShift || kind == ChangeKind::kAppear || kind == ChangeKind::kSplit;
  }
};

/// Parses the text of `--changes` (grammar in this file's comment); "" gives no events.
/// @return the events in the order written (the schedule applies events of one round in that
///         order).
/// @throws ConfigError naming the event and the fix for an unknown kind or key, a missing or
///         repeated key, a key the kind does not take, a value that is not a number, a round below
///         1, a fraction outside [0, 1], a negative client or cluster, or a drift with both or
///         neither of fraction and clients.
std::vector<PopulationChange> parse_population_changes(const std::string& text);

}  // namespace cflrun::run
