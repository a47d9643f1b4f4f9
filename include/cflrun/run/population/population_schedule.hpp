#pragma once
/// @file
/// Who is in the federation, in which cluster, in every round (issue 45): the ground truth moved by
/// the `--changes` events, and the clients present (joined, not dropped out, within the round
/// deadline). Every rank computes the same schedule from the seeds, so no message is needed, and
/// it does not depend on the rank count; a newcomer's draws come from its own streams.

#include <cstdint>
#include <string>
#include <vector>

#include <cflrun/cli/run_options.hpp>
#include <cflrun/run/population/population_change.hpp>

namespace cflrun::run {

/// One period in which a client of an availability trace is present: rounds [first, last],
/// 1-based, inclusive.
struct TracePeriod {
  int client = 0;
  int first = 1;
  int last = 1;
};

/// Reads an availability trace: a text file of `client,first_round,last_round` lines (1-based,
/// inclusive rounds; blank lines and lines starting with '#' skipped). A client named in the trace
/// is present only in its periods; a client not named is always present.
/// @param num_clients  M, clients of the run (ids [0, M)).
/// @throws DataError naming the file and line if the file cannot be read, a line is not three
///         whole numbers, a client is not in [0, M), first > last or first < 1, or two periods of a
///         client overlap.
std::vector<TracePeriod> read_availability_trace(const std::string& path, int num_clients);

/// How long clients are present and away (a two-state Markov chain per client, FedScale-style
/// availability): each round a present client leaves with probability 1 / mean_on, an away one
/// comes back with probability 1 / mean_off, so period lengths are geometric with these means (in
/// rounds). Round 1's state is drawn from the chain's stationary distribution.
struct AvailabilityPeriods {
  double mean_on = 0.0;   ///< mean rounds present, >= 1; 0 = periods off.
  double mean_off = 0.0;  ///< mean rounds away, >= 1.
  /// Whether periods are in force (mean_on > 0).
  bool enabled() const { return mean_on > 0.0; }
};

/// Parses `--availability-periods "on=20 off=5"` ("" = off).
/// @throws ConfigError if a key is not on or off, a value is not a number >= 1, or one is missing.
AvailabilityPeriods parse_availability_periods(const std::string& text);

/// The distribution of the clients' speed factors (work per simulated second relative to a
/// speed-1 client).
struct SpeedDistribution {
  /// equal: every speed 1; log-normal: exp(a z), z standard normal; uniform: in [a, b].
  enum class Kind { kEqual, kLogNormal, kUniform } kind = Kind::kEqual;
  double a = 0.0;  ///< log-normal: sigma (median 1); uniform: the lowest speed, > 0.
  double b = 0.0;  ///< uniform: the highest speed, >= a.
};

/// Parses `--client-speeds`: "equal" (every client speed 1), "lognormal SIGMA" (exp(SIGMA z), z
/// standard normal, SIGMA >= 0) or "uniform LOW HIGH" (0 < LOW <= HIGH).
/// @throws ConfigError naming the accepted forms otherwise.
SpeedDistribution parse_speed_distribution(const std::string& text);

/// Stragglers: a client's local update takes steps x step_seconds / speed simulated seconds; one
/// past the round deadline is dropped from the round, or sends the steps it finished (FedProx,
/// Li et al. 2020, Sec. 3: partial work of stragglers; the system heterogeneity model of FedScale,
/// Lai et al. 2022, per-client compute speeds).
struct StragglerSpec {
  SpeedDistribution speeds;       ///< each client's speed factor, drawn once from --seed.
  double deadline_seconds = 0.0;  ///< simulated seconds a round waits; 0 = no deadline.
  double step_seconds = 0.1;      ///< simulated seconds of one mini-batch step at speed 1, > 0.
  /// A client past the deadline sends the steps it finished (floor(deadline x speed /
  /// step_seconds), at least 1) instead of being dropped.
  bool partial_work = false;
};

/// Everything that makes a population change, with the sizes it applies to.
struct PopulationSpec {
  int clusters = 1;             ///< K, clusters at round 1.
  int clients_per_cluster = 1;  ///< clients per initial cluster, and per appearing cluster.
  int rounds = 1;               ///< T.
  std::uint64_t seed = 1;       ///< --seed: availability and speeds.
  std::uint64_t data_seed = 1;  ///< the data seed: which clients a change moves.
  std::vector<PopulationChange> changes;
  double dropout = 0.0;  ///< probability a client is away in a round, in [0, 1).
  AvailabilityPeriods periods;
  std::vector<TracePeriod> trace;
  StragglerSpec stragglers;

  /// Whether anything changes: events, dropout, periods, a trace or a deadline.
  bool changing() const;
  /// Clients of the run: K x clients_per_cluster plus clients_per_cluster per appear event.
  int num_clients() const;
  /// Distributions beyond the K initial clusters that the events introduce (shift, appear, split),
  /// numbered K, K + 1, ... in the order they take effect (by round; one round's in the order
  /// written).
  int new_distributions() const;
  /// The number of each event's new distribution (see new_distributions), -1 for events without
  /// one; [changes.size()].
  std::vector<int> new_distribution_ids() const;
  /// The cluster of each client beyond the K x clients_per_cluster initial ones (the clients of
  /// appearing clusters, clients_per_cluster per appear event, in the order they take effect).
  std::vector<int> extra_client_clusters() const;
};

/// The option of `options` that makes clients away in some rounds, as "flag value" (--dropout,
/// --availability-periods, --availability-trace, --round-deadline, or --changes with an appear
/// event, whose clients are away before they join); "" if none.
std::string absence_option(const cli::RunOptions& options);

/// The population's sizes, seeds and --changes events of a run's options, without availability
/// or stragglers (what the data partition needs: new distributions, appearing clients).
/// @throws ConfigError as parse_population_changes.
PopulationSpec population_changes_spec(const cli::RunOptions& options);

/// The population of a run's options: --changes, --dropout, --availability-periods,
/// --availability-trace (read here), --client-speeds, --round-deadline and --step-seconds, with
/// --clusters, --clients-per-cluster, --rounds and the seeds.
/// @throws ConfigError as parse_population_changes, parse_availability_periods and
///         parse_speed_distribution; DataError as read_availability_trace.
PopulationSpec population_spec(const cli::RunOptions& options);

/// The ground truth and presence of every client in every round.
class PopulationSchedule {
 public:
  /// Applies the changes of `spec` round by round (events of one round in the order written).
  /// A drift by fraction draws round(fraction x joined clients) clients and, for each, a cluster
  /// among the other current clusters, from the (data seed, kPopulationChange, event) stream; a
  /// split draws round(fraction x cluster size) of the cluster's clients from the same stream.
  /// @param local_steps  [M] mini-batch steps of each client's local update (stragglers); may be
  ///                     empty when there is no deadline.
  /// @throws ConfigError naming --changes and the event if a round exceeds --rounds, a cluster
  ///         holds no clients at that round (unknown cluster), a listed client does not exist or
  ///         has not joined, or a drift has fewer than two clusters to move between; naming
  ///         --dropout if it is outside [0, 1); naming the round if no client is present in it.
  PopulationSchedule(const PopulationSpec& spec, const std::vector<std::int64_t>& local_steps);

  /// Clients M of the run (appearing clients included).
  int num_clients() const { return num_clients_; }
  /// Ground-truth cluster of every client at round `round` (0-based), [M]; a client that has not
  /// joined yet holds the cluster it joins.
  const std::vector<int>& truth(int round) const;
  /// 1 for every client present at round `round` (0-based), else 0, [M].
  const std::vector<int>& available(int round) const;
  /// The 1-based rounds at which an event takes effect, increasing, without repeats.
  const std::vector<int>& change_rounds() const { return change_rounds_; }
  /// Clients present at round `round` (0-based) among `clients` (increasing ids, kept in order).
  std::vector<int> present_among(const std::vector<int>& clients, int round) const;
  /// Clients in the initial clusters: K x clients_per_cluster (appearing clients come after).
  int initial_clients() const { return initial_clients_; }
  /// Speed factor of every client, [M] (1 without --client-speeds).
  const std::vector<double>& speeds() const { return speeds_; }
  /// Mini-batch steps each client may take in a local update, [M]: 0 = its whole update; under
  /// partial work, the steps a client past the deadline finishes by then.
  const std::vector<std::int64_t>& step_limits() const { return step_limits_; }

 private:
  void require_someone_present() const;

  int num_clients_ = 0;
  int initial_clients_ = 0;
  std::vector<std::vector<int>> truth_;      // [T][M]
  std::vector<std::vector<int>> available_;  // [T][M]
  std::vector<int> change_rounds_;
  std::vector<double> speeds_;
  std::vector<std::int64_t> step_limits_;  // [M]
};

}  // namespace cflrun::run
