#include <cflrun/algo/pacfl.hpp>

#include <algorithm>
#include <map>
#include <numeric>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/cluster/principal_angles.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

torch::Tensor rows_and_columns(const torch::Tensor& matrix, const std::vector<int>& ids) {
  const auto index =
      torch::tensor(std::vector<std::int64_t>(ids.begin(), ids.end()), torch::kInt64);
  return matrix.index_select(0, index).index_select(1, index);
}

constexpr const char* kAfterUpdateScore = "after_update_score";

/// The PACFL code's metric: a client is scored with its own model right after its local update.
class ScoredAfterLocalUpdate : public ClientProcedure {
 public:
  /// train() and evaluate() touch only the client's view (its memory) and its model.
  bool runs_concurrently() const override { return true; }

  double train(LocalClient& client, model::Network& model,
               const local::LocalUpdateSettings& settings, const AlgorithmState& payload) override {
    const double loss = ClientProcedure::train(client, model, settings, payload);
    const local::Score score =
        local::score(model, client.objective, client.test_inputs, client.test_targets);
    (*client.memory)[kAfterUpdateScore] =
        torch::tensor({score.accuracy, score.loss}, torch::kFloat64);
    return loss;
  }

  ClientScore evaluate(LocalClient& client, model::Network& model,
                       const AlgorithmState& payload) override {
    const auto kept = client.memory->find(kAfterUpdateScore);
    if (kept == client.memory->end()) {
      return ClientProcedure::evaluate(client, model, payload);
    }
    return kept_score(kept->second);
  }

  std::string not_batched() const override { return ""; }

  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& payload) override {
    const auto losses = standard_train_batched(batch, network, settings);
    const auto scores = ClientProcedure::evaluate_batched(batch, network, payload);
    for (std::size_t c = 0; c < scores.size(); ++c) {
      (*batch.clients[c]->memory)[kAfterUpdateScore] =
          torch::tensor({scores[c].accuracy, scores[c].loss}, torch::kFloat64);
    }
    return losses;
  }

  std::vector<ClientScore> evaluate_batched(ClientBatch& batch,
                                            model::ClientBatchedNetwork& network,
                                            const AlgorithmState& payload) override {
    auto scores = ClientProcedure::evaluate_batched(batch, network, payload);
    for (std::size_t c = 0; c < scores.size(); ++c) {
      const auto kept = batch.clients[c]->memory->find(kAfterUpdateScore);
      if (kept != batch.clients[c]->memory->end()) {
        scores[c] = kept_score(kept->second);
      }
    }
    return scores;
  }

 private:
  /// The score kept in memory by train(): [accuracy, loss].
  static ClientScore kept_score(const torch::Tensor& kept) {
    const auto values = kept.accessor<double, 1>();
    return {values[0], values[1]};
  }
};

/// PACFL Alg. 1 line 8, the client side: the client's data signature, flattened row-major.
class DataSignature : public ClientStatistic {
 public:
  /// @param classes  C for per-label signatures, 0 for one signature of all the client's data.
  /// @param floats   floats of one signature (Pacfl::signature_floats).
  DataSignature(int vectors, int classes, std::int64_t floats)
      : vectors_(vectors), classes_(classes), floats_(floats) {}
  std::int64_t length(int /*num_models*/, std::int64_t /*state_size*/) const override {
    return floats_;
  }
  StatisticInput input() const override { return StatisticInput::kNothingNew; }

  std::vector<double> compute(std::vector<LocalClient>& clients,
                              ClientServices& /*services*/) override {
    std::vector<double> rows;
    for (const auto& client : clients) {
      const auto inputs = client.train_inputs.to(torch::kCPU);
      const auto signature =
          (classes_ > 0 ? cluster::per_label_data_signature(
                              inputs, client.train_targets.to(torch::kCPU), vectors_, classes_)
                        : cluster::data_signature(inputs, vectors_))
              .contiguous();
      rows.insert(rows.end(), signature.data_ptr<double>(),
                  signature.data_ptr<double>() + signature.numel());
    }
    return rows;
  }

 private:
  int vectors_;
  int classes_;
  std::int64_t floats_;
};

}  // namespace

void PacflOptions::visit(core::OptionVisitor& v) {
  v.option(
      "pacfl-vectors", vectors,
      "pacfl: p, left singular vectors of each client's data matrix sent as its signature (count)",
      core::Range::at_least(1));
  v.option("pacfl-signature", signature,
           "pacfl: client (Alg. 1: p singular vectors of all the client's data) | per_label "
           "(official code: p per label the client holds, stacked)",
           kSignatureScopeWords);
  v.option("pacfl-proximity", proximity,
           "pacfl: smallest (Eq. 2, smallest principal angle) | sum (Eq. 3, sum of the principal "
           "angles) | entrywise (official code: smallest angle between two signature columns)",
           kProximityWords);
  v.option(
      "pacfl-beta", beta,
      "pacfl: hierarchical clustering merges clusters while their distance is <= beta (degrees)",
      core::Range::at_least(0.0));
  v.option("pacfl-evaluation", evaluation,
           "pacfl: cluster_model (each client's cluster model, as every algorithm) | "
           "after_local_update (the PACFL code's metric: each client's own model right after its "
           "last local update, before averaging)",
           kPacflEvaluationWords);
  v.option("pacfl-clusters", clusters,
           "pacfl: cluster into exactly this many clusters instead of using beta (0 = beta)",
           core::Range::at_least(0));
}

Pacfl::Pacfl(const PacflOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      seen_(static_cast<std::size_t>(context.num_clients), 0) {
  if (options.clusters > context.num_clients) {
    throw ConfigError(
        "--pacfl-clusters must be between 0 (use --pacfl-beta) and the number of clients, " +
        std::to_string(context.num_clients) + ", but got " + std::to_string(options.clusters));
  }
  if (options.signature == SignatureScope::kPerLabel && context.num_classes == 0) {
    throw ConfigError(
        "--pacfl-signature per_label needs labelled classes; use --pacfl-signature client for data "
        "without classes (regression, autoencoders)");
  }
}

int Pacfl::signature_classes() const {
  return options_.signature == SignatureScope::kPerLabel ? context_.num_classes : 0;
}

std::int64_t Pacfl::signature_columns() const {
  return std::int64_t{options_.vectors} * std::max(signature_classes(), 1);
}

std::int64_t Pacfl::signature_floats() const { return context_.sample_size * signature_columns(); }

std::vector<ClientQuery> Pacfl::set_up_queries(const std::vector<int>& initial) {
  initial_ = initial;
  std::vector<int> everyone(static_cast<std::size_t>(context_.num_clients));
  std::iota(everyone.begin(), everyone.end(), 0);
  return {ClientQuery{QueryKind::kClientStatistics, everyone}};
}

void Pacfl::set_up(const std::vector<QueryAnswer>& answers) {
  const auto& values = answers.at(0).values;
  const auto m = static_cast<std::int64_t>(context_.num_clients);
  const auto p = signature_columns();
  if (values.dim() != 2 || values.size(0) != m || values.size(1) != signature_floats()) {
    throw ShapeError(
        "pacfl: expected one signature of d x p = " + std::to_string(context_.sample_size) + " x " +
        std::to_string(p) + " floats per client, [" + std::to_string(m) + ", " +
        std::to_string(signature_floats()) + "], but got " + c10::str(values.sizes()));
  }
  cluster_signatures(values.view({m, context_.sample_size, p}), initial_);
}

std::vector<int> Pacfl::cluster_signatures(const torch::Tensor& signatures,
                                           const std::vector<int>& initial) {
  if (signatures.dim() != 3 || signatures.size(0) != context_.num_clients) {
    throw ConfigError("pacfl: expected one signature per client, [" +
                      std::to_string(context_.num_clients) + ", d, p], but got " +
                      c10::str(signatures.sizes()));
  }
  proximity_ = cluster::proximity_matrix(signatures, options_.proximity);
  const auto labels =
      cluster::hierarchical_clustering(rows_and_columns(proximity_, initial), options_.beta,
                                       std::min<int>(options_.clusters, initial.size()));
  cluster_.assign(static_cast<std::size_t>(context_.num_clients), -1);
  for (std::size_t i = 0; i < initial.size(); ++i) {
    cluster_[static_cast<std::size_t>(initial[i])] = labels[i];
  }
  num_clusters_ = std::max(1, *std::max_element(cluster_.begin(), cluster_.end()) + 1);
  return cluster_;
}

int Pacfl::place_newcomer(int client, const std::vector<int>& newcomers) {
  std::vector<int>
      members;  // old clients, then the newcomers (PME: A_old extended by the new rows)
  for (int c = 0; c < context_.num_clients; ++c) {
    if (cluster_[static_cast<std::size_t>(c)] >= 0) {
      members.push_back(c);
    }
  }
  const auto old_count = members.size();
  members.insert(members.end(), newcomers.begin(), newcomers.end());
  const auto labels =
      cluster::hierarchical_clustering(rows_and_columns(proximity_, members), options_.beta);
  const auto at = std::find(members.begin(), members.end(), client) - members.begin();
  std::map<int, int> votes;  // old cluster -> old clients sharing the newcomer's new cluster
  for (std::size_t i = 0; i < old_count; ++i) {
    if (labels[i] == labels[static_cast<std::size_t>(at)]) {
      ++votes[cluster_[static_cast<std::size_t>(members[i])]];
    }
  }
  if (!votes.empty()) {
    return std::max_element(votes.begin(), votes.end(),
                            [](auto a, auto b) { return a.second < b.second; })
        ->first;
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
  signatures_this_round_ = 0;
  for (int client : participants) {
    models.push_back(cluster_[static_cast<std::size_t>(client)]);
    signatures_this_round_ += 1 - seen_[static_cast<std::size_t>(client)];
    seen_[static_cast<std::size_t>(client)] = 1;
  }
  return hard_plan(participants, models, num_clusters_, context_.train_samples);
}

RoundTraffic Pacfl::traffic(const RoundFacts& facts) const {
  constexpr std::int64_t kFloatBytes = 4;
  auto traffic = round_traffic(facts);
  traffic.received += signatures_this_round_ * signature_floats() * kFloatBytes;
  return traffic;
}

AlgorithmState Pacfl::state() const {
  return {{"cluster", torch::tensor(std::vector<std::int64_t>(cluster_.begin(), cluster_.end()),
                                    torch::kInt64)},
          {"proximity", proximity_},
          {"seen", torch::tensor(seen_, torch::kInt64)}};
}

void Pacfl::restore(const AlgorithmState& state) {
  const auto m = static_cast<std::int64_t>(context_.num_clients);
  const auto cluster = state_tensor(state, kName, "cluster", {m}).contiguous();
  cluster_.assign(cluster.data_ptr<std::int64_t>(), cluster.data_ptr<std::int64_t>() + m);
  proximity_ = state_tensor(state, kName, "proximity", {m, m}).clone();
  const auto seen = state_tensor(state, kName, "seen", {m}).to(torch::kInt64).contiguous();
  seen_.assign(seen.data_ptr<std::int64_t>(), seen.data_ptr<std::int64_t>() + m);
  num_clusters_ = std::max(1, *std::max_element(cluster_.begin(), cluster_.end()) + 1);
}

ClientSide Pacfl::client_side() const {
  auto signature =
      std::make_shared<DataSignature>(options_.vectors, signature_classes(), signature_floats());
  if (options_.evaluation != PacflEvaluation::kAfterLocalUpdate) {
    return {nullptr, signature};
  }
  return {std::make_shared<ScoredAfterLocalUpdate>(), signature};
}

}  // namespace cflrun::algo
