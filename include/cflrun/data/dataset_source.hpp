#pragma once
/// @file
/// A dataset source: everything cflrun knows about one `--dataset` value (its files, its labels,
/// its default model, how it makes the clients' data). Each source is its own header/source pair
/// under data/datasets/ plus one line in src/data/dataset_registry.cpp (src/data/README.md).

#include <filesystem>
#include <optional>
#include <string>

#include <cflrun/data/client_data.hpp>
#include <cflrun/data/linear_regression.hpp>
#include <cflrun/data/mixture.hpp>
#include <cflrun/data/partition.hpp>

namespace cflrun::data {

/// What a dataset's samples are labelled with; decides the supervised objective of a run.
enum class TargetKind {
  kClassLabels,  ///< [n] int64 class indices in [0, num_classes): classification (cross-entropy).
  kRealValues,   ///< [n] float32 real values: regression (squared error).
};

/// The run's data choices, from the run options (run::data_request): what a source makes its
/// clients' data from. Each source reads the part that applies to it.
struct DataRequest {
  std::filesystem::path data_dir;  ///< --data-dir; empty = the source's default_data_dir().
  std::string partition;  ///< --partition as given, e.g. "label_skew_1" or "mixture_10_90".
  /// Hard partitions of image data (--partition not mixture_*): sizes, seeds, fidelity and kind.
  /// Label sets and class counts are parsed from the strings below once the class count is known.
  PartitionSpec partition_spec;
  std::string label_sets;              ///< --label-sets (label skew 2), "" = drawn.
  std::string train_class_counts;      ///< --train-class-counts (label skew 2/3), "" = drawn.
  std::string test_class_counts;       ///< --test-class-counts (label skew 2/3), "" = drawn.
  std::optional<MixtureSpec> mixture;  ///< set for a mixture_* --partition (FedSoft Sec. 5).
  /// Generated regression data: sizes, --data-seed, --dimension, --separation, --noise,
  /// --model-std.
  LinearRegressionSpec regression;
};

/// One dataset cflrun can run on (`--dataset <name()>`). Implementations are stateless: every
/// method may be called on any rank, any number of times.
class DatasetSource {
 public:
  virtual ~DatasetSource() = default;

  /// The --dataset value, e.g. "fmnist".
  virtual std::string name() const = 0;
  /// A few words shown after the name in --dataset's help, e.g. "synthetic mixed linear
  /// regression"; "" for none.
  virtual std::string summary() const { return ""; }
  /// Where its files are when --data-dir is "": an absolute path, or a path relative to the
  /// working directory (found when cflrun runs from the source tree). Empty for a generated
  /// dataset, which reads no files.
  virtual std::filesystem::path default_data_dir() const = 0;
  /// What its samples are labelled with: class labels (classification) or real values (regression).
  virtual TargetKind targets() const = 0;
  /// Number of classes C of its labels (labels in [0, C)); 0 for real-valued targets.
  virtual int num_classes() const = 0;
  /// The --model that `--model auto` means on it, e.g. "cnn", or with --unsupervised an
  /// autoencoder.
  virtual std::string default_model(bool unsupervised) const = 0;
  /// Whether --unsupervised (autoencoders on the inputs alone) may run on it.
  virtual bool supports_unsupervised() const = 0;
  /// Whether `partition` (a valid --partition value) applies to it.
  virtual bool accepts_partition(const std::string& /*partition*/) const { return true; }
  /// What --partition must be on it, for the error when accepts_partition() is false.
  virtual std::string partition_requirement() const { return "any --partition"; }
  /// Whether under --fidelity official the official CLoVE code shuffles its class order and makes
  /// feature skew a label permutation per cluster (CIFAR-10; clove-official-setup.md Sec. 0-6).
  virtual bool official_code_permutes_labels() const { return false; }
  /// How the start-up line describes the clients' data layout: the partition, or what stands
  /// for it (linreg: "(Delta <separation>)").
  virtual std::string layout(const DataRequest& request) const { return request.partition; }
  /// Loads (or generates) every client's data as `request` says. Deterministic in its seeds.
  /// @throws DataError for missing or corrupt data files (the message names the file and how to
  ///         obtain the data) and impossible partitions; ConfigError for impossible sizes.
  virtual ClientData client_data(const DataRequest& request) const = 0;
};

}  // namespace cflrun::data
