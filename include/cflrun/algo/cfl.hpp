#pragma once
/// @file
/// CFL: Clustered Federated Learning by recursive bipartitioning on the cosine similarity of the
/// clients' weight updates (Sattler, Mueller, Samek 2021, Alg. 1; the authors' code
/// felisat/clustered-federated-learning as cfl-flexcfl-fesem-setup.md Sec. 1 describes it).

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// --cfl-solver: the clients' local solver under CFL.
enum class CflSolver {
  kFresh,     ///< fresh: a new optimizer of --optimizer per local update, as every algorithm.
  kNotebook,  ///< notebook: the official notebook's kept SGD with a decaying learning rate.
};
inline constexpr core::ChoiceWords<CflSolver, 2> kCflSolverWords{
    {{CflSolver::kFresh, "fresh"}, {CflSolver::kNotebook, "notebook"}}};

/// --cfl-split-ids: what a split stores.
enum class SplitIds {
  kClients,    ///< clients: the two parts' client ids (the paper).
  kPositions,  ///< positions: the parts' positions within the split cluster (the notebook's bug).
};
inline constexpr core::ChoiceWords<SplitIds, 2> kSplitIdsWords{
    {{SplitIds::kClients, "clients"}, {SplitIds::kPositions, "positions"}}};

/// CFL's options (--cfl-eps1, --cfl-eps2, --cfl-warmup-rounds, --cfl-min-split-size,
/// --cfl-max-clusters, --cfl-solver, --cfl-split-ids).
struct CflOptions : Options<CflOptions> {
  double eps1 =
      0.4;  ///< a cluster may split once the norm of its mean update is below this (EPS_1).
  double eps2 = 1.6;       ///< ... and its largest client update norm is above this (EPS_2).
  int warmup_rounds = 20;  ///< no split in rounds 1..this (the official notebook's warm-up).
  int min_split_size = 3;  ///< clusters with fewer clients never split (the notebook: more than 2).
  int max_clusters = 0;    ///< capacity of the model slots; 0 = the number of clients (no limit).
  /// fresh (a new optimizer per local update) | notebook (the official notebook's kept SGD with a
  /// decaying learning rate; see Cfl).
  CflSolver solver = CflSolver::kFresh;
  /// clients (a split's two parts are client ids, the paper) | positions (the official notebook's
  /// bug: the parts' positions within the split cluster are stored as client ids; see Cfl).
  SplitIds split_ids = SplitIds::kClients;
  std::string title() const override { return "CFL"; }
  void visit(core::OptionVisitor& v) override;
};

/// The server starts with one cluster of all clients and one model (every model slot starts from
/// the same parameters). Each round every participant trains its cluster's model and sends its
/// update dW_i = W_i - W_cluster; the server computes the cosine similarities S of all updates and,
/// for every cluster c with rounds > warm-up and |c| >= min_split_size, the norm of the
/// sample-weighted mean update and the largest update norm. If the mean norm is below eps1 (the
/// cluster's federated objective is at a stationary point) while some client is still far from
/// one (max norm above eps2), c is split in two by complete-linkage clustering on -S (the
/// official code's AgglomerativeClustering): the part holding c's smallest client id keeps c's
/// model slot, the other part takes the next free slot. Several clusters may split in a round.
/// Every (new) cluster's model is then the sample-weighted average of its members' trained states
/// (Alg. 1: W_c += sum |D_i| / |D_c| dW_i; the children of a split start from the parent model).
///
/// Faithful to the paper where the code departs from it: updates are weighted by sample counts
/// (the code averages them unweighted; the same for equal client sizes), and a split maps the
/// bipartition back to client ids (the official code stores positions within the sub-matrix as
/// ids, which moves wrong clients from the second split on). No separation check of the paper's
/// Sec. III-C, as in the code. The number of live clusters (Aggregation::live_models) grows from 1
/// up to the capacity; a split that would exceed it is skipped.
///
/// The notebook's client-index bug (--cfl-split-ids positions; cfl-flexcfl-fesem-setup.md Sec. 1,
/// "Bug"): the server keeps an ordered list of cluster lists of client ids, and a split replaces
/// list c by its two parts, each stored as the parts' positions within c (0 .. |c|-1) instead of
/// the clients at those positions. From the first split of a cluster other than the root, lists
/// name wrong clients: some clients are listed twice, others not at all. As in the notebook every
/// client then keeps its own model (K = M model slots, client i trains and is scored on slot i),
/// and aggregation is in update form (Aggregation::models): W_i += mean_{j in l} dW_j for every
/// list l that names i, so a client listed twice gets two clusters' mean updates and an unlisted
/// client's model stays frozen. Without a misplaced split this equals the per-cluster average.
/// The recorded ARI is the CLoVE notebook's (Aggregation::clustering): each client's cluster is the
/// last list naming it, and unlisted clients are left out of the ARI. /algorithm/cfl_listings
/// [M] counts the lists naming each client.
///
/// Local solver (--cfl-solver): `fresh` gives every local update a fresh optimizer of --optimizer,
/// as every cflrun algorithm. `notebook` is the official notebook's client
/// (cfl-flexcfl-fesem-setup.md Sec. 1), the solver its EPS_1 = 0.4 and EPS_2 = 1.6 are tuned for:
/// each client makes one SGD with momentum (--optimizer sgd; the notebook: --lr 0.1, --momentum
/// 0.9, no weight decay) at its first update and keeps it for the whole run, so its momentum
/// buffers ([P] floats in all, torch's convention v = m v + g, w -= lr v) carry over from round to
/// round; and its r-th local update (r = 1, 2, ...) steps with lr * 0.99^r (Traits::local_lr_decay,
/// kNotebookLrDecay). The run keeps, decays and checkpoints these optimizers (run::ClientGroup).
class Cfl : public Algorithm {
 public:
  static constexpr const char* kName = "cfl";
  static constexpr const char* kSummary =
      "CFL: recursive bipartitioning by cosine similarity of weight updates (Sattler et al. 2021)";
  using Options = CflOptions;
  /// The notebook's per-call learning-rate factor: `for g in optimizer.param_groups: lr *= 0.99`.
  static constexpr double kNotebookLrDecay = 0.99;
  /// @throws ConfigError if --cfl-max-clusters exceeds the clients, or --cfl-solver notebook
  ///         without --optimizer sgd (the notebook's solver is SGD with momentum).
  Cfl(const CflOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  /// The capacity: --cfl-max-clusters, or M; M (one model per client) with --cfl-split-ids
  /// positions.
  int num_models() const override { return positions() ? context_.num_clients : capacity_; }
  Traits traits() const override {
    const bool notebook = options_.solver == CflSolver::kNotebook;
    return {.clusters_clients = true,
            .keeps_optimizers = notebook,
            .local_lr_decay = notebook ? kNotebookLrDecay : 1.0,
            .same_initial_models = true,
            .no_gradient_averaging = "it clusters the clients' weight updates",
            .no_model_count =
                "it splits clusters until they are congruent and so finds its own "
                "number of models"};
  }
  std::vector<ExtraDataset> extra_datasets() const override;
  /// Every participant trains its cluster's model; the weights wait for the updates.
  RoundPlan plan(const RoundInput& input) override;
  /// The split rule and the per-cluster averaging weights; the new clusters' assignment and the
  /// live clusters after the splits. With --cfl-split-ids positions: zero weights, the new models
  /// (input.models [M, P] plus the listed clusters' mean updates) and the notebook's clustering.
  /// @throws ShapeError if updates is not [trained, P], or (positions) input.models is not [M, P].
  Aggregation aggregate(const RoundInput& input, const RoundPlan& plan,
                        const std::vector<int>& trained, const torch::Tensor& updates) override;
  /// /algorithm/cfl_mean_update_norm, /algorithm/cfl_max_update_norm [K] (NaN for clusters without
  /// updates) and /algorithm/cfl_split [K] (1 for a cluster split this round) of the round's
  /// aggregate(), by cluster (list) index before the round's splits; with --cfl-split-ids
  /// positions also /algorithm/cfl_listings [M] (lists naming each client after them).
  ExtraValues record(int round) const override;
  /// "cluster" [M] int64 (the cluster of every client), "live" [1] int64; with --cfl-split-ids
  /// positions also "lists" [capacity, M] int64 (row l: 1 for the clients list l names).
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  /// Whether cluster c may split this round, from its members' update norms.
  bool may_split(int round, const std::vector<std::int64_t>& members, double mean_norm,
                 double max_norm) const;
  bool positions() const { return options_.split_ids == SplitIds::kPositions; }
  /// Splits cluster c (members = rows of `updates`) by complete linkage on -cosine similarity.
  void split(int c, const std::vector<int>& members, const torch::Tensor& member_updates);
  /// Sets the round's norms and split flag of cluster c (its trained `members`, their `rows` of
  /// the round's updates and those rows, `member_updates`; `norms` [trained] of all updates);
  /// whether it splits.
  bool check_split(int round, int c, const std::vector<std::int64_t>& rows,
                   const std::vector<int>& members, const torch::Tensor& member_updates,
                   const torch::Tensor& norms);
  /// [n] float64 the members' training sample counts.
  torch::Tensor sample_weights(const std::vector<int>& members) const;
  /// aggregate() with --cfl-split-ids positions.
  Aggregation aggregate_lists(const RoundInput& input, const std::vector<int>& trained,
                              const torch::Tensor& updates);
  /// The notebook's lists after this round's splits (positions stored as ids); `row_of` [M] is
  /// each client's row of `updates`, -1 if it did not train.
  std::vector<std::vector<int>> split_lists(int round, const std::vector<std::int64_t>& row_of,
                                            const torch::Tensor& updates);
  /// The new per-client models: input.models plus every list's mean update for its clients.
  torch::Tensor update_form_models(const RoundInput& input, const std::vector<std::int64_t>& row_of,
                                   const torch::Tensor& updates) const;
  /// [M] the CLoVE notebook's cluster of every client (the last list naming it) or
  /// kNotParticipating.
  std::vector<int> notebook_clustering() const;

  CflOptions options_;
  AlgorithmContext context_;
  int capacity_;
  int live_ = 1;
  std::vector<int> cluster_;  // [M] cluster (= model slot) of every client; unused with positions
  std::vector<float> mean_norm_, max_norm_, split_;  // [K] of the last aggregate()
  std::vector<std::vector<int>> lists_;              // positions: the notebook's cluster lists
};

}  // namespace cflrun::algo
