#pragma once
/// @file
/// The base of the image datasets: a source whose files load into an ImageDataset, which the run's
/// --partition (or mixture) then splits among the clients.

#include <filesystem>
#include <string>

#include <cflrun/data/dataset.hpp>
#include <cflrun/data/dataset_source.hpp>

namespace cflrun::data {

/// An image classification dataset read from files. Subclasses say where the files are and how
/// to read them (load()); client_data() is the same for all of them.
class ImageSource : public DatasetSource {
 public:
  TargetKind targets() const override { return TargetKind::kClassLabels; }
  bool supports_unsupervised() const override { return true; }
  /// "cnn", or "autoencoder" with --unsupervised (the (F)MNIST models, paper App. C).
  std::string default_model(bool unsupervised) const override {
    return unsupervised ? "autoencoder" : "cnn";
  }

  /// Loads both splits from the files in `dir`.
  /// @return images [N, C, H, W] uint8 0..255, labels [N] int64 in [0, num_classes()); name() and
  ///         num_classes() filled in.
  /// @throws DataError naming the file and how to obtain the data if a file is missing, corrupt
  ///         or truncated, or holds a label outside [0, num_classes()).
  virtual ImageDataset load(const std::filesystem::path& dir) const = 0;

  /// Loads the dataset from request.data_dir (or default_data_dir()) once per process and
  /// directory (`cflrun check` dry-runs many configs of the same data; not thread-safe: set-up
  /// runs on the main thread); under --fidelity official applies the official class order if
  /// official_code_permutes_labels(); then partitions it by request.partition_spec, or mixes it by
  /// request.mixture. The clients' data shares ownership of the loaded dataset.
  /// @throws as load(), data::make_partition and data::mixture_image_data.
  ClientData client_data(const DataRequest& request) const override;
};

/// Loads both splits of the registered image dataset `name` from `dir` (tests and tools).
/// @throws ConfigError if `name` is not a registered image dataset; as ImageSource::load().
ImageDataset load_image_dataset(const std::string& name, const std::filesystem::path& dir);

}  // namespace cflrun::data
