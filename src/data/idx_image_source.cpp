#include <cflrun/data/idx_image_source.hpp>

#include <system_error>

#include <cflrun/core/error.hpp>
#include <cflrun/io/idx_reader.hpp>

namespace cflrun::data {
namespace {

constexpr std::int64_t kImageSide = 28;

[[noreturn]] void fail(const IdxImageSource& source, const std::string& what) {
  throw DataError(source.name() + ": " + what + "; " + source.how_to_obtain());
}

std::string shape_text(const torch::Tensor& tensor) {
  std::string text = "[";
  for (std::int64_t d = 0; d < tensor.dim(); ++d) {
    text += (d == 0 ? "" : ", ") + std::to_string(tensor.size(d));
  }
  return text + "]";
}

/// Finds and reads one IDX component, adding to any error how to obtain the dataset.
torch::Tensor read_component(const IdxImageSource& source, const std::filesystem::path& dir,
                             const std::string& stem, std::filesystem::path* path) {
  try {
    *path = io::find_idx_file(dir, stem);
    return io::read_idx(*path);
  } catch (const DataError& e) {
    fail(source, e.what());
  }
}

/// Reads images and labels of one split and checks that they form a valid split.
ImageSplit load_split(const IdxImageSource& source, const std::filesystem::path& dir,
                      const std::string& prefix) {
  std::filesystem::path images_path;
  std::filesystem::path labels_path;
  const torch::Tensor images =
      read_component(source, dir, prefix + "-images-idx3-ubyte", &images_path);
  const torch::Tensor labels =
      read_component(source, dir, prefix + "-labels-idx1-ubyte", &labels_path);
  if (images.dim() != 3 || images.size(1) != kImageSide || images.size(2) != kImageSide) {
    fail(source, "IDX file " + images_path.string() +
                     ": expected images of shape [N, 28, 28], found " + shape_text(images));
  }
  if (labels.dim() != 1) {
    fail(source, "IDX file " + labels_path.string() + ": expected labels of shape [N], found " +
                     shape_text(labels));
  }
  if (labels.size(0) != images.size(0)) {
    fail(source, "IDX files " + images_path.string() + " and " + labels_path.string() +
                     " disagree: " + std::to_string(images.size(0)) + " images but " +
                     std::to_string(labels.size(0)) + " labels");
  }
  const int max_label = labels.max().item<int>();
  if (max_label >= source.num_classes()) {
    fail(source, "IDX file " + labels_path.string() + ": expected labels in [0, " +
                     std::to_string(source.num_classes()) + "), found " +
                     std::to_string(max_label));
  }
  return ImageSplit{images.unsqueeze(/*dim=*/1), labels.to(torch::kInt64)};
}

}  // namespace

ImageDataset IdxImageSource::load(const std::filesystem::path& dir) const {
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) {
    fail(*this, "data directory " + dir.string() + " does not exist or is not a directory");
  }
  ImageDataset dataset;
  dataset.name = name();
  dataset.num_classes = num_classes();
  dataset.train = load_split(*this, dir, "train");
  dataset.test = load_split(*this, dir, "t10k");
  return dataset;
}

}  // namespace cflrun::data
