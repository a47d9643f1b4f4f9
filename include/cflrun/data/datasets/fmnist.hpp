#pragma once
/// @file
/// Fashion-MNIST (`--dataset fmnist`; Xiao, Rasul and Vollgraf, arXiv:1708.07747, 2017):
/// 60 000 train / 10 000 test 28x28 grey-level article images in 10 classes.

#include <filesystem>
#include <string>

#include <cflrun/data/idx_image_source.hpp>

namespace cflrun::data {

/// Fashion-MNIST from the Debian package dataset-fashion-mnist (datasets/README.md).
class FashionMnistSource : public IdxImageSource {
 public:
  std::string name() const override { return "fmnist"; }
  /// `/usr/share/datasets/fashion-mnist`, where dataset-fashion-mnist installs its IDX files.
  std::filesystem::path default_data_dir() const override {
    return "/usr/share/datasets/fashion-mnist";
  }
  std::string how_to_obtain() const override;
};

}  // namespace cflrun::data
