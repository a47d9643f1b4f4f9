#include <cflrun/algo/pacfl.hpp>

#include <algorithm>
#include <map>

#include <torch/types.h>

#include <cflrun/algo/client_procedure.hpp>
#include <cflrun/cluster/principal_angles.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

torch::Tensor rows_and_columns(const torch::Tensor& matrix, const std::vector<int>& ids) {
  const auto index = torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64);
  return matrix.index_select(0, index).index_select(1, index);
}

constexpr const char* kAfterUpdateScore = "after_update_score";

/// The PACFL code's metric: a client is scored with its own model right after its local update.
class ScoredAfterLocalUpdate : public ClientProcedure {
 public:
  double train(LocalClient& client, model::Network& model, const local::LocalUpdateSettings& settings,
               const AlgorithmState& payload) override {
    const double loss = ClientProcedure::train(client, model, settings, payload);
    const local::Score score = local::score(model, client.objective, client.test_inputs, client.test_targets);
    (*client.memory)[kAfterUpdateScore] = torch::tensor({score.accuracy, score.loss}, torch::kFloat64);
    return loss;
  }

  ClientScore evaluate(LocalClient& client, model::Network& model, const AlgorithmState& payload) override {
    const auto kept = client.memory->find(kAfterUpdateScore);
    if (kept == client.memory->end()) {
      return ClientProcedure::evaluate(client, model, payload);
    }
    const auto values = kept->second.accessor<double, 1>();
    return {values[0], values[1]};
  }
};

}  // namespace

void PacflOptions::visit(core::OptionVisitor& v) {
  v.option("pacfl-vectors", vectors,
           "pacfl: p, left singular vectors of each client's data matrix sent as its signature (count)",
           core::Range::at_least(1));
  v.option("pacfl-signature", signature,
           "pacfl: client (Alg. 1: p singular vectors of all the client's data) | per_label (official code: p "
           "per label the client holds, stacked)",
           {"client", "per_label"});
  v.option("pacfl-proximity", proximity,
           "pacfl: smallest (Eq. 2, smallest principal angle) | sum (Eq. 3, sum of the principal angles) | "
           "entrywise (official code: smallest angle between two signature columns)",
           {"smallest", "sum", "entrywise"});
  v.option("pacfl-beta", beta, "pacfl: hierarchical clustering merges clusters while their distance is <= beta (degrees)",
           core::Range::at_least(0.0));
  v.option("pacfl-evaluation", evaluation,
           "pacfl: cluster_model (each client's cluster model, as every algorithm) | after_local_update (the PACFL "
           "code's metric: each client's own model right after its last local update, before averaging)",
           {"cluster_model", "after_local_update"});
  v.option("pacfl-clusters", clusters, "pacfl: cluster into exactly this many clusters instead of using beta (0 = beta)",
           core::Range::at_least(0));
}

Pacfl::Pacfl(const PacflOptions& options, const AlgorithmContext& context) : options_(options), context_(context) {
  if (options.clusters > context.num_clients) {
    throw ConfigError("--pacfl-clusters must be between 0 (use --pacfl-beta) and the number of clients, " +
                      std::to_string(context.num_clients) + ", but got " + std::to_string(options.clusters));
  }
}

std::vector<int> Pacfl::cluster_signatures(const torch::Tensor& signatures, const std::vector<int>& initial) {
  if (signatures.dim() != 3 || signatures.size(0) != context_.num_clients) {
    throw ConfigError("pacfl: expected one signature per client, [" + std::to_string(context_.num_clients) +
                      ", d, p], but got " + c10::str(signatures.sizes()));
  }
  const auto kind = options_.proximity == "sum"         ? cluster::Proximity::kSumOfAngles
                    : options_.proximity == "entrywise" ? cluster::Proximity::kSmallestEntrywiseAngle
                                                        : cluster::Proximity::kSmallestAngle;
  proximity_ = cluster::proximity_matrix(signatures, kind);
  const auto labels = cluster::hierarchical_clustering(rows_and_columns(proximity_, initial), options_.beta,
                                                       std::min<int>(options_.clusters, initial.size()));
  cluster_.assign(static_cast<std::size_t>(context_.num_clients), -1);
  for (std::size_t i = 0; i < initial.size(); ++i) {
    cluster_[static_cast<std::size_t>(initial[i])] = labels[i];
  }
  num_clusters_ = std::max(1, *std::max_element(cluster_.begin(), cluster_.end()) + 1);
  return cluster_;
}

int Pacfl::place_newcomer(int client, const std::vector<int>& newcomers) {
  std::vector<int> members;  // old clients, then the newcomers (PME: A_old extended by the new rows)
  for (int c = 0; c < context_.num_clients; ++c) {
    if (cluster_[static_cast<std::size_t>(c)] >= 0) {
      members.push_back(c);
    }
  }
  const auto old_count = members.size();
  members.insert(members.end(), newcomers.begin(), newcomers.end());
  const auto labels = cluster::hierarchical_clustering(rows_and_columns(proximity_, members), options_.beta);
  const auto at = std::find(members.begin(), members.end(), client) - members.begin();
  std::map<int, int> votes;  // old cluster -> old clients sharing the newcomer's new cluster
  for (std::size_t i = 0; i < old_count; ++i) {
    if (labels[i] == labels[static_cast<std::size_t>(at)]) {
      ++votes[cluster_[static_cast<std::size_t>(members[i])]];
    }
  }
  if (!votes.empty()) {
    return std::max_element(votes.begin(), votes.end(), [](auto a, auto b) { return a.second < b.second; })->first;
  }
  std::vector<double> sum(static_cast<std::size_t>(num_clusters_), 0.0);
  std::vector<int> count(static_cast<std::size_t>(num_clusters_), 0);
  for (std::size_t i = 0; i < old_count; ++i) {
    const auto k = static_cast<std::size_t>(cluster_[static_cast<std::size_t>(members[i])]);
    sum[k] += proximity_[client][members[i]].item<double>();
    ++count[k];
  }
  int best = 0;
  for (int k = 1; k < num_clusters_; ++k) {
    if (sum[k] / count[k] < sum[best] / count[best]) {
      best = k;
    }
  }
  return best;
}

RoundPlan Pacfl::plan(const RoundInput& input) {
  const auto& participants = input.participants;
  std::vector<int> newcomers;
  for (int client : participants) {
    if (cluster_.at(static_cast<std::size_t>(client)) < 0) {
      newcomers.push_back(client);
    }
  }
  std::vector<int> placed;
  for (int client : newcomers) {
    placed.push_back(place_newcomer(client, newcomers));
  }
  for (std::size_t i = 0; i < newcomers.size(); ++i) {
    cluster_[static_cast<std::size_t>(newcomers[i])] = placed[i];
  }
  std::vector<int> models;
  for (int client : participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
  }
  return hard_plan(participants, models, num_clusters_, context_.train_samples);
}

AlgorithmState Pacfl::state() const {
  return {{"cluster", torch::tensor(std::vector<std::int64_t>(cluster_.begin(), cluster_.end()), torch::kInt64)},
          {"proximity", proximity_}};
}

void Pacfl::restore(const AlgorithmState& state) {
  const auto m = static_cast<std::int64_t>(context_.num_clients);
  const auto cluster = state_tensor(state, kName, "cluster", {m}).contiguous();
  cluster_.assign(cluster.data_ptr<std::int64_t>(), cluster.data_ptr<std::int64_t>() + m);
  proximity_ = state_tensor(state, kName, "proximity", {m, m}).clone();
  num_clusters_ = std::max(1, *std::max_element(cluster_.begin(), cluster_.end()) + 1);
}

std::shared_ptr<ClientProcedure> Pacfl::client_procedure() const {
  if (options_.evaluation != "after_local_update") {
    return nullptr;
  }
  return std::make_shared<ScoredAfterLocalUpdate>();
}

}  // namespace cflrun::algo
