#pragma once
/// @file
/// In-memory image datasets (both splits), as an ImageSource loads them (data/image_source.hpp;
/// the sources are in data/datasets/).

#include <cstdint>
#include <string>

#include <torch/types.h>

namespace cflrun::data {

/// One split (train or test) of an image classification dataset, held as loaded from disk.
struct ImageSplit {
  torch::Tensor images;  ///< [N, C, H, W] uint8, 0..255: [N, 1, 28, 28] for (F)MNIST, [N, 3, 32,
                         ///< 32] for CIFAR-10.
  torch::Tensor labels;  ///< [N] int64, class indices in [0, num_classes).
  /// Number of samples N.
  std::int64_t size() const { return labels.size(0); }
};

/// Both splits of a dataset and its number of classes.
struct ImageDataset {
  std::string
      name;  ///< the --dataset name of its source, e.g. "fmnist" (data/dataset_registry.hpp).
  int num_classes = 10;  ///< C, the source's num_classes(): labels are in [0, C).
  ImageSplit train;      ///< the official training split (60 000 for (F)MNIST).
  ImageSplit
      test;  ///< the official test split (10 000 for (F)MNIST; see datasets/README.md for MNIST).
};

}  // namespace cflrun::data
