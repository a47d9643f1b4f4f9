#include <cflrun/data/datasets/cifar10.hpp>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/data/partition.hpp>

#include "partition_spec_for_tests.hpp"

namespace cflrun::data {
namespace {

constexpr int kRecordBytes = 3073;

/// Record r of a file: label r % 10; pixel (c, y, x) = (file * 7 + r + 3 c + y + x) % 256.
std::string record(int file, int r, int label_override = -1) {
  std::string bytes(kRecordBytes, '\0');
  bytes[0] = static_cast<char>(label_override >= 0 ? label_override : r % 10);
  for (int c = 0; c < 3; ++c) {
    for (int y = 0; y < 32; ++y) {
      for (int x = 0; x < 32; ++x) {
        bytes[static_cast<std::size_t>(1 + c * 1024 + y * 32 + x)] =
            static_cast<char>((file * 7 + r + 3 * c + y + x) % 256);
      }
    }
  }
  return bytes;
}

/// A directory with the six CIFAR-10 binary files of `records` records each.
std::filesystem::path write_cifar(const std::string& name, int records) {
  const auto dir = std::filesystem::temp_directory_path() / ("cflrun_cifar10_" + name);
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const std::vector<std::string> files{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin",
                                       "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"};
  for (std::size_t f = 0; f < files.size(); ++f) {
    std::ofstream out(dir / files[f], std::ios::binary);
    for (int r = 0; r < records; ++r) {
      out << record(static_cast<int>(f), r);
    }
  }
  return dir;
}

std::string error_of(const std::filesystem::path& dir) {
  try {
    Cifar10Source().load(dir);
  } catch (const DataError& e) {
    return e.what();
  }
  return "no error";
}

TEST(Cifar10, LoadsRecordsAsChannelPlanes) {
  const auto dataset = Cifar10Source().load(write_cifar("good", 20));
  EXPECT_EQ(dataset.name, "cifar10");
  EXPECT_EQ(dataset.train.images.sizes(), (std::vector<std::int64_t>{100, 3, 32, 32}));
  EXPECT_EQ(dataset.test.images.sizes(), (std::vector<std::int64_t>{20, 3, 32, 32}));
  EXPECT_EQ(dataset.train.images.scalar_type(), torch::kUInt8);
  // Train sample 25 is record 5 of data_batch_2 (file 1); its green (c = 1) pixel (y 2, x 4).
  EXPECT_EQ(dataset.train.images[25][1][2][4].item<int>(), (1 * 7 + 5 + 3 + 2 + 4) % 256);
  EXPECT_EQ(dataset.train.labels[25].item<std::int64_t>(), 5);
  EXPECT_EQ(dataset.test.images[3][2][31][0].item<int>(), (5 * 7 + 3 + 6 + 31) % 256);
}

TEST(Cifar10, BadFilesNameTheFileAndTheDownload) {
  auto dir = write_cifar("missing", 10);
  std::filesystem::remove(dir / "test_batch.bin");
  auto message = error_of(dir);
  EXPECT_NE(message.find("test_batch.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("cifar-10-binary.tar.gz"), std::string::npos) << message;

  dir = write_cifar("truncated", 10);
  std::filesystem::resize_file(dir / "data_batch_3.bin", 10 * kRecordBytes - 5);
  message = error_of(dir);
  EXPECT_NE(message.find("data_batch_3.bin"), std::string::npos) << message;
  EXPECT_NE(message.find("whole number"), std::string::npos) << message;
  std::filesystem::resize_file(dir / "data_batch_3.bin", 0);
  message = error_of(dir);
  EXPECT_NE(message.find("data_batch_3.bin: 0 bytes is not a whole number"), std::string::npos)
      << message;

  dir = write_cifar("label", 10);
  std::ofstream(dir / "data_batch_4.bin", std::ios::binary | std::ios::app)
      << record(3, 0, /*label_override=*/10);
  message = error_of(dir);
  EXPECT_NE(message.find("data_batch_4.bin: label 10"), std::string::npos) << message;
}

TEST(Cifar10, ClientSamplesKeepThreeChannelsAndRotateByHalfTurns) {
  const auto dataset = Cifar10Source().load(write_cifar("samples", 40));
  ClientShard shard;
  shard.train_indices = {0, 7, 150};
  shard.label_map = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  const auto plain = client_samples(dataset, shard, /*train=*/true);
  EXPECT_EQ(plain.inputs.sizes(), (std::vector<std::int64_t>{3, 3, 32, 32}));
  EXPECT_LE(plain.inputs.max().item<float>(), 1.0F);
  EXPECT_FLOAT_EQ(plain.inputs[1][2][0][1].item<float>(), ((7 + 6 + 1) % 256) / 255.0F);
  shard.rotation_quarters = 2;
  const auto turned = client_samples(dataset, shard, /*train=*/true);
  EXPECT_TRUE(torch::equal(turned.inputs, plain.inputs.flip({2, 3})));
}

TEST(Cifar10, LabelSkew1PartitionsACifarShapedDataset) {
  const auto dataset =
      Cifar10Source().load(write_cifar("partition", 100));  // 50 train images per class
  const auto partition = make_partition(spec_of(PartitionKind::kLabelSkew1, 5, 2, 40, 8), dataset);
  ASSERT_EQ(partition.clients.size(), 10U);
  for (const auto& shard : partition.clients) {
    for (const auto index : shard.train_indices) {
      EXPECT_EQ(dataset.train.labels[index].item<std::int64_t>() / 2, shard.true_cluster);
    }
  }
}

}  // namespace
}  // namespace cflrun::data
