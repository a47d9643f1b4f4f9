#pragma once
/// @file
/// Class prototypes (per-class mean features of a model's body), shared by FedProto (Tan et al.
/// 2022, Sec. 3) and FedPAC (Xu et al. 2023, Sec. 4.1, feature alignment), as PFLlib runs them
/// (pfl-baselines-setup.md Sec. 3 and 5).

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/algorithm.hpp>

namespace cflrun::algo {

/// The server's global prototypes: P [C, d] float64 and present [C] float64 0/1 (1 = some client
/// reported class k in the last round), undefined before the first reports. Its payload and state
/// are the named tensors "prototypes" and "present".
class GlobalPrototypes {
 public:
  /// @param algorithm  the owning algorithm's name, for restore()'s error messages.
  GlobalPrototypes(std::string algorithm, int num_classes, int feature_size);
  /// Replaces P by the average of the clients' reports [n, C d + C] (any float type): each row
  /// holds a client's C x d prototypes, then its C class counts (average_prototypes).
  void average(const torch::Tensor& reports);
  /// {"prototypes": P, "present": present}, or empty before the first reports: the payload the
  /// clients train (and FedProto's clients are scored) with, and the state checkpoints keep.
  AlgorithmState payload() const;
  /// Restores what payload() returned (empty: no prototypes yet).
  /// @throws DataError if a tensor is missing or not [C, d] / [C].
  void restore(const AlgorithmState& state);

 private:
  std::string algorithm_;
  std::int64_t num_classes_;
  std::int64_t feature_size_;
  torch::Tensor prototypes_;  // [C, d] float64
  torch::Tensor present_;     // [C] float64 0/1
};

/// The prototype regulariser's targets of FedProto and FedPAC: each sample's global prototype
/// payload["prototypes"][label] where payload["present"][label] > 0, else the sample's own
/// (detached) features, which add 0 to MSE(features, targets) (PFLlib). [n, d] like `features`.
torch::Tensor prototype_targets(const torch::Tensor& features, const torch::Tensor& labels,
                                const AlgorithmState& payload);

/// Per-class means of features: [C, d] float64 means (0 where a class has no sample) and [C]
/// float64 counts. @param features [n, d]; @param labels [n] int64 in [0, C).
std::pair<torch::Tensor, torch::Tensor> class_means(const torch::Tensor& features,
                                                    const torch::Tensor& labels, int num_classes);

/// class_means' sums for g clients at once (their client-batched form): adds each real row of
/// `features` to sums[c, label] and 1 to counts[c, label], c being the row's client.
/// @param sums      [g', C, d] float64 (g' >= g), updated in place.
/// @param counts    [g', C] float64, updated in place.
/// @param features  [g, w, d] any float type.
/// @param labels    [g * w] int64 in [0, C).
/// @param valid     [g, w] 1 for a real row, 0 for padding.
void add_class_sums(torch::Tensor& sums, torch::Tensor& counts, const torch::Tensor& features,
                    const torch::Tensor& labels, const torch::Tensor& valid);

/// Each client's class means as a report row, as from class_means: [C d] means (sums over
/// counts, 0 for an empty class), then the [C] counts.
/// @param sums [g, C, d], @param counts [g, C]. @return [g] rows of C d + C floats.
std::vector<std::vector<double>> class_mean_rows(const torch::Tensor& sums,
                                                 const torch::Tensor& counts);

/// FedProto's inference: for each row of `features` [n, d], the class whose prototype is nearest
/// in mean squared distance among the classes with present[k] > 0. @return [n] int64 classes;
/// all -1 if no class is present.
torch::Tensor nearest_prototype(const torch::Tensor& features, const torch::Tensor& prototypes,
                                const torch::Tensor& present);

/// The server's global prototypes from client reports: P_k = plain mean of the reported class-k
/// prototypes over the clients with a positive class-k count (PFLlib; the FedProto paper weights
/// them by the class counts). @param prototypes [n, C, d], @param counts [n, C].
/// @return ([C, d] float64, [C] float64 present 0/1).
std::pair<torch::Tensor, torch::Tensor> average_prototypes(const torch::Tensor& prototypes,
                                                           const torch::Tensor& counts);

}  // namespace cflrun::algo
