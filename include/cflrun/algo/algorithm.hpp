#pragma once
/// @file
/// The interface every federated algorithm implements: how many models the server keeps and which
/// model each client trains in a round. Local updates, averaging and communication are shared
/// machinery in cflrun::run, identical for every algorithm.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

namespace cflrun::algo {

/// The server-side decision of a federated algorithm (CLoVE Alg. 1 lines 8-10; IFCA Alg. 1).
class Algorithm {
 public:
  virtual ~Algorithm() = default;

  /// Command-line name, e.g. "clove".
  virtual std::string name() const = 0;

  /// Number of models the server keeps and broadcasts: K for CLoVE and IFCA, 1 for FedAvg, M for
  /// Local-only.
  virtual int num_models() const = 0;

  /// Whether clients must send loss vectors (mean training loss on every model) in round `round`
  /// (0-based) before `assign` is called.
  virtual bool needs_loss_vectors(int round) const = 0;

  /// Whether the assignment is a clustering of the clients whose agreement with the ground truth
  /// (ARI) is meaningful; false for FedAvg and Local-only, whose ARI is recorded as NaN.
  virtual bool clusters_clients() const = 0;

  /// The model each participating client trains in round `round` (CLoVE Alg. 1 line 2: the
  /// participants M(t) are drawn by the caller; all clients under full participation).
  /// @param round         0-based round index t.
  /// @param participants  [m] ids of the participating clients, increasing.
  /// @param loss_vectors  [m, K] float64, row i for participants[i], when
  ///                      `needs_loss_vectors(round)`; else an undefined tensor.
  /// @return              [m] model indices in [0, num_models()), entry i for participants[i].
  /// @throws ShapeError if loss_vectors has the wrong shape.
  virtual std::vector<int> assign(int round, const std::vector<int>& participants,
                                  const torch::Tensor& loss_vectors) = 0;

  /// One-shot clustering before training (PACFL Alg. 1 lines 7-11): p > 0 asks every client for
  /// the p most significant left singular vectors of its data matrix. 0 (default) for none.
  virtual int signature_vectors() const { return 0; }

  /// Rank 0 only, when signature_vectors() > 0: clusters the clients that are present from the
  /// start (`initial`, increasing ids) by their signatures.
  /// @param signatures  [M, d, p] float64, every client's signature.
  /// @return            [M] cluster of each client in [0, Z); -1 for clients not in `initial`.
  virtual std::vector<int> cluster_signatures(const torch::Tensor& signatures, const std::vector<int>& initial);

  /// Every rank: adopts the clustering rank 0 computed; num_models() becomes the number of clusters.
  virtual void adopt_clusters(const std::vector<int>& clusters);

  /// Whether all models start from the same parameters whatever --init says (PACFL Alg. 1 line 12).
  virtual bool same_initial_models() const { return false; }

  /// Soft clustering (FedSoft Alg. 1 line 3): clients re-estimate their importance weights over the
  /// models every this many rounds (tau), keep persistent local models and run proximal local
  /// updates; 0 (default) for the hard-clustering algorithms, which use `assign` instead.
  virtual int importance_interval() const { return 0; }

  /// Soft clustering: sigma, the counter smoother of the importance weights (FedSoft Alg. 1 line 10).
  virtual double importance_smoother() const { return 0.0; }

  /// Soft clustering: mu of the proximal term (mu / 2) sum_s u_s ||w - c_s||^2 (FedSoft Eq. 4).
  virtual double proximal_weight() const { return 0.0; }

  /// Soft clustering, rank 0: which clients' local models each model is averaged from in round
  /// `round`, and with which weight (FedSoft Alg. 1 lines 19-22).
  /// @param importance     [M, K] float64, every client's latest importance weights u.
  /// @param sample_counts  [M] float64, training samples n_k of every client.
  /// @return               [K, M] float64; row s sums to 1, 0 = client k does not contribute to model s.
  /// @throws ConfigError if the algorithm is not a soft-clustering one.
  virtual torch::Tensor contributions(int round, const torch::Tensor& importance, const torch::Tensor& sample_counts);
};

/// Settings the factory needs to build any algorithm.
struct AlgorithmSettings {
  std::string name = "clove";      ///< clove | ifca | fedavg | local | pacfl | fedsoft.
  int num_clients = 0;             ///< M.
  int num_clusters = 0;            ///< K (models for clove/ifca).
  bool random_first_assignment = false;  ///< round 0 assigned at random instead of by loss vectors.
  int kmeans_restarts = 10;        ///< k-means++ starts per round (clove).
  bool sqrt_loss_vectors = false;  ///< clove: cluster and match sqrt(loss vectors) (paper Sec. 4 SLV; Table 12 row 1903).
  bool min_cost_matching = true;   ///< clove: false = the "no matching" ablation (Table 12 row 1901).
  bool agglomerative = false;      ///< clove: Ward agglomerative clustering instead of k-means (Table 12 row 1902).
  bool select_k = false;           ///< clove: pick K <= num_clusters each round by silhouette (unknown K, ICML version).
  int pacfl_vectors = 3;           ///< pacfl: p, singular vectors per client signature (PACFL: 3..5).
  bool pacfl_sum_of_angles = false;  ///< pacfl: proximity by Eq. 3 (sum of angles) instead of Eq. 2.
  double pacfl_beta = 4.9;         ///< pacfl: HC merge threshold in degrees (official pacfl.sh: 4.9).
  int pacfl_clusters = 0;          ///< pacfl: a fixed number of clusters instead of beta; 0 = use beta.
  int fedsoft_interval = 2;        ///< fedsoft: tau, rounds between importance estimates (official main.py: 2).
  int fedsoft_selection = 15;      ///< fedsoft: clients selected per cluster (official main.py: 15); 0 = all, weighted by Eq. 6.
  double fedsoft_mu = 0.1;         ///< fedsoft: proximal weight mu (official: 0.01 CIFAR, 0.1 MNIST, 1.0 linear regression).
  double fedsoft_smoother = 1e-4;  ///< fedsoft: counter smoother sigma (paper Sec. 5: 1e-4).
  std::uint64_t seed = 1;          ///< run seed: clustering and random first assignment streams.
};

/// Builds the algorithm named in `settings` (the single place names map to types).
/// @throws ConfigError for an unknown name, or if K is not in [1, M] for clove/ifca
///         ("--clusters (K models) must not exceed the number of clients").
std::unique_ptr<Algorithm> make_algorithm(const AlgorithmSettings& settings);

/// The official code's random first assignment (clove-official-setup.md Sec. 10): each client
/// draws a model uniformly; while some model has nobody, a random client of a model with several
/// clients moves to it; groups are then renumbered by their smallest client id (that group gets
/// model 0, and so on). Draws from the (seed, kFirstAssignment) stream.
/// @return [num_clients] model indices in [0, num_models); every model gets at least one client.
/// @throws ConfigError if num_models is not in [1, num_clients].
std::vector<int> random_first_assignment(int num_clients, int num_models, std::uint64_t seed);

/// Checks that K = num_models is in [1, num_clients].
/// @throws ConfigError naming --clusters and the number of clients otherwise.
void check_model_count(int num_clients, int num_models);

/// Checks that `loss_vectors` is [num_clients, num_models] float64 with finite entries.
/// @throws ShapeError naming the expected and found shape, or Error for a non-finite loss (a
///         diverged model: lower --lr).
void check_loss_vectors(const torch::Tensor& loss_vectors, int num_clients, int num_models);

}  // namespace cflrun::algo
