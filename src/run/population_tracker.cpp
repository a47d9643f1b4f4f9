#include "population_tracker.hpp"

#include <cflrun/core/error.hpp>

namespace cflrun::run::detail {

PopulationTracker::PopulationTracker(const PopulationSpec& spec,
                                     std::shared_ptr<const data::ClientData> data,
                                     const std::vector<std::int64_t>& local_steps)
    : schedule_(spec, local_steps), data_(std::move(data)), hosted_clusters_(data_->true_clusters) {
  if (!spec.changes.empty() && !data_->samples_in) {
    throw ConfigError(
        "--changes moves clients between clusters' data, which this --dataset and "
        "--partition cannot (synthetic data and mixture partitions have no cluster "
        "pools); use an image dataset with a hard --partition, or remove --changes");
  }
  if (schedule_.num_clients() != data_->num_clients()) {
    throw Error("the population has " + std::to_string(schedule_.num_clients()) +
                " clients but the data " + std::to_string(data_->num_clients()) +
                " (an internal error)");
  }
}

std::vector<int> PopulationTracker::present(const std::vector<int>& drawn, int round) const {
  return schedule_.present_among(drawn, round);
}

void PopulationTracker::move_hosted_clients(int round, HostedClients& hosted) {
  const auto& truth = schedule_.truth(round);
  bool moved = false;
  for (int i = 0; i < hosted.size(); ++i) {
    const auto client = static_cast<std::size_t>(hosted.first_client() + i);
    moved = moved || truth[client] != hosted_clusters_[client];
  }
  if (moved) {
    hosted.move_samples(*data_, truth);
    hosted_clusters_ = truth;
  }
}

}  // namespace cflrun::run::detail
