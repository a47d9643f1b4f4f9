#include <cflrun/data/datasets/cifar10.hpp>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

constexpr std::int64_t kChannels = 3;
constexpr std::int64_t kSide = 32;
constexpr std::int64_t kRecordBytes = 1 + kChannels * kSide * kSide;  // label + R, G, B planes
constexpr int kTrainBatches = 5;

[[noreturn]] void fail(const std::filesystem::path& file, const std::string& what) {
  throw DataError(
      Cifar10Source().name() + ": " + file.string() + ": " + what +
      "; download https://www.cs.toronto.edu/~kriz/cifar-10-binary.tar.gz, unpack it and put "
      "its folder at datasets/cifar-10-batches-bin or pass --data-dir (see datasets/README.md)");
}

/// The records of one file as [n, 3 073] uint8.
torch::Tensor read_records(const std::filesystem::path& file) {
  std::error_code error;
  const auto status = std::filesystem::status(file, error);
  if (std::filesystem::exists(status) && !std::filesystem::is_regular_file(status)) {
    fail(file, std::filesystem::is_directory(status)
                   ? "a directory, not a data file"
                   : "not a regular file (a FIFO, socket or device)");
  }
  std::ifstream in(file, std::ios::binary | std::ios::ate);
  if (!in) {
    fail(file, "cannot open the file");
  }
  const auto size = static_cast<std::int64_t>(in.tellg());
  if (size <= 0 || size % kRecordBytes != 0) {
    fail(file, std::to_string(std::max<std::int64_t>(size, 0)) +
                   " bytes is not a whole number of " + std::to_string(kRecordBytes) +
                   "-byte records (truncated or not the CIFAR-10 binary version)");
  }
  // One read into the tensor: reading through istreambuf_iterator into a vector and cloning it
  // made a CIFAR-10 dry run 1.9 s instead of 1.3 s (2-core Intel VM, stand-in files).
  auto records = torch::empty({size / kRecordBytes, kRecordBytes}, torch::kUInt8);
  in.seekg(0);
  if (!in.read(reinterpret_cast<char*>(records.data_ptr<std::uint8_t>()), size)) {
    fail(file, "cannot read the file (an I/O error)");
  }
  return records;
}

ImageSplit load_split(const std::filesystem::path& dir, const std::vector<std::string>& names,
                      int num_classes) {
  std::vector<torch::Tensor> records;
  for (const auto& name : names) {
    records.push_back(read_records(dir / name));
    const auto labels = records.back().select(1, 0);
    if (labels.max().item<int>() >= num_classes) {
      fail(dir / name, "label " + std::to_string(labels.max().item<int>()) + " is outside [0, " +
                           std::to_string(num_classes) + ")");
    }
  }
  const auto all = torch::cat(records);
  return ImageSplit{
      all.narrow(1, 1, kRecordBytes - 1).reshape({-1, kChannels, kSide, kSide}).contiguous(),
      all.select(1, 0).to(torch::kInt64)};
}

}  // namespace

ImageDataset Cifar10Source::load(const std::filesystem::path& dir) const {
  std::vector<std::string> train;
  for (int batch = 1; batch <= kTrainBatches; ++batch) {
    train.push_back("data_batch_" + std::to_string(batch) + ".bin");
  }
  ImageDataset dataset;
  dataset.name = name();
  dataset.num_classes = num_classes();
  dataset.train = load_split(dir, train, num_classes());
  dataset.test = load_split(dir, {"test_batch.bin"}, num_classes());
  return dataset;
}

}  // namespace cflrun::data
