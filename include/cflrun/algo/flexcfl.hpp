#pragma once
/// @file
/// FlexCFL (FedGroup): grouping by the decomposed cosine similarity of the clients' update
/// directions (Duan et al. 2022; the authors' code morningD/FlexCFL, trainer `fedgroup`, as
/// cfl-flexcfl-fesem-setup.md Sec. 2 describes it).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// FlexCFL's options (--flexcfl-pretrain-steps, --flexcfl-cold-start-scale, --flexcfl-group-lr).
struct FlexCflOptions : Options<FlexCflOptions> {
  int pretrain_steps =
      50;  ///< mini-batch steps of a client's pre-training (official fedgroup.py: 50).
  int cold_start_scale =
      20;  ///< alpha: the cold start clusters min(alpha K, M) clients (official: 20).
  double group_lr = 0.0;  ///< eta of the inter-group aggregation; 0 = off (official default).
  std::string title() const override { return "FlexCFL"; }
  void visit(core::OptionVisitor& v) override;
};

/// K groups (K = --models, or --clusters). Cold start (round 1): min(alpha K, m) of the m clients
/// taking part in round 1 (all of them under full participation, as the code's construction-time
/// sample of all clients) are drawn at random; each pre-trains `pretrain_steps` mini-batch steps
/// from the client initial model and send their update dw_i; the server takes the K leading right
/// singular vectors v_k of the stacked updates dW [n, P] (the official TruncatedSVD of dW^T), the
/// EDC matrix EDC[i, k] = cos(dw_i, v_k), and k-means (10 starts, 20 iterations) on its rows gives
/// the groups. Group g's model is the plain mean of its members' pre-trained models and its
/// direction the plain mean of their updates. A client not yet in a group when it participates (not
/// drawn at the cold start, or a newcomer) pre-trains likewise and joins the group of least cosine
/// dissimilarity (1 - cos(dw, direction_g)) / 2 to the fixed cold-start directions. Each round
/// every participant trains its group's model and each group becomes the sample-weighted average of
/// its members (sum n_i w_i / sum n_i; the official code divides by sum n_i + 1e-5). With group_lr
/// eta > 0, each trained group then moves toward the others: w_g <- (w_g + sum_{j != g} eta /
/// ||w_j|| w_j) / (1 + sum_{j != g} eta / ||w_j||) over the trained groups, simultaneously (the
/// code's inter-group aggregation).
///
/// Departures from the official code: clients are scored on their group's model after the round's
/// aggregation, as every cflrun algorithm (the code scores the group model a client last received,
/// before aggregation); cflrun's partitions are static, so the code's data-shift migration (a
/// client whose label distribution moved by EMD > threshold is cold-started again) never fires and
/// is not implemented; the SVD is exact instead of randomized.
class FlexCfl : public Algorithm {
 public:
  static constexpr const char* kName = "flexcfl";
  static constexpr const char* kSummary =
      "FlexCFL: groups by decomposed cosine similarity of pre-trained update directions (Duan et "
      "al. 2022)";
  using Options = FlexCflOptions;
  /// @throws ConfigError if K is not in [1, M] or with gradient averaging.
  FlexCfl(const FlexCflOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_models; }
  Traits traits() const override {
    return {.clusters_clients = true,
            .uses_client_initial_model = true,
            .no_gradient_averaging = "groups average their members' models"};
  }
  std::vector<ExtraDataset> extra_datasets() const override;
  /// The clients' pre-training: --flexcfl-pretrain-steps mini-batch steps of the local solver from
  /// the client initial model, on the (seed, kWarmUp, client, round) stream; the update, [P] each.
  ClientSide client_side() const override;
  /// Round 1: pre-training updates of every participant (the cold-start sample, drawn from the
  /// (seed, kColdStart) stream, is clustered; the others join by direction); later: of the
  /// participants without a group.
  /// @throws ConfigError if round 1 has fewer participants than groups.
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  /// @throws ShapeError if the pre-training updates are not [n, P].
  RoundPlan plan(const RoundInput& input) override;
  void after_aggregation(int round, const std::vector<bool>& trained,
                         torch::Tensor& models) override;
  /// /algorithm/flexcfl_cosine [M, K]: the cosines the round's grouping used (EDC rows at the cold
  /// start, cosines to the group directions for later cold-started clients), NaN elsewhere.
  ExtraValues record(int round) const override;
  /// "group" [M] int64 (-1: none yet), "directions" [K, P] float64, "cold_started" [1] int64.
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

  /// The cold start's grouping of pre-trained updates (exposed for tests): the EDC matrix
  /// [n, K] of `updates` [n, P] against their K leading right singular vectors.
  static torch::Tensor decomposed_cosine_similarity(const torch::Tensor& updates, int groups);

 private:
  void cold_start(const RoundInput& input, const torch::Tensor& updates,
                  const std::vector<int>& clients, RoundPlan& plan);
  void join_nearest_groups(const torch::Tensor& updates, const std::vector<int>& clients);

  FlexCflOptions options_;
  AlgorithmContext context_;
  std::vector<int> cold_start_sample_;  // the clients clustered at the cold start
  bool cold_started_ = false;
  std::vector<int> group_;     // [M] group of every client, -1 = none yet
  torch::Tensor directions_;   // [K, P] float64: mean pre-training update of each group
  std::vector<float> cosine_;  // [M * K] this round's record
};

}  // namespace cflrun::algo
