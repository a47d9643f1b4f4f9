#pragma once
/// @file
/// CIFAR-10 (`--dataset cifar10`) in its standard binary version
/// (https://www.cs.toronto.edu/~kriz/cifar.html): 50 000 train / 10 000 test 32x32 colour images
/// in 10 classes.

#include <filesystem>
#include <string>

#include <cflrun/data/image_source.hpp>

namespace cflrun::data {

/// CIFAR-10 from its binary batches.
class Cifar10Source : public ImageSource {
 public:
  std::string name() const override { return "cifar10"; }
  /// `datasets/cifar-10-batches-bin`, relative to the working directory (datasets/README.md).
  std::filesystem::path default_data_dir() const override {
    return "datasets/cifar-10-batches-bin";
  }
  int num_classes() const override { return 10; }
  /// "cifar_cnn", or "conv_autoencoder" with --unsupervised (paper App. C).
  std::string default_model(bool unsupervised) const override {
    return unsupervised ? "conv_autoencoder" : "cifar_cnn";
  }
  /// True: the official code shuffles CIFAR-10's class order and permutes labels for feature skew.
  bool official_code_permutes_labels() const override { return true; }

  /// Loads `dir`/data_batch_1.bin .. data_batch_5.bin (train, concatenated in that order) and
  /// `dir`/test_batch.bin (test). Each file is a sequence of 3 073-byte records: the label (0..9),
  /// then the 1 024 red, 1 024 green and 1 024 blue bytes of a 32x32 image, row-major. Files of
  /// any whole number of records are accepted (the official ones hold 10 000 each).
  /// @return images [N, 3, 32, 32] uint8 (channels R, G, B), labels [N] int64; num_classes 10.
  /// @throws DataError "cifar10: <file>: <problem>; download ..." if a file is missing or
  ///         unreadable, empty, not a whole number of records (truncated or not CIFAR-10), or
  ///         holds a label outside [0, 10).
  ImageDataset load(const std::filesystem::path& dir) const override;
};

}  // namespace cflrun::data
