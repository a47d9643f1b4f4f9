#pragma once
// Private to src/run: a run's changing population on one rank (issue 45): who is present in a
// round, each client's cluster, and the hosted clients' samples moved when their cluster changes.
#include <memory>
#include <vector>

#include <cflrun/cli/run_options.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/run/clients/hosted_clients.hpp>
#include <cflrun/run/population/population_schedule.hpp>

namespace cflrun::run::detail {

/// The schedule of a changing population and the data its moves draw from.
class PopulationTracker {
 public:
  /// @param data         the run's clients' data (kept: moved clients' samples come from it).
  /// @param local_steps  [M] mini-batch steps of each client's local update (the round deadline).
  /// @throws ConfigError as PopulationSchedule's constructor, and if --changes is given for data
  ///         whose clients cannot move between clusters (synthetic data, mixture partitions).
  PopulationTracker(const PopulationSpec& spec, std::shared_ptr<const data::ClientData> data,
                    const std::vector<std::int64_t>& local_steps);

  const PopulationSchedule& schedule() const { return schedule_; }
  /// The clients among `drawn` (increasing ids) present in round `round` (0-based).
  std::vector<int> present(const std::vector<int>& drawn, int round) const;
  /// Moves the samples of the hosted clients whose cluster in round `round` differs from the one
  /// their samples were drawn for (local work only; not collective).
  void move_hosted_clients(int round, HostedClients& hosted);

 private:
  PopulationSchedule schedule_;
  std::shared_ptr<const data::ClientData> data_;
  std::vector<int> hosted_clusters_;  // [M] the clusters the hosted samples were drawn for
};

}  // namespace cflrun::run::detail
