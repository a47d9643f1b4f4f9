#pragma once
/// @file
/// Mixture partitions of soft clustered FL (FedSoft, shared/papers/004, Sec. 5): every data point
/// of a client comes from one of S source distributions, and each client holds its own mixture of
/// them. Sources are rotations or label groups of an image dataset, or the optimal models of the
/// synthetic linear regression.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/core/option_visitor.hpp>
#include <cflrun/data/client_data.hpp>
#include <cflrun/data/dataset.hpp>
#include <cflrun/data/linear_regression.hpp>

namespace cflrun::data {

/// How the clients mix the sources (FedSoft Sec. 5; command-line values of --partition).
enum class MixturePattern {
  k10To90,  ///< "mixture_10_90": S = 2; the first half of the clients holds 90 % source 0 and 10 %
            ///< source 1, the rest the reverse.
  k30To70,  ///< "mixture_30_70": as 10_90 with 70 % / 30 %.
  kLinear,  ///< "mixture_linear": S = 2; client c holds a share c / M of source 1 and the rest of
            ///< source 0.
  kRandom,  ///< "mixture_random": any S; each client cuts [0, 1] at S - 1 uniform points, the
            ///< segment lengths are its shares.
};

/// Whether `partition` names a mixture partition ("mixture_10_90", "mixture_30_70",
/// "mixture_linear", "mixture_random").
bool is_mixture_partition(const std::string& partition);

/// The mixture partition names, in MixturePattern order ("mixture_10_90", ..., "mixture_random").
std::vector<std::string> mixture_partition_names();

/// Parses a mixture partition name. @throws ConfigError naming the four accepted values otherwise.
MixturePattern parse_mixture_pattern(const std::string& partition);

/// What the sources of an image-dataset mixture are (--mixture-sources).
enum class SourceKind {
  kRotation,     ///< "rotation": source s is the whole dataset rotated counter-clockwise by s x 90
                 ///< degrees (S <= 4; FedSoft's rotated CIFAR-10 / EMNIST).
  kLabelGroups,  ///< "label_groups": source s holds the classes c with floor(c S / C) == s
                 ///< (contiguous groups; S <= C).
};

/// --mixture-sources' words.
inline constexpr core::ChoiceWords<SourceKind, 2> kSourceKindWords{
    {{SourceKind::kRotation, "rotation"}, {SourceKind::kLabelGroups, "label_groups"}}};

/// What to build.
struct MixtureSpec {
  MixturePattern pattern = MixturePattern::k10To90;
  SourceKind source_kind = SourceKind::kRotation;  ///< image datasets only.
  int sources = 2;                                 ///< S (--clusters).
  int clients_per_source = 50;           ///< M = S x this (--clients-per-cluster); FedSoft: 50.
  std::int64_t min_train_samples = 100;  ///< n_k is uniform in [min, max] (FedSoft: 100..200).
  std::int64_t max_train_samples = 200;  ///< (--train-samples).
  std::int64_t test_samples = 100;       ///< per client, same mixture as its training data.
  std::int64_t holdout_samples = 1000;   ///< per source (--holdout-samples).
  std::uint64_t data_seed = 1;
};

/// The true mixture weights (FedSoft Sec. 5), [M, S] float64, rows sum to 1. The random pattern
/// draws client c's cut points from the (data_seed, kMixture, c, 0) stream.
/// @throws ConfigError if sources < 1, clients_per_source < 1, or the pattern needs S = 2 and
///         sources != 2 (naming --clusters).
torch::Tensor mixture_weights(const MixtureSpec& spec);

/// Splits n samples among the sources by shares (largest remainder: floor(n w_s), then one more
/// to the sources with the largest fractional parts, ties to the lowest index).
/// @param shares  [S] float64, non-negative, summing to 1.
/// @return        [S] counts summing to n.
std::vector<std::int64_t> source_counts(const torch::Tensor& shares, std::int64_t n);

/// Every client's training-sample count n_k, uniform in [min_train_samples, max_train_samples]
/// from the (data_seed, kMixture, c, 1) stream. [M].
std::vector<std::int64_t> train_sample_counts(const MixtureSpec& spec);

/// The clients of an image-dataset mixture. For every source a pool of each split (rotation: the
/// whole split, its own permutation per source; label groups: the group's classes) is shuffled
/// from the (data_seed, kPartition) streams; the holdout of source s is the first
/// holdout_samples of its test pool, and clients take the next points of each pool in client
/// order (no point is used twice within a source). Samples of source s are rotated by s quarter
/// turns (rotation) and keep their labels. true_clusters = dominant source.
/// @throws ConfigError as mixture_weights, for S > 4 with rotation or S > C with label groups,
///         min_train_samples < 1 or > max_train_samples, test_samples < 1 or holdout_samples < 1
///         (naming the flag).
/// @throws DataError if a source pool is too small for what the clients and the holdout take
///         (naming the source and the largest feasible --train-samples).
ClientData mixture_image_data(std::shared_ptr<const ImageDataset> dataset, const MixtureSpec& spec);

/// The clients of a linear-regression mixture: the S sources are the optimal models
/// optimal_models(regression) with regression.clusters = S (FedSoft's synthetic data, Sec. 5);
/// client c draws its n_k training and test_samples test points with source counts by its
/// shares, x ~ N(0, I_d), y = <theta*_s, x> + noise (streams (data_seed, kMixture, c, 2 | 3));
/// the holdout of source s from (data_seed, kMixture, M + s, 4). regression's
/// clients_per_cluster, train_samples and test_samples are ignored (the MixtureSpec's apply).
/// @throws ConfigError as mixture_weights and optimal_models.
ClientData mixture_linear_regression_data(const LinearRegressionSpec& regression,
                                          const MixtureSpec& spec);

}  // namespace cflrun::data
