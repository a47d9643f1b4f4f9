#include <cflrun/data/partition.hpp>

#include <string>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

constexpr double kMaxPixel = 255.0;

void check_split(const ImageSplit& split, bool train) {
  const torch::Tensor& images = split.images;
  const bool ok = images.defined() && images.dim() == 4 && images.scalar_type() == torch::kUInt8;
  if (!ok) {
    throw ShapeError(std::string("client_samples: the ") + (train ? "train" : "test") +
                     " images must be [N, C, H, W] uint8, but got " +
                     (images.defined()
                          ? images.toString() + " " + std::to_string(images.dim()) + "-d tensor"
                          : std::string("an undefined tensor")));
  }
}

torch::Tensor as_index_tensor(const std::vector<std::int64_t>& indices) {
  return torch::tensor(indices, torch::kInt64);
}

}  // namespace

ClientSamples client_samples(const ImageDataset& dataset, const ClientShard& shard, bool train) {
  const ImageSplit& split = train ? dataset.train : dataset.test;
  check_split(split, train);
  if (static_cast<std::int64_t>(shard.label_map.size()) != dataset.num_classes) {
    throw ShapeError("client_samples: client " + std::to_string(shard.client) +
                     " has a label map of " + std::to_string(shard.label_map.size()) +
                     " entries, but the dataset has " + std::to_string(dataset.num_classes) +
                     " classes");
  }
  const torch::Tensor indices = as_index_tensor(train ? shard.train_indices : shard.test_indices);
  torch::Tensor inputs = split.images.index_select(0, indices).to(torch::kFloat32).div_(kMaxPixel);
  if (shard.rotation_quarters % 4 != 0) {
    // k > 0 turns from H towards W: counter-clockwise, like PIL's Image.rotate(90 * k).
    inputs = torch::rot90(inputs, shard.rotation_quarters, {/*H=*/2, /*W=*/3});
  }
  const torch::Tensor label_map = as_index_tensor(shard.label_map);
  torch::Tensor targets = label_map.index_select(0, split.labels.index_select(0, indices));
  return {inputs.contiguous(), targets.contiguous()};
}

}  // namespace cflrun::data
