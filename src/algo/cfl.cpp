#include <cflrun/algo/cfl.hpp>

#include <limits>
#include <map>

#include <torch/types.h>

#include <cflrun/cluster/bipartition.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kMeanNorm = "/algorithm/cfl_mean_update_norm";
constexpr const char* kMaxNorm = "/algorithm/cfl_max_update_norm";
constexpr const char* kSplit = "/algorithm/cfl_split";
/// The official code's guard against a zero norm in the cosine similarity.
constexpr double kCosineGuard = 1e-12;

torch::Tensor rows_tensor(const std::vector<std::int64_t>& rows) {
  return torch::tensor(rows, torch::kInt64);
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
           {"fresh", "notebook"});
}

Cfl::Cfl(const CflOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      capacity_(options.max_clusters > 0 ? options.max_clusters : context.num_clients),
      cluster_(static_cast<std::size_t>(context.num_clients), 0),
      mean_norm_(static_cast<std::size_t>(capacity_), std::numeric_limits<float>::quiet_NaN()),
      max_norm_(mean_norm_),
      split_(static_cast<std::size_t>(capacity_), 0.0F) {
  if (capacity_ > context.num_clients) {
    throw ConfigError("--cfl-max-clusters must be between 0 (one per client) and the " +
                      std::to_string(context.num_clients) + " clients, but got " +
                      std::to_string(capacity_));
  }
  if (options.solver == "notebook" && context.optimizer != "sgd") {
    throw ConfigError(
        "--cfl-solver notebook is the notebook's SGD with momentum, but --optimizer is " +
        context.optimizer + ": add --optimizer sgd --lr 0.1 --momentum 0.9");
  }
}

std::vector<ExtraDataset> Cfl::extra_datasets() const {
  return {{kMeanNorm, {capacity_}}, {kMaxNorm, {capacity_}}, {kSplit, {capacity_}}};
}

RoundPlan Cfl::plan(const RoundInput& input) {
  std::vector<int> models;
  for (int client : input.participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
  }
  auto plan = hard_plan(input.participants, models, capacity_, context_.train_samples);
  plan.weights = torch::Tensor();  // decided in aggregate(), after the split rule saw the updates
  return plan;
}

bool Cfl::may_split(int round, const std::vector<std::int64_t>& members, double mean_norm,
                    double max_norm) const {
  return round + 1 > options_.warmup_rounds &&
         static_cast<int>(members.size()) >= options_.min_split_size && mean_norm < options_.eps1 &&
         max_norm > options_.eps2 && live_ < capacity_;
}

void Cfl::split(int c, const std::vector<int>& members, const torch::Tensor& member_updates) {
  const auto norms = member_updates.norm(2, /*dim=*/1);
  const auto similarity =
      member_updates.matmul(member_updates.t()) / (norms.outer(norms) + kCosineGuard);
  const auto groups = cluster::complete_linkage_bipartition(-similarity);
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
  std::map<int, std::vector<std::int64_t>>
      rows_of;  // cluster -> rows of `updates`, before any split
  for (std::size_t r = 0; r < trained.size(); ++r) {
    rows_of[cluster_[static_cast<std::size_t>(trained[r])]].push_back(static_cast<std::int64_t>(r));
  }
  const auto norms = updates.norm(2, /*dim=*/1);
  for (const auto& [c, rows] : rows_of) {
    const auto index = rows_tensor(rows);
    std::vector<int> members;
    std::vector<double> samples;
    for (auto r : rows) {
      members.push_back(trained[static_cast<std::size_t>(r)]);
      samples.push_back(
          static_cast<double>(context_.train_samples[static_cast<std::size_t>(members.back())]));
    }
    const auto weights = torch::tensor(samples, torch::kFloat64);
    const auto member_updates = updates.index_select(0, index);
    const double mean_norm = (weights.matmul(member_updates) / weights.sum()).norm().item<double>();
    const double max_norm = norms.index_select(0, index).max().item<double>();
    mean_norm_[static_cast<std::size_t>(c)] = static_cast<float>(mean_norm);
    max_norm_[static_cast<std::size_t>(c)] = static_cast<float>(max_norm);
    if (may_split(input.round, rows, mean_norm, max_norm)) {
      split(c, members, member_updates);
      split_[static_cast<std::size_t>(c)] = 1.0F;
    }
  }
  std::vector<int> models;
  for (int client : input.participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
  }
  auto after = hard_plan(input.participants, models, capacity_, context_.train_samples);
  return {after.weights, after.assignment, live_};
}

ExtraValues Cfl::record(int /*round*/) const {
  return {{kMeanNorm, mean_norm_}, {kMaxNorm, max_norm_}, {kSplit, split_}};
}

AlgorithmState Cfl::state() const {
  return {{"cluster", torch::tensor(std::vector<std::int64_t>(cluster_.begin(), cluster_.end()),
                                    torch::kInt64)},
          {"live", torch::tensor({static_cast<std::int64_t>(live_)}, torch::kInt64)}};
}

void Cfl::restore(const AlgorithmState& state) {
  const auto cluster = state_tensor(state, kName, "cluster", {context_.num_clients}).contiguous();
  cluster_.assign(cluster.data_ptr<std::int64_t>(),
                  cluster.data_ptr<std::int64_t>() + cluster.numel());
  live_ = static_cast<int>(state_tensor(state, kName, "live", {1}).item<std::int64_t>());
}

}  // namespace cflrun::algo
