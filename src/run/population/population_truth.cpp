#include "population_truth.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::run {
namespace detail {
namespace {

/// Applies one event at a time to the current truth.
class ChangeApplier {
 public:
  ChangeApplier(const PopulationSpec& spec, PopulationTruth& out) : spec_(spec), out_(out) {}

  void apply(const PopulationChange& change, int event, int new_cluster);

 private:
  [[noreturn]] void refuse(const PopulationChange& change, const std::string& problem) const {
    throw ConfigError("--changes: the " + change_kind_name(change.kind) + " at round " +
                      std::to_string(change.round) + " " + problem);
  }
  /// The (data seed, kPopulationChange, event) stream of event `event`'s draws.
  std::mt19937_64 event_engine(int event) const {
    return core::make_engine(spec_.data_seed, core::Purpose::kPopulationChange,
                             static_cast<std::uint64_t>(event));
  }
  /// round(fraction x |clients|) of `clients`, drawn without replacement, in draw order.
  static std::vector<int> drawn_share(std::vector<int> clients, double fraction,
                                      std::mt19937_64& engine);
  std::vector<int> joined(int round) const;
  std::set<int> current_clusters(int round) const;
  std::vector<int> members(int cluster, int round) const;
  void require_cluster(const PopulationChange& change, int cluster) const;
  void drift_fraction(const PopulationChange& change, int event);
  void drift_clients(const PopulationChange& change);
  void split(const PopulationChange& change, int event, int new_cluster);

  const PopulationSpec& spec_;
  PopulationTruth& out_;

 public:
  std::vector<int> truth_;  // [M] the current truth, moved by apply()
};

std::vector<int> ChangeApplier::joined(int round) const {
  std::vector<int> clients;
  for (std::size_t c = 0; c < truth_.size(); ++c) {
    if (out_.join_round[c] <= round) {
      clients.push_back(static_cast<int>(c));
    }
  }
  return clients;
}

std::set<int> ChangeApplier::current_clusters(int round) const {
  std::set<int> clusters;
  for (int c : joined(round)) {
    clusters.insert(truth_[static_cast<std::size_t>(c)]);
  }
  return clusters;
}

std::vector<int> ChangeApplier::members(int cluster, int round) const {
  std::vector<int> clients;
  for (int c : joined(round)) {
    if (truth_[static_cast<std::size_t>(c)] == cluster) {
      clients.push_back(c);
    }
  }
  return clients;
}

void ChangeApplier::require_cluster(const PopulationChange& change, int cluster) const {
  const auto clusters = current_clusters(change.round);
  if (clusters.count(cluster) == 0) {
    std::string names;
    for (int k : clusters) {
      names += (names.empty() ? "" : ", ") + std::to_string(k);
    }
    refuse(change, "names cluster " + std::to_string(cluster) +
                       ", which holds no joined clients then; the clusters at that round are " +
                       names);
  }
}

std::vector<int> ChangeApplier::drawn_share(std::vector<int> clients, double fraction,
                                            std::mt19937_64& engine) {
  const auto count =
      static_cast<std::size_t>(std::lround(fraction * static_cast<double>(clients.size())));
  core::shuffle_prefix(engine, clients, count);
  clients.resize(count);
  return clients;
}

void ChangeApplier::drift_fraction(const PopulationChange& change, int event) {
  auto clients = joined(change.round);
  const auto clusters = current_clusters(change.round);
  if (clusters.size() < 2) {
    refuse(change, "needs at least two clusters to move clients between, but there is one");
  }
  auto engine = event_engine(event);
  for (int client : drawn_share(clients, change.fraction, engine)) {
    auto& cluster = truth_[static_cast<std::size_t>(client)];
    std::vector<int> others;
    std::copy_if(clusters.begin(), clusters.end(), std::back_inserter(others),
                 [&](int k) { return k != cluster; });
    cluster = others[core::uniform_index(engine, others.size())];
  }
}

void ChangeApplier::drift_clients(const PopulationChange& change) {
  require_cluster(change, change.to);
  for (int c : change.clients) {
    if (c >= static_cast<int>(truth_.size()) ||
        out_.join_round[static_cast<std::size_t>(c)] > change.round) {
      refuse(change,
             "names client " + std::to_string(c) + ", which " +
                 (c >= static_cast<int>(truth_.size())
                      ? "does not exist (the run has " + std::to_string(truth_.size()) + " clients)"
                      : "has not joined by then"));
    }
    truth_[static_cast<std::size_t>(c)] = change.to;
  }
}

void ChangeApplier::split(const PopulationChange& change, int event, int new_cluster) {
  require_cluster(change, change.cluster);
  auto engine = event_engine(event);
  for (int client : drawn_share(members(change.cluster, change.round), change.fraction, engine)) {
    truth_[static_cast<std::size_t>(client)] = new_cluster;
  }
}

void ChangeApplier::apply(const PopulationChange& change, int event, int new_cluster) {
  if (change.round > spec_.rounds) {
    refuse(change, "is beyond the run's " + std::to_string(spec_.rounds) +
                       " rounds; lower its round or raise --rounds");
  }
  switch (change.kind) {
    case ChangeKind::kDrift:
      change.clients.empty() ? drift_fraction(change, event) : drift_clients(change);
      return;
    case ChangeKind::kShift:
      require_cluster(change, change.cluster);
      for (int c : members(change.cluster, change.round)) {
        truth_[static_cast<std::size_t>(c)] = new_cluster;
      }
      return;
    case ChangeKind::kMerge:
      require_cluster(change, change.cluster);
      require_cluster(change, change.merged);
      for (int c : members(change.merged, change.round)) {
        truth_[static_cast<std::size_t>(c)] = change.cluster;
      }
      return;
    case ChangeKind::kSplit:
      split(change, event, new_cluster);
      return;
    case ChangeKind::kAppear:  // its clients were given their cluster and join round up front
      return;
  }
}

}  // namespace

std::vector<int> events_by_round(const std::vector<PopulationChange>& changes) {
  std::vector<int> order(changes.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return changes[static_cast<std::size_t>(a)].round < changes[static_cast<std::size_t>(b)].round;
  });
  return order;
}

}  // namespace detail

std::vector<int> PopulationSpec::new_distribution_ids() const {
  std::vector<int> ids(changes.size(), -1);
  int next = clusters;
  for (int e : detail::events_by_round(changes)) {
    if (changes[static_cast<std::size_t>(e)].new_distribution()) {
      ids[static_cast<std::size_t>(e)] = next++;
    }
  }
  return ids;
}

std::vector<int> PopulationSpec::extra_client_clusters() const {
  const auto ids = new_distribution_ids();
  std::vector<int> clusters_of_clients;
  for (int e : detail::events_by_round(changes)) {
    if (changes[static_cast<std::size_t>(e)].kind == ChangeKind::kAppear) {
      clusters_of_clients.insert(clusters_of_clients.end(),
                                 static_cast<std::size_t>(clients_per_cluster),
                                 ids[static_cast<std::size_t>(e)]);
    }
  }
  return clusters_of_clients;
}

namespace detail {

PopulationTruth population_truth(const PopulationSpec& spec) {
  PopulationTruth out;
  ChangeApplier applier(spec, out);
  const int initial = spec.clusters * spec.clients_per_cluster;
  for (int c = 0; c < initial; ++c) {
    applier.truth_.push_back(c / spec.clients_per_cluster);
  }
  out.join_round.assign(static_cast<std::size_t>(initial), 1);
  const auto order = events_by_round(spec.changes);
  const auto new_cluster = spec.new_distribution_ids();
  const auto extra = spec.extra_client_clusters();
  applier.truth_.insert(applier.truth_.end(), extra.begin(), extra.end());
  for (int e : order) {  // the appearing clients join at their event's round
    const auto& change = spec.changes[static_cast<std::size_t>(e)];
    if (change.kind == ChangeKind::kAppear) {
      out.join_round.insert(out.join_round.end(),
                            static_cast<std::size_t>(spec.clients_per_cluster), change.round);
    }
  }
  std::size_t at = 0;
  for (int round = 1; round <= spec.rounds; ++round) {
    bool changed = false;
    for (; at < order.size() && spec.changes[static_cast<std::size_t>(order[at])].round <= round;
         ++at) {
      const int e = order[at];
      applier.apply(spec.changes[static_cast<std::size_t>(e)], e,
                    new_cluster[static_cast<std::size_t>(e)]);
      changed = true;
    }
    if (changed) {
      out.change_rounds.push_back(round);
    }
    out.truth.push_back(applier.truth_);
  }
  if (at < order.size()) {  // an event past the last round
    applier.apply(spec.changes[static_cast<std::size_t>(order[at])], order[at], -1);
  }
  return out;
}

}  // namespace detail
}  // namespace cflrun::run
