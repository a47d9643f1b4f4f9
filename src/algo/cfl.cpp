#include <cflrun/algo/cfl.hpp>

#include <array>
#include <limits>
#include <map>
#include <numeric>

#include <torch/types.h>

#include <cflrun/cluster/bipartition.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kMeanNorm = "/algorithm/cfl_mean_update_norm";
constexpr const char* kMaxNorm = "/algorithm/cfl_max_update_norm";
constexpr const char* kSplit = "/algorithm/cfl_split";
constexpr const char* kListings = "/algorithm/cfl_listings";
/// The official code's guard against a zero norm in the cosine similarity.
constexpr double kCosineGuard = 1e-12;

torch::Tensor rows_tensor(const std::vector<std::int64_t>& rows) {
  return torch::tensor(rows, torch::kInt64);
}

/// CFL's bipartition of a cluster: complete linkage on -S, S the cosine similarities of its
/// members' updates [n, P]. [n] 0 or 1, member 0 in group 0.
std::vector<int> bipartition(const torch::Tensor& member_updates) {
  const auto norms = member_updates.norm(2, /*dim=*/1);
  const auto similarity =
      member_updates.matmul(member_updates.t()) / (norms.outer(norms) + kCosineGuard);
  return cluster::complete_linkage_bipartition(-similarity);
}

/// [M] the row of `updates` of every client, -1 for a client that did not train.
std::vector<std::int64_t> row_of_client(const std::vector<int>& trained, int num_clients) {
  std::vector<std::int64_t> row(static_cast<std::size_t>(num_clients), -1);
  for (std::size_t r = 0; r < trained.size(); ++r) {
    row[static_cast<std::size_t>(trained[r])] = static_cast<std::int64_t>(r);
  }
  return row;
}

/// The clients of `list` that trained, and their rows of `updates`.
struct TrainedMembers {
  std::vector<int> clients;
  std::vector<std::int64_t> rows;
};

TrainedMembers trained_members(const std::vector<int>& list,
                               const std::vector<std::int64_t>& row_of) {
  TrainedMembers members;
  for (int client : list) {
    const auto row = row_of[static_cast<std::size_t>(client)];
    if (row >= 0) {
      members.clients.push_back(client);
      members.rows.push_back(row);
    }
  }
  return members;
}

}  // namespace

void CflOptions::visit(core::OptionVisitor& v) {
  v.option("cfl-eps1", eps1,
           "cfl: a cluster splits only while the norm of its mean weight update is below this "
           "(EPS_1; the official notebook: 0.4 for SGD lr 0.1)",
           core::Range::above(0.0));
  v.option("cfl-eps2", eps2,
           "cfl: ... and its largest client update norm is above this (EPS_2; the official "
           "notebook: 1.6)",
           core::Range::above(0.0));
  v.option("cfl-warmup-rounds", warmup_rounds,
           "cfl: no cluster splits in rounds 1 to this (official notebook: 20)",
           core::Range::at_least(0));
  v.option("cfl-min-split-size", min_split_size,
           "cfl: clusters with fewer clients never split (official: 3)", core::Range::at_least(2));
  v.option("cfl-max-clusters", max_clusters,
           "cfl: model slots for clusters (count; 0 = one per client, no limit); a split beyond it "
           "is skipped",
           core::Range::at_least(0));
  v.option("cfl-solver", solver,
           "cfl: the clients' local solver: fresh (a new optimizer of --optimizer per local "
           "update, as every cflrun algorithm) | notebook (the official notebook's, the one its "
           "eps1 0.4 / eps2 1.6 are set for: each client keeps one SGD with momentum for the whole "
           "run, momentum buffer carried across rounds, and its r-th local update steps with lr * "
           "0.99^r; needs --optimizer sgd, the notebook: --lr 0.1 --momentum 0.9)",
           kCflSolverWords);
  v.option("cfl-split-ids", split_ids,
           "cfl: what a split stores: clients (the two parts' client ids, the paper) | positions "
           "(the official notebook's bug: the parts' positions within the split cluster, stored "
           "as client ids, so that from the first split below the root some clients are in two "
           "clusters and others in none; every client keeps its own model, updated by the mean "
           "update of every cluster that lists it, and the ARI leaves unlisted clients out, as "
           "the CLoVE notebook's)",
           kSplitIdsWords);
}

Cfl::Cfl(const CflOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      capacity_(options.max_clusters > 0 ? options.max_clusters : context.num_clients),
      cluster_(static_cast<std::size_t>(context.num_clients), 0),
      mean_norm_(static_cast<std::size_t>(capacity_), std::numeric_limits<float>::quiet_NaN()),
      max_norm_(mean_norm_),
      split_(static_cast<std::size_t>(capacity_), 0.0F),
      lists_{std::vector<int>(static_cast<std::size_t>(context.num_clients))} {
  std::iota(lists_[0].begin(), lists_[0].end(), 0);
  if (capacity_ > context.num_clients) {
    throw ConfigError("--cfl-max-clusters must be between 0 (one per client) and the " +
                      std::to_string(context.num_clients) + " clients, but got " +
                      std::to_string(capacity_));
  }
  if (options.solver == CflSolver::kNotebook && context.optimizer != local::Solver::kSgd) {
    throw ConfigError(
        "--cfl-solver notebook is the notebook's SGD with momentum, but --optimizer is " +
        core::word_of(context.optimizer, local::kSolverWords) +
        ": add --optimizer sgd --lr 0.1 --momentum 0.9");
  }
}

std::vector<ExtraDataset> Cfl::extra_datasets() const {
  std::vector<ExtraDataset> extra{
      {kMeanNorm, {capacity_}}, {kMaxNorm, {capacity_}}, {kSplit, {capacity_}}};
  if (positions()) {
    extra.push_back({kListings, {context_.num_clients}});
  }
  return extra;
}

RoundPlan Cfl::plan(const RoundInput& input) {
  std::vector<int> models;  // the cluster's model, or (positions) the client's own
  for (int client : input.participants) {
    models.push_back(positions() ? client : cluster_[static_cast<std::size_t>(client)]);
  }
  auto plan = hard_plan(input.participants, models, num_models(), context_.train_samples);
  plan.weights = torch::Tensor();  // decided in aggregate(), after the split rule saw the updates
  return plan;
}

bool Cfl::may_split(int round, const std::vector<std::int64_t>& members, double mean_norm,
                    double max_norm) const {
  return round + 1 > options_.warmup_rounds &&
         static_cast<int>(members.size()) >= options_.min_split_size && mean_norm < options_.eps1 &&
         max_norm > options_.eps2 && live_ < capacity_;
}

bool Cfl::check_split(int round, int c, const std::vector<std::int64_t>& rows,
                      const std::vector<int>& members, const torch::Tensor& member_updates,
                      const torch::Tensor& norms) {
  const auto weights = sample_weights(members);
  const double mean_norm = (weights.matmul(member_updates) / weights.sum()).norm().item<double>();
  const double max_norm = norms.index_select(0, rows_tensor(rows)).max().item<double>();
  mean_norm_[static_cast<std::size_t>(c)] = static_cast<float>(mean_norm);
  max_norm_[static_cast<std::size_t>(c)] = static_cast<float>(max_norm);
  const bool splits = may_split(round, rows, mean_norm, max_norm);
  split_[static_cast<std::size_t>(c)] = splits ? 1.0F : 0.0F;
  return splits;
}

torch::Tensor Cfl::sample_weights(const std::vector<int>& members) const {
  std::vector<double> samples;
  for (int client : members) {
    samples.push_back(
        static_cast<double>(context_.train_samples[static_cast<std::size_t>(client)]));
  }
  return torch::tensor(samples, torch::kFloat64);
}

void Cfl::split(int c, const std::vector<int>& members, const torch::Tensor& member_updates) {
  const auto groups = bipartition(member_updates);
  const int child = live_++;
  for (std::size_t i = 0; i < members.size(); ++i) {
    // groups[0] == 0: the part holding the cluster's smallest client id keeps its model slot.
    cluster_[static_cast<std::size_t>(members[i])] = groups[i] == 0 ? c : child;
  }
}

Aggregation Cfl::aggregate(const RoundInput& input, const RoundPlan& /*plan*/,
                           const std::vector<int>& trained, const torch::Tensor& updates) {
  if (updates.dim() != 2 || updates.size(0) != static_cast<std::int64_t>(trained.size())) {
    throw ShapeError("cfl: expected one update row per trained client, [" +
                     std::to_string(trained.size()) + ", P], but got " + c10::str(updates.sizes()));
  }
  const auto nan = std::numeric_limits<float>::quiet_NaN();
  mean_norm_.assign(static_cast<std::size_t>(capacity_), nan);
  max_norm_.assign(static_cast<std::size_t>(capacity_), nan);
  split_.assign(static_cast<std::size_t>(capacity_), 0.0F);
  if (positions()) {
    return aggregate_lists(input, trained, updates);
  }
  std::map<int, std::vector<int>> members_of;  // cluster -> its trained clients, before any split
  for (int client : trained) {
    members_of[cluster_[static_cast<std::size_t>(client)]].push_back(client);
  }
  const auto row_of = row_of_client(trained, context_.num_clients);
  const auto norms = updates.norm(2, /*dim=*/1);
  for (const auto& [c, clients] : members_of) {
    const auto members = trained_members(clients, row_of);
    const auto member_updates = updates.index_select(0, rows_tensor(members.rows));
    if (check_split(input.round, c, members.rows, members.clients, member_updates, norms)) {
      split(c, members.clients, member_updates);
    }
  }
  std::vector<int> models;
  for (int client : input.participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
  }
  auto after = hard_plan(input.participants, models, capacity_, context_.train_samples);
  Aggregation result;
  result.weights = after.weights;
  result.assignment = after.assignment;
  result.live_models = live_;
  return result;
}

Aggregation Cfl::aggregate_lists(const RoundInput& input, const std::vector<int>& trained,
                                 const torch::Tensor& updates) {
  const auto row_of = row_of_client(trained, context_.num_clients);
  lists_ = split_lists(input.round, row_of, updates);
  Aggregation result;  // no weights: no weighted sums to build and reduce
  result.models = update_form_models(input, row_of, updates);
  result.clustering = notebook_clustering();
  result.live_models = live_;
  return result;
}

std::vector<std::vector<int>> Cfl::split_lists(int round, const std::vector<std::int64_t>& row_of,
                                               const torch::Tensor& updates) {
  const auto norms = updates.norm(2, /*dim=*/1);
  std::vector<std::vector<int>> next;
  for (std::size_t c = 0; c < lists_.size(); ++c) {
    const auto members = trained_members(lists_[c], row_of);
    if (members.rows.empty()) {
      next.push_back(lists_[c]);
      continue;
    }
    const auto member_updates = updates.index_select(0, rows_tensor(members.rows));
    if (!check_split(round, static_cast<int>(c), members.rows, members.clients, member_updates,
                     norms)) {
      next.push_back(lists_[c]);
      continue;
    }
    const auto groups = bipartition(member_updates);
    std::array<std::vector<int>, 2> parts;
    for (std::size_t at = 0; at < groups.size(); ++at) {
      // The notebook's bug: the position within the cluster, not members.clients[at].
      parts[static_cast<std::size_t>(groups[at])].push_back(static_cast<int>(at));
    }
    next.push_back(parts[0]);
    next.push_back(parts[1]);
    ++live_;
  }
  return next;
}

torch::Tensor Cfl::update_form_models(const RoundInput& input,
                                      const std::vector<std::int64_t>& row_of,
                                      const torch::Tensor& updates) const {
  const auto m = static_cast<std::int64_t>(context_.num_clients);
  if (!input.models.defined() || input.models.dim() != 2 || input.models.size(0) != m ||
      input.models.size(1) != updates.size(1)) {
    throw ShapeError("cfl --cfl-split-ids positions: expected the " + std::to_string(m) +
                     " clients' models [M, P] with P = " + std::to_string(updates.size(1)) +
                     ", but got " +
                     (input.models.defined() ? c10::str(input.models.sizes()) : "none"));
  }
  auto models = input.models.to(torch::kFloat64).clone();
  for (const auto& list : lists_) {
    const auto members = trained_members(list, row_of);
    if (members.rows.empty()) {
      continue;
    }
    const auto weights = sample_weights(members.clients);
    const auto mean =
        weights.matmul(updates.index_select(0, rows_tensor(members.rows))) / weights.sum();
    for (int client : list) {  // a client listed twice gets both clusters' mean updates
      models[client].add_(mean);
    }
  }
  return models.to(torch::kFloat32);
}

std::vector<int> Cfl::notebook_clustering() const {
  std::vector<int> cluster(static_cast<std::size_t>(context_.num_clients), kNotParticipating);
  for (std::size_t l = 0; l < lists_.size(); ++l) {
    for (int client : lists_[l]) {
      cluster[static_cast<std::size_t>(client)] = static_cast<int>(l);  // the last list wins
    }
  }
  return cluster;
}

ExtraValues Cfl::record(int /*round*/) const {
  ExtraValues values{{kMeanNorm, mean_norm_}, {kMaxNorm, max_norm_}, {kSplit, split_}};
  if (positions()) {
    std::vector<float> listings(static_cast<std::size_t>(context_.num_clients), 0.0F);
    for (const auto& list : lists_) {
      for (int client : list) {
        listings[static_cast<std::size_t>(client)] += 1.0F;
      }
    }
    values[kListings] = listings;
  }
  return values;
}

AlgorithmState Cfl::state() const {
  const auto cluster = positions() ? notebook_clustering() : cluster_;
  AlgorithmState state{
      {"cluster",
       torch::tensor(std::vector<std::int64_t>(cluster.begin(), cluster.end()), torch::kInt64)},
      {"live", torch::tensor({static_cast<std::int64_t>(live_)}, torch::kInt64)}};
  if (positions()) {
    auto lists = torch::zeros({capacity_, context_.num_clients}, torch::kInt64);
    for (std::size_t l = 0; l < lists_.size(); ++l) {
      for (int client : lists_[l]) {
        lists[static_cast<std::int64_t>(l)][client] = 1;
      }
    }
    state["lists"] = lists;
  }
  return state;
}

void Cfl::restore(const AlgorithmState& state) {
  const auto cluster = state_tensor(state, kName, "cluster", {context_.num_clients}).contiguous();
  cluster_.assign(cluster.data_ptr<std::int64_t>(),
                  cluster.data_ptr<std::int64_t>() + cluster.numel());
  live_ = static_cast<int>(state_tensor(state, kName, "live", {1}).item<std::int64_t>());
  if (!positions()) {
    return;
  }
  const auto lists =
      state_tensor(state, kName, "lists", {capacity_, context_.num_clients}).contiguous();
  const auto member = lists.accessor<std::int64_t, 2>();
  lists_.assign(static_cast<std::size_t>(live_), {});
  for (int l = 0; l < live_; ++l) {  // the lists are sorted: positions and ids ascend
    for (int client = 0; client < context_.num_clients; ++client) {
      if (member[l][client] != 0) {
        lists_[static_cast<std::size_t>(l)].push_back(client);
      }
    }
  }
}

}  // namespace cflrun::algo
