#include <cflrun/data/dataset.hpp>
#include <cflrun/data/image_source.hpp>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

#include "../io/idx_test_files.hpp"

namespace cflrun::data {
namespace {

using test::Bytes;

constexpr std::uint32_t kSide = 28;

std::string error_message(const std::function<void()>& call) {
  try {
    call();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a cflrun::Error";
  return "";
}

void expect_contains(const std::string& message, const std::string& part) {
  EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
}

/// Writes `count` images of side `side` whose pixel (i, r, c) is (i + r + c) mod 256.
void write_images(const std::filesystem::path& path, std::uint32_t count, std::uint32_t side) {
  Bytes pixels;
  for (std::uint32_t i = 0; i < count * side * side; ++i) {
    pixels.push_back(static_cast<unsigned char>(i / (side * side) + (i / side) % side + i % side));
  }
  test::write_gzip(path, test::idx_bytes({count, side, side}, pixels));
}

/// Writes one split of a tiny dataset: images gzip-compressed, labels plain.
void write_split(const std::filesystem::path& dir, const std::string& prefix, std::uint32_t images,
                 const Bytes& labels, std::uint32_t side = kSide) {
  write_images(dir / (prefix + "-images-idx3-ubyte.gz"), images, side);
  test::write_plain(dir / (prefix + "-labels-idx1-ubyte"),
                    test::idx_bytes({static_cast<std::uint32_t>(labels.size())}, labels));
}

torch::Tensor class_counts(const ImageSplit& split) {
  return torch::bincount(split.labels, /*weights=*/{}, /*minlength=*/10);
}

TEST(Dataset, LoadsTinyDatasetWithExactValues) {
  const test::TempDir dir;
  write_split(dir.path(), "train", 3, {4, 0, 9});
  write_split(dir.path(), "t10k", 2, {7, 7});
  const ImageDataset dataset = load_image_dataset("mnist", dir.path());
  EXPECT_EQ(dataset.name, "mnist");
  EXPECT_EQ(dataset.num_classes, 10);
  ASSERT_EQ(dataset.train.size(), 3);
  ASSERT_EQ(dataset.test.size(), 2);
  ASSERT_EQ(dataset.train.images.sizes().vec(), (std::vector<std::int64_t>{3, 1, 28, 28}));
  EXPECT_EQ(dataset.train.images.scalar_type(), torch::kUInt8);
  EXPECT_EQ(dataset.train.labels.scalar_type(), torch::kInt64);
  EXPECT_TRUE(torch::equal(dataset.train.labels, torch::tensor({4, 0, 9}, torch::kInt64)));
  EXPECT_EQ(dataset.train.images[2][0][5][27].item<int>(), 2 + 5 + 27);
  EXPECT_EQ(dataset.test.images[1][0][27][27].item<int>(), (1 + 27 + 27) % 256);
}

TEST(Dataset, LoadsRealFashionMnist) {
  const ImageDataset dataset = load_image_dataset("fmnist", CFLRUN_FMNIST_DIR);
  EXPECT_EQ(dataset.name, "fmnist");
  ASSERT_EQ(dataset.train.images.sizes().vec(), (std::vector<std::int64_t>{60000, 1, 28, 28}));
  ASSERT_EQ(dataset.test.images.sizes().vec(), (std::vector<std::int64_t>{10000, 1, 28, 28}));
  EXPECT_EQ(dataset.train.labels[0].item<std::int64_t>(), 9);  // ankle boot
  EXPECT_EQ(dataset.test.labels[0].item<std::int64_t>(), 9);   // ankle boot
  EXPECT_TRUE(torch::equal(class_counts(dataset.train), torch::full({10}, 6000, torch::kInt64)));
  EXPECT_TRUE(torch::equal(class_counts(dataset.test), torch::full({10}, 1000, torch::kInt64)));
  EXPECT_EQ(dataset.train.images.max().item<int>(), 255);
}

TEST(Dataset, MissingDirectoryNamesDirAndFix) {
  const test::TempDir dir;
  const auto absent = dir.path() / "nowhere";
  EXPECT_THROW(load_image_dataset("fmnist", absent), DataError);
  const std::string message = error_message([&] { load_image_dataset("fmnist", absent); });
  expect_contains(message, absent.string());
  expect_contains(message, "apt-get install dataset-fashion-mnist");
  expect_contains(message, "--data-dir");
}

TEST(Dataset, MissingFileNamesTriedPathsAndMnistScript) {
  const test::TempDir dir;
  EXPECT_THROW(load_image_dataset("mnist", dir.path()), DataError);
  const std::string message = error_message([&] { load_image_dataset("mnist", dir.path()); });
  expect_contains(message, (dir.path() / "train-images-idx3-ubyte.gz").string());
  expect_contains(message, "datasets/get_mnist.sh");
  expect_contains(message, "--data-dir");
}

TEST(Dataset, MismatchedCountsThrow) {
  const test::TempDir dir;
  write_split(dir.path(), "train", 3, {1, 2});
  write_split(dir.path(), "t10k", 1, {0});
  EXPECT_THROW(load_image_dataset("mnist", dir.path()), DataError);
  const std::string message = error_message([&] { load_image_dataset("mnist", dir.path()); });
  expect_contains(message, (dir.path() / "train-labels-idx1-ubyte").string());
  expect_contains(message, "3 images but 2 labels");
}

TEST(Dataset, ImagesNot28By28Throw) {
  const test::TempDir dir;
  write_split(dir.path(), "train", 2, {1, 2}, 32);
  write_split(dir.path(), "t10k", 1, {0});
  const std::string message = error_message([&] { load_image_dataset("mnist", dir.path()); });
  expect_contains(message, "expected images of shape [N, 28, 28], found [2, 32, 32]");
}

TEST(Dataset, LabelOutOfRangeThrows) {
  const test::TempDir dir;
  write_split(dir.path(), "train", 2, {1, 2});
  write_split(dir.path(), "t10k", 2, {0, 10});
  EXPECT_THROW(load_image_dataset("mnist", dir.path()), DataError);
  const std::string message = error_message([&] { load_image_dataset("mnist", dir.path()); });
  expect_contains(message, (dir.path() / "t10k-labels-idx1-ubyte").string());
  expect_contains(message, "expected labels in [0, 10), found 10");
}

TEST(Dataset, LoadImageDatasetRejectsUnknownAndGeneratedDatasets) {
  EXPECT_EQ(error_message([] { load_image_dataset("x", "."); }),
            "--dataset must be one of fmnist, mnist, cifar10, linreg, but got 'x'");
  EXPECT_THROW(load_image_dataset("linreg", "."), ConfigError);
}

constexpr std::int64_t kOfficialMnistTrain = 60000;

/// The official MNIST (LeCun, Cortes and Burges): ../shared/datasets/mnist-full beside the source
/// tree, or datasets/mnist where setup.sh installed it (tests/CMakeLists.txt).
TEST(DatasetOnThisMachine, LoadsOfficialMnist) {
  const std::filesystem::path dir = CFLRUN_MNIST_FULL_DIR;
  if (!std::filesystem::is_directory(dir)) {
    GTEST_SKIP() << dir << " absent: run datasets/get_mnist.sh to test it";
  }
  const ImageDataset dataset = load_image_dataset("mnist", dir);
  if (dataset.train.size() != kOfficialMnistTrain) {
    GTEST_SKIP() << dir << " holds " << dataset.train.size()
                 << " training digits, not the official set";
  }
  ASSERT_EQ(dataset.test.size(), 10000);
  // Class counts of the official files (../shared/datasets/README.md).
  const torch::Tensor train =
      torch::tensor({5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}, torch::kInt64);
  const torch::Tensor test =
      torch::tensor({980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}, torch::kInt64);
  EXPECT_TRUE(torch::equal(class_counts(dataset.train), train));
  EXPECT_TRUE(torch::equal(class_counts(dataset.test), test));
  // The files' order: the first training digits are 5 0 4 1 9 2 1 3 1 4, the first test ones
  // 7 2 1 0 4 1 4 9 5 9.
  EXPECT_TRUE(torch::equal(dataset.train.labels.slice(0, 0, 10),
                           torch::tensor({5, 0, 4, 1, 9, 2, 1, 3, 1, 4}, torch::kInt64)));
  EXPECT_TRUE(torch::equal(dataset.test.labels.slice(0, 0, 10),
                           torch::tensor({7, 2, 1, 0, 4, 1, 4, 9, 5, 9}, torch::kInt64)));
  EXPECT_EQ(dataset.train.images.max().item<int>(), 255);
  EXPECT_EQ(dataset.train.images.min().item<int>(), 0);
}

}  // namespace
}  // namespace cflrun::data
