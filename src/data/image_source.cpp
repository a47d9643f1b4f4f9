#include <cflrun/data/image_source.hpp>

#include <map>
#include <memory>
#include <utility>

#include <cflrun/core/error.hpp>
#include <cflrun/data/cluster_pools.hpp>
#include <cflrun/data/dataset_registry.hpp>

namespace cflrun::data {
namespace {

/// The dataset of `source` in `dir`, loaded once per process: `cflrun check` dry-runs many configs
/// of the same data, and a run loads it once anyway. Not thread-safe (setup runs on the main
/// thread).
std::shared_ptr<const ImageDataset> shared_dataset(const ImageSource& source,
                                                   const std::filesystem::path& dir) {
  static std::map<std::pair<std::string, std::filesystem::path>,
                  std::shared_ptr<const ImageDataset>>
      loaded;
  auto& entry = loaded[{source.name(), dir}];
  if (!entry) {
    entry = std::make_shared<const ImageDataset>(source.load(dir));
  }
  return entry;
}

/// request.partition_spec with the label sets and class counts parsed for `num_classes` classes.
PartitionSpec partition_spec(const DataRequest& request, int num_classes) {
  PartitionSpec spec = request.partition_spec;
  const int clusters = spec.clusters;
  if (!request.label_sets.empty()) {
    spec.label_sets = parse_label_sets(request.label_sets, clusters, num_classes);
  }
  if (!request.train_class_counts.empty()) {
    spec.train_class_counts =
        parse_class_counts(request.train_class_counts, "train-class-counts", clusters, num_classes);
  }
  if (!request.test_class_counts.empty()) {
    spec.test_class_counts =
        parse_class_counts(request.test_class_counts, "test-class-counts", clusters, num_classes);
  }
  return spec;
}

}  // namespace

ClientData ImageSource::client_data(const DataRequest& request) const {
  auto dataset =
      shared_dataset(*this, request.data_dir.empty() ? default_data_dir() : request.data_dir);
  if (request.partition_spec.official_fidelity && official_code_permutes_labels()) {
    auto relabelled = std::make_shared<ImageDataset>(*dataset);  // shares the images, new labels
    shuffle_class_order(*relabelled, request.partition_spec.effective_pool_seed());
    dataset = std::move(relabelled);
  }
  if (request.mixture) {
    return mixture_image_data(std::move(dataset), *request.mixture);
  }
  auto partition = make_partition(partition_spec(request, dataset->num_classes), *dataset);
  return partitioned_client_data(std::move(dataset), std::move(partition));
}

ImageDataset load_image_dataset(const std::string& name, const std::filesystem::path& dir) {
  const auto* source = dynamic_cast<const ImageSource*>(&find_dataset(name));
  if (source == nullptr) {
    throw ConfigError("load_image_dataset: --dataset " + name + " is not an image dataset");
  }
  return source->load(dir);
}

}  // namespace cflrun::data
