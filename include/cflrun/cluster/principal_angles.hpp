#pragma once
/// @file
/// PACFL's one-shot clustering of clients by the principal angles between their data subspaces
/// (Vahidian, Morafah et al., PACFL, Sec. 2-3, Eq. 1-3, Algorithms 1 and 2).

#include <vector>

#include <torch/types.h>

namespace cflrun::cluster {

/// How two clients' signatures are compared (PACFL Eq. 2 or Eq. 3).
enum class Proximity {
  kSmallestAngle,  ///< Eq. 2: the smallest principal angle Theta_1 between the two subspaces.
  kSumOfAngles,    ///< Eq. 3: the sum of the p principal angles, tr(arccos(...)).
  /// The official PACFL code (baselines-official-setup.md 3.2): the smallest entry of
  /// arccos(clip(U_i^T U_j, -1, 1)), the angle between two signature columns (not a principal
  /// angle from an SVD of U_i^T U_j).
  kSmallestEntrywiseAngle,
};

/// A client's signature (PACFL Alg. 1 line 8): the p most significant left singular vectors of its
/// data matrix D_k, whose columns are its flattened input samples (truncated SVD).
/// @param inputs  [n, ...] float samples of one client (flattened to [n, d] rows).
/// @param p       number of singular vectors kept, 1 <= p <= min(n, d).
/// @return        [d, p] float64 with orthonormal columns, the first p left singular vectors of
///                D_k = inputs^T (d x n), in decreasing order of singular value.
/// @throws ConfigError if p is outside [1, min(n, d)] (naming --pacfl-vectors).
torch::Tensor data_signature(const torch::Tensor& inputs, int p);

/// The official PACFL code's signature (MMorafah/PACFL, baselines-official-setup.md 3.2): for each
/// label c the client holds, the p most significant left singular vectors of the data matrix of
/// its samples of label c, placed in columns [c p, c p + p); labels it lacks (and vectors beyond
/// min(n_c, d)) stay zero columns, which are 90 degrees from everything and so never the closest.
/// The columns of different labels are not orthogonal to each other: compare these signatures with
/// Proximity::kSmallestEntrywiseAngle.
/// @param inputs       [n, ...] float samples of one client (flattened to [n, d] rows).
/// @param labels       [n] int64 labels in [0, num_classes).
/// @param p            singular vectors per label, >= 1.
/// @param num_classes  C, number of classes.
/// @return             [d, p C] float64.
/// @throws ConfigError if p < 1 (naming --pacfl-vectors); ShapeError if labels is not [n] int64
///         or a label is outside [0, num_classes).
torch::Tensor per_label_data_signature(const torch::Tensor& inputs, const torch::Tensor& labels,
                                       int p, int num_classes);

/// The proximity matrix A (PACFL Eq. 2 / Eq. 3, or the official code's entrywise angle): the
/// principal angles between clients i and j are the arccos of the singular values of U_i^T U_j
/// (Bjorck and Golub 1973), in degrees.
/// @param signatures  [M, d, p] float64, orthonormal columns per client (per_label_data_signature's
///                    for kSmallestEntrywiseAngle).
/// @return            [M, M] float64 in degrees, symmetric, zero diagonal (up to rounding).
/// @throws ShapeError if signatures is not [M, d, p] float64 with M >= 1.
torch::Tensor proximity_matrix(const torch::Tensor& signatures, Proximity proximity);

/// Agglomerative hierarchical clustering HC(A, beta) of PACFL Alg. 1 line 11, as the official
/// code runs it: start from singletons; repeatedly merge the two closest clusters while their
/// distance is <= beta (or, with `clusters` > 0, until that many clusters remain); the merged
/// cluster's distances to the others are the plain mean of the two merged rows ("average" linkage
/// of the PACFL code, not the size-weighted UPGMA).
/// @param proximity  [M, M] float64 distances (degrees).
/// @param beta       merge threshold in the units of `proximity`; ignored when clusters > 0.
/// @param clusters   target number of clusters Z in [1, M], or 0 to use beta.
/// @return           [M] cluster of each client in [0, Z), numbered by smallest member.
/// @throws ShapeError if proximity is not square float64; ConfigError if clusters > M.
std::vector<int> hierarchical_clustering(const torch::Tensor& proximity, double beta,
                                         int clusters = 0);

}  // namespace cflrun::cluster
