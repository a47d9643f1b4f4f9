#pragma once
/// @file
/// The base of the datasets stored as four IDX files of 28x28 grey-level images ((Fashion-)MNIST).

#include <filesystem>
#include <string>

#include <cflrun/data/image_source.hpp>

namespace cflrun::data {

/// An image dataset in the four standard IDX files of one directory: train-images-idx3-ubyte,
/// train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, each optionally
/// gzip-compressed with a ".gz" suffix (the .gz file is used when both exist; io/idx_reader.hpp).
class IdxImageSource : public ImageSource {
 public:
  /// Ten classes, as in (Fashion-)MNIST.
  int num_classes() const override { return 10; }
  /// What a user does to obtain the files, appended after "; " to every loading error.
  virtual std::string how_to_obtain() const = 0;

  /// Loads both splits of `dir`.
  /// @return images [N, 1, 28, 28] uint8, labels [N] int64.
  /// @throws DataError "<name>: <problem>; <how_to_obtain()>" if `dir` is not a directory, a file
  ///         is missing, corrupt or truncated, images are not 28x28, image and label counts differ,
  ///         or a label is outside [0, num_classes()).
  ImageDataset load(const std::filesystem::path& dir) const override;
};

}  // namespace cflrun::data
