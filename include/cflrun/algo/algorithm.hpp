#pragma once
/// @file
/// The round protocol every federated algorithm implements. One round (0-based t) on every rank:
///
///  0. Once before round 0, `set_up_queries` / `set_up`: what the server asks of the clients
///     present from the start before any round (PACFL's data signatures); none by default.
///  1. `queries(t)`: the server names what it needs from which clients before it plans the round
///     (loss vectors, or the algorithm's own ClientStatistic); the clients answer.
///  2. `plan(t)`: from the answers the server plans the round (RoundPlan): the model each client
///     belongs to, where each client's local update starts, and the aggregation weights W [K, M].
///  3. The clients run their local updates (run::ClientGroup: each client by its
///  algo::ClientProcedure, algo::StandardClient by default).
///  4. `aggregate(t)`, only for an algorithm that decides after seeing the updates (CFL): the
///     server gets every update and returns W (and may change the assignment).
///  5. The server sets model s to sum_i W[s,i] x_i / sum_i W[s,i] (x_i: client i's trained state,
///     or its gradient under gradient averaging); a model whose row of W is zero keeps its state.
///     An aggregate() may instead return the new models itself (Aggregation::models).
///     `after_aggregation(t)` may then adjust the models (FlexCFL's inter-group aggregation).
///  6. Every client is scored on its assigned model, or on its local model
///  (`evaluates_local_models`).
///
/// The Algorithm object lives on every rank; its option-derived properties (the `const` methods
/// below) are the same everywhere, and the decisions (`queries`, `plan`, `aggregate`, ...) are
/// made on rank 0 only and sent to the other ranks by run::Experiment. Communication, local
/// updates, averaging and recording are shared machinery in cflrun::run. How to add an algorithm:
/// include/cflrun/algo/README.md.

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/round_traffic.hpp>
#include <cflrun/local/solver.hpp>

namespace cflrun::algo {

struct ClientSide;  // client_statistic.hpp

/// What the server can ask clients to compute before it plans a round. Each answer is one row of
/// floats per client.
enum class QueryKind : int {
  kLossVectors =
      1,  ///< [K] mean training loss under every model (CLoVE Alg. 1 lines 5-7; IFCA Alg. 1).
  kClientStatistics,  ///< [L] the algorithm's own statistic (ClientSide::statistic, e.g. FedSoft's
                      ///< importance weights).
};

/// A request for the clients in `clients` to answer `kind`.
struct ClientQuery {
  QueryKind kind = QueryKind::kLossVectors;
  std::vector<int> clients;  ///< client ids, increasing.
};

/// The clients' answers to one query, on rank 0.
struct QueryAnswer {
  ClientQuery query;
  torch::Tensor
      values;  ///< [n, L] float64, row i from query.clients[i] (L = K, or P for warm-up updates).
};

/// Everything an algorithm keeps across rounds, as named tensors (written to and read from
/// checkpoints as a whole; stateless algorithms return none).
using AlgorithmState = std::map<std::string, torch::Tensor>;

/// Entries of RoundPlan::start besides a model index.
inline constexpr int kNoUpdate = -1;  ///< the client does not train this round.
inline constexpr int kLocalModel =
    -2;  ///< it trains its own persistent local model (Algorithm::keeps_local_models).
/// Entry of RoundPlan::assignment for a client that does not take part in the round.
inline constexpr int kNotParticipating = -1;

/// The server's plan of one round.
struct RoundPlan {
  /// [M] the model (cluster) of each client this round, in [0, K), or kNotParticipating. It is the
  /// clustering whose ARI is recorded, the model a client is scored on, and /clients/assignment.
  std::vector<int> assignment;
  /// [M] where each client's local update starts: a model index, kLocalModel or kNoUpdate.
  std::vector<int> start;
  /// [K, M] float64 >= 0, the aggregation weights (hard clustering: the client's sample count in
  /// its model's row; FedSoft: Eq. 6 contributions). Undefined: the algorithm decides them in
  /// aggregate() after seeing the updates.
  torch::Tensor weights;
  /// [M, K] float64: client i's local objective adds (mu/2) sum_s a_is ||w - theta_s||^2 with
  /// mu = proximal_mu() (FedSoft Eq. 4). Undefined: no proximal term.
  torch::Tensor proximal_weights;
  /// [K, P] float32: the server models are replaced by these before the local updates (FlexCFL's
  /// cold start). Undefined: unchanged.
  torch::Tensor models;
  /// [K, M] float64: aggregation weights of the models' heads (model::head_range, the last layer)
  /// when they differ from `weights`, which then set the bodies (FedPAC's classifier
  /// collaboration: every model's body is the FedAvg body, model i's head a combination of the
  /// clients' heads). Undefined: `weights` set the whole state.
  torch::Tensor head_weights;
  /// Named tensors every client receives with the round (the algorithm's ClientProcedure reads
  /// them), e.g. FedProto's global prototypes. Empty: none.
  AlgorithmState payload;
};

/// What aggregate() decides after seeing the round's updates.
struct Aggregation {
  /// [K, M] float64 >= 0, as RoundPlan::weights; undefined when `models` is given (no weighted
  /// sums are built or reduced then).
  torch::Tensor weights;
  std::vector<int>
      assignment;  ///< [M] the clients' models after aggregation; empty keeps the plan's.
  /// The models the algorithm maintains after this round (/rounds/live_models, count), e.g. CFL's
  /// clusters so far; 0 = all num_models().
  int live_models = 0;
  /// [K, P] float32: the models after this round, computed by the algorithm itself from the
  /// updates (update-form aggregation, e.g. the CFL notebook's W_i += mean update of every cluster
  /// that lists client i); `weights` must then be undefined. Undefined: the weighted average of
  /// step 5 above.
  torch::Tensor models;
  /// [M] the clustering whose ARI is recorded when it is not the assignment (the CFL notebook's
  /// cluster lists, whose clients are scored on their own models): a cluster index, or
  /// kNotParticipating for a client no cluster lists, which the ARI leaves out (the CLoVE
  /// notebook's projection of the ground truth onto the listed clients). Empty: the assignment.
  std::vector<int> clustering;
};

/// What the server knows when it plans a round (rank 0).
struct RoundInput {
  int round = 0;                       ///< 0-based t.
  std::vector<int> participants;       ///< M(t), increasing ids (CLoVE Alg. 1 line 2).
  std::vector<QueryAnswer> answers;    ///< one per query of queries(t), in that order.
  torch::Tensor models;                ///< [K, P] float32, the current server models.
  torch::Tensor client_initial_model;  ///< [P] float32, the model every local model starts from.
  std::vector<std::int64_t> train_samples;  ///< [M] n_i, training samples of every client.
};

/// A dataset an algorithm adds to the result file: `path` (e.g. "/algorithm/cfl_max_update_norm")
/// with one row of `shape` per round, float32.
struct ExtraDataset {
  std::string path;
  std::vector<std::int64_t> shape;  ///< per-round shape, e.g. {K} or {M, K}.
};

/// Values of the algorithm's extra datasets for one round: path -> row-major values.
using ExtraValues = std::map<std::string, std::vector<float>>;

/// Facts of a run every algorithm may use (no ground truth).
struct AlgorithmContext {
  int num_clients = 0;                      ///< M.
  int num_models = 0;                       ///< K-hat: --models, or --clusters.
  bool models_given = false;                ///< whether K-hat came from --models (> 0).
  std::vector<std::int64_t> train_samples;  ///< [M] n_i, training samples of every client.
  std::uint64_t seed = 1;                   ///< --seed.
  bool random_first_assignment =
      false;                        ///< --first-assignment random (round 1 assigned at random).
  bool gradient_averaging = false;  ///< --aggregation gradient (Option II).
  double participation = 1.0;       ///< --participation.
  int newcomers = 0;                ///< --newcomers.
  /// The option that makes clients away in some rounds (a changing population, e.g. "dropout
  /// 0.3"); "" = every client answers every round it is drawn. Refused with
  /// Traits::no_partial_participation.
  std::string absences;
  int cluster_layers = 0;                          ///< --cluster-layers (IFCA weight sharing).
  int stable_rounds = 0;                           ///< --stable-rounds (stability switch).
  std::int64_t batch_size = 100;                   ///< --batch-size.
  local::Solver optimizer = local::Solver::kAdam;  ///< --optimizer: the clients' local solver.
  int num_classes = 0;  ///< classes of the labels (0 for regression/unsupervised).
  bool classifier_with_head =
      false;  ///< the model has a body/head split (model::has_head) and labels.
  int feature_size =
      0;  ///< d, the body's output size (model::Network::features), 0 without a head.
  std::int64_t sample_size = 0;  ///< floats of one input sample (the product of its shape).

  /// For the algorithms that split the model at its head (FedProto, FedPAC).
  /// @throws ConfigError naming `algorithm` and the classifiers with a head (the model registry's)
  ///         unless classifier_with_head.
  void require_classifier_with_head(const std::string& algorithm) const;
};

/// What an algorithm is and needs from the run, as data: one value per algorithm
/// (Algorithm::traits) instead of one virtual per property. Fields left out are false / 0.
struct Traits {
  /// Whether the assignment is a clustering whose ARI against the truth is meaningful; false for
  /// FedAvg, Local-only and the personalised methods, whose ARI is recorded as NaN.
  bool clusters_clients = false;
  /// Whether the algorithm queries loss vectors (then /clients/loss_vectors is recorded and the
  /// stability switch, --stable-rounds, may apply).
  bool records_loss_vectors = false;
  /// Whether every client keeps a persistent local model (FedSoft's personalised models, FeSEM's
  /// local solutions, FedProto's and FedALA's local models); a local update may then start from it
  /// (kLocalModel), and every trained state is kept as the client's local model.
  bool keeps_local_models = false;
  /// Whether the run builds the client initial model (a fresh model from the (seed, kModelInit, K)
  /// stream, separate from the K server models): local models start from it, warm-up updates too.
  bool uses_client_initial_model = false;
  /// Whether each client is scored on its local model instead of its assigned model.
  bool evaluates_local_models = false;
  /// Whether each client keeps its optimizer's state across its local updates (FedSoft's
  /// official client: Adam moments; the CFL notebook: SGD momentum buffers) instead of a fresh
  /// optimizer per update.
  bool keeps_optimizers = false;
  /// Factor by which the run decays a client's kept learning rate, once before each of its local
  /// updates: the client's r-th update (r = 1, 2, ...) steps with --lr * local_lr_decay^r (the
  /// CFL notebook: 0.99, cfl-flexcfl-fesem-setup.md Sec. 1). 1 = no decay; any other value
  /// needs keeps_optimizers (the per-client update count is kept and checkpointed with them).
  double local_lr_decay = 1.0;
  /// mu of the proximal term of RoundPlan::proximal_weights (0: none; FedSoft Eq. 4).
  double proximal_mu = 0.0;
  /// Whether all models start from the same parameters whatever --init says (PACFL Alg. 1 line 12).
  bool same_initial_models = false;
  /// Whether the clients' local models start from server model 0's initial state instead of the
  /// client initial model (FedALA: every client starts from the global model).
  bool local_models_start_from_server_model = false;
  // Run options the algorithm cannot take, each with the reason it is refused ("" = allowed);
  // check_run_options checks them once for every algorithm, in one message format.
  std::string no_gradient_averaging{};     ///< --aggregation gradient (Option II).
  std::string no_partial_participation{};  ///< --participation below 1.
  std::string no_newcomers{};              ///< --newcomers above 0.
  std::string no_cluster_layers{};         ///< --cluster-layers above 0 (IFCA weight sharing).
  std::string no_model_count{};            ///< --models above 0 (K-hat).

  /// Whether the run builds the client initial model: asked for (uses_client_initial_model), or
  /// implied by local models that start from it (keeps_local_models without
  /// local_models_start_from_server_model).
  bool builds_client_initial_model() const {
    return uses_client_initial_model ||
           (keeps_local_models && !local_models_start_from_server_model);
  }
};

/// The server side of a federated algorithm (see the file comment for the round).
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  /// Command-line name, e.g. "clove".
  virtual std::string name() const = 0;
  /// K, the models the server keeps and broadcasts (CFL: a capacity, see live_models()).
  virtual int num_models() const = 0;
  /// What the algorithm is and needs from the run (see Traits).
  virtual Traits traits() const = 0;
  /// Extra per-round datasets the algorithm records (record()).
  virtual std::vector<ExtraDataset> extra_datasets() const { return {}; }
  /// The client side (client_statistic.hpp): a ClientProcedure when the clients do more than the
  /// standard local update (PFL methods), a ClientStatistic when the algorithm queries its own
  /// statistic. Default: neither (the standard local update and scoring, no own query).
  virtual ClientSide client_side() const;

  /// Rank 0, once before round 0: the queries the clients answer at set-up, before any round
  /// (PACFL's data signatures, Alg. 1 lines 7-11); none by default.
  /// @param initial  the clients present from the start, increasing ids (later ones are newcomers).
  virtual std::vector<ClientQuery> set_up_queries(const std::vector<int>& initial);
  /// Rank 0: receives the answers to set_up_queries, in that order; num_models() may change
  /// (PACFL: the clusters found), and the run sends the new K to the other ranks.
  /// @throws ShapeError if an answer has the wrong shape.
  virtual void set_up(const std::vector<QueryAnswer>& answers);

  /// Rank 0: the queries the clients answer before round `round` is planned (none by default).
  /// @param participants  this round's participants, increasing ids.
  virtual std::vector<ClientQuery> queries(int round, const std::vector<int>& participants);
  /// Rank 0: plans the round (see RoundPlan).
  /// @throws ShapeError if an answer has the wrong shape; Error for a non-finite loss.
  virtual RoundPlan plan(const RoundInput& input) = 0;
  /// Rank 0, called only when plan() left the weights undefined: decides them from the updates
  /// (CFL's split decisions). Default: each trained client's sample count n_i in the row of its
  /// assigned model (FedAvg within each model, as hard_plan), whatever the updates.
  /// @param updates  [n, P] float64, the update (trained state - start state) of every client
  ///                 that trained, in increasing id order (`trained` lists them).
  virtual Aggregation aggregate(const RoundInput& input, const RoundPlan& plan,
                                const std::vector<int>& trained, const torch::Tensor& updates);
  /// Rank 0, after the server averaged the models: may change them (default: nothing). The
  /// extension point of server-side model updates (FlexCFL's inter-group aggregation; a server
  /// optimizer such as FedAvgM's momentum would go here too).
  /// @param trained  [K] whether model s received a non-zero aggregation weight this round.
  /// @param models   [K, P] float32, changed in place.
  virtual void after_aggregation(int round, const std::vector<bool>& trained,
                                 torch::Tensor& models);
  /// Rank 0, after the local updates, when the client procedure reports (report_length() > 0):
  /// every trained client's report, [n, L] float64, rows in increasing id order (`clients`).
  /// @return the payload the clients are scored with this round (e.g. FedProto's prototypes made
  ///         from these reports); empty (the default, which ignores the reports) keeps the
  ///         round's plan payload.
  virtual AlgorithmState receive_reports(int round, const std::vector<int>& clients,
                                         const torch::Tensor& reports);
  /// Rank 0: this round's values of extra_datasets() (default: none).
  virtual ExtraValues record(int round) const;
  /// The round's logical traffic (bytes between server and clients); default: round_traffic().
  virtual RoundTraffic traffic(const RoundFacts& facts) const;

  /// Rank 0: everything kept across rounds (default: none).
  virtual AlgorithmState state() const { return {}; }
  /// Rank 0: restores what state() returned, so that the next rounds decide as the original would.
  /// @throws DataError if a tensor is missing or has the wrong shape.
  virtual void restore(const AlgorithmState& state);
};

/// The official code's random first assignment (clove-official-setup.md Sec. 10): each client
/// draws a model uniformly; while some model has nobody, a random client of a model with several
/// clients moves to it; groups are then renumbered by their smallest client id (that group gets
/// model 0, and so on). Draws from the (seed, kFirstAssignment) stream.
/// @return [num_clients] model indices in [0, num_models); every model gets at least one client.
/// @throws ConfigError if num_models is not in [1, num_clients].
std::vector<int> random_first_assignment(int num_clients, int num_models, std::uint64_t seed);

/// Checks the run options `traits` refuses (Traits::no_*), --cluster-layers, which also needs an
/// algorithm that clusters the clients (Traits::clusters_clients), and --stable-rounds, which
/// needs one that clusters loss vectors (Traits::records_loss_vectors); make_algorithm calls it
/// for every algorithm.
/// @throws ConfigError "--aggregation gradient does not apply to cfl (it clusters the clients'
///         weight updates); use --aggregation model", and likewise for --participation,
///         --newcomers, --cluster-layers, --stable-rounds and --models.
void check_run_options(const std::string& algorithm, const Traits& traits,
                       const AlgorithmContext& context);

/// Checks that K = context.num_models is in [1, context.num_clients].
/// @throws ConfigError naming the option K came from (--models if given, else --clusters) and the
///         number of clients otherwise.
void check_model_count(const AlgorithmContext& context);

/// Checks that `loss_vectors` is [num_clients, num_models] float64 with finite entries.
/// @throws ShapeError naming the expected and found shape, or Error for a non-finite loss (a
///         diverged model: lower --lr).
void check_loss_vectors(const torch::Tensor& loss_vectors, int num_clients, int num_models);

/// The answer to query kind `kind` in `input`. @throws ConfigError if there is none.
const QueryAnswer& answer_of(const RoundInput& input, QueryKind kind);

/// A hard-clustering plan: client participants[i] belongs to and trains model models[i], with its
/// sample count as aggregation weight (FedAvg within each model, CLoVE Alg. 1 line 14).
/// @param models  [m] model of each participant, in [0, num_models).
/// @return a plan with assignment = start = the models, weights [num_models, M] = n_i.
RoundPlan hard_plan(const std::vector<int>& participants, const std::vector<int>& models,
                    int num_models, const std::vector<std::int64_t>& train_samples);

/// The tensor `name` of a state, checked to have `shape` (an empty shape accepts any).
/// @throws DataError naming the algorithm and the tensor if missing or of another shape.
torch::Tensor state_tensor(const AlgorithmState& state, const std::string& algorithm,
                           const std::string& name, const std::vector<std::int64_t>& shape = {});

}  // namespace cflrun::algo
