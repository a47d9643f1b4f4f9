#pragma once
/// @file
/// FeSEM: multi-center federated learning by stochastic expectation maximisation over model
/// centers (Long et al. 2023; the authors' code morningD/FlexCFL, trainer `fesem`, as
/// cfl-flexcfl-fesem-setup.md Sec. 3 describes it).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// --fesem-aggregation: how a center is made of its members' trained models.
enum class CenterAggregation {
  kMean,         ///< mean: the plain mean of the members' models (the paper's M-step).
  kFirstMember,  ///< first_member: one member's, drawn each round (the official Group.train).
};
inline constexpr core::ChoiceWords<CenterAggregation, 2> kCenterAggregationWords{
    {{CenterAggregation::kMean, "mean"}, {CenterAggregation::kFirstMember, "first_member"}}};

/// FeSEM's options (--fesem-aggregation).
struct FeSemOptions : Options<FeSemOptions> {
  /// mean: each center becomes the plain mean of its members' trained models (the paper's M-step);
  /// first_member: the trained model of one member only, drawn at random each round (the official
  /// code's Group.train, whose weight list holds one entry, so only the first member in the
  /// round's random selection order counts).
  CenterAggregation aggregation = CenterAggregation::kMean;
  std::string title() const override { return "FeSEM"; }
  void visit(core::OptionVisitor& v) override;
};

/// K model centers, each from its own random initialisation (--init different); every client
/// keeps its local model w_i (its model after its last local update; the client initial model
/// before its first). Each round, E-step: every participant sends the L2 distances
/// ||w_i - theta_g||_2 of its local model to the K centers (flat states) and joins the nearest
/// center (ties to the lowest index); no fresh training precedes the assignment, as in the code.
/// M-step: each participant trains its center's model, keeps the result as its local model, and
/// the center becomes the mean of its members' trained models (or, with first_member, the trained
/// model of one member drawn from the (seed, kClientSelection, 1, round) stream, the official
/// code's behaviour up to its 1e-5 shrink factor).
/// Centers without members keep their models.
class FeSem : public Algorithm {
 public:
  static constexpr const char* kName = "fesem";
  static constexpr const char* kSummary =
      "FeSEM: EM over K model centers, clients to the nearest center in weight space (Long et al. "
      "2023)";
  using Options = FeSemOptions;
  /// @throws ConfigError if K is not in [1, M] or with gradient averaging.
  FeSem(const FeSemOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  int num_models() const override { return context_.num_models; }
  Traits traits() const override {
    return {.clusters_clients = true,
            .keeps_local_models = true,
            .uses_client_initial_model = true,
            .no_gradient_averaging = "clients keep their trained models"};
  }
  std::vector<ExtraDataset> extra_datasets() const override;
  /// The clients' E-step distances ||w_i - theta_j||_2 of their local models to every center, [K]
  /// each.
  ClientSide client_side() const override;
  /// Every round: the participants' distances to the centers (QueryKind::kClientStatistics).
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  /// @throws ShapeError if the distances are not [m, K].
  RoundPlan plan(const RoundInput& input) override;
  /// /algorithm/fesem_distance [M, K]: the E-step's distances (NaN for absent clients).
  ExtraValues record(int round) const override;

 private:
  /// first_member: keeps one random member's weight per center (row of `weights`).
  void keep_first_members(int round, torch::Tensor& weights) const;

  FeSemOptions options_;
  AlgorithmContext context_;
  std::vector<float> distances_;  // [M * K] of the last plan
};

}  // namespace cflrun::algo
