#include <cflrun/io/idx_reader.hpp>

#include <functional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

#include "idx_test_files.hpp"

namespace cflrun::io {
namespace {

using test::Bytes;

/// Runs `read` expecting a DataError and returns its message ("" after a test failure otherwise).
std::string data_error_message(const std::function<void()>& read) {
  try {
    read();
  } catch (const DataError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a DataError";
  return "";
}

void expect_read_error(const std::filesystem::path& path, const std::vector<std::string>& parts) {
  EXPECT_THROW(read_idx(path), DataError);
  const std::string message = data_error_message([&] { read_idx(path); });
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  for (const std::string& part : parts) {
    EXPECT_NE(message.find(part), std::string::npos) << "missing '" << part << "' in: " << message;
  }
}

Bytes counting_bytes(int n) {
  Bytes data;
  for (int i = 0; i < n; ++i)
    data.push_back(static_cast<unsigned char>((i * 37 + 200) % 256));
  return data;
}

void expect_tensor_bytes(const torch::Tensor& tensor, const std::vector<std::int64_t>& shape,
                         const Bytes& expected) {
  ASSERT_EQ(tensor.scalar_type(), torch::kUInt8);
  ASSERT_EQ(tensor.sizes().vec(), shape);
  ASSERT_TRUE(tensor.is_contiguous());
  const std::uint8_t* data = tensor.data_ptr<std::uint8_t>();
  const Bytes got(data, data + tensor.numel());
  EXPECT_EQ(got, expected);
}

TEST(IdxReader, ReadsPlainFileBitExactly) {
  const test::TempDir dir;
  const Bytes data = counting_bytes(2 * 3 * 4);
  test::write_plain(dir.path() / "cube", test::idx_bytes({2, 3, 4}, data));
  expect_tensor_bytes(read_idx(dir.path() / "cube"), {2, 3, 4}, data);
}

TEST(IdxReader, ReadsGzipFileBitExactly) {
  const test::TempDir dir;
  const Bytes data = {0, 9, 255, 128, 7};
  test::write_gzip(dir.path() / "labels.gz", test::idx_bytes({5}, data));
  expect_tensor_bytes(read_idx(dir.path() / "labels.gz"), {5}, data);
}

TEST(IdxReader, ReadsFourDimensionsAcrossManyGzipBlocks) {
  const test::TempDir dir;
  const Bytes data = counting_bytes(3 * 5 * 64 * 700);  // 672 000 bytes: many inflate calls
  test::write_gzip(dir.path() / "big.gz", test::idx_bytes({3, 5, 64, 700}, data));
  expect_tensor_bytes(read_idx(dir.path() / "big.gz"), {3, 5, 64, 700}, data);
}

TEST(IdxReader, TruncatedDataThrowsWithExpectedAndFoundBytes) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "short", test::idx_bytes({2, 3, 4}, counting_bytes(20)));
  expect_read_error(dir.path() / "short", {"expected 24 bytes", "found 20", "truncated"});
}

TEST(IdxReader, TruncatedHeaderThrows) {
  const test::TempDir dir;
  Bytes bytes = test::idx_bytes({2, 3, 4}, {});
  bytes.resize(9);  // magic and one and a quarter sizes
  test::write_plain(dir.path() / "header", bytes);
  expect_read_error(dir.path() / "header", {"expected 12 bytes of dimension sizes", "found 5"});
}

TEST(IdxReader, TruncatedGzipStreamThrows) {
  const test::TempDir dir;
  const auto full = dir.path() / "full.gz";
  test::write_gzip(full, test::idx_bytes({3, 5, 64, 700}, counting_bytes(3 * 5 * 64 * 700)));
  Bytes gz = test::read_plain(full);
  gz.resize(gz.size() / 2);
  test::write_plain(dir.path() / "half.gz", gz);
  expect_read_error(dir.path() / "half.gz", {"expected 672000 bytes", "truncated"});
}

TEST(IdxReader, WrongMagicThrows) {
  const test::TempDir dir;
  Bytes bytes = test::idx_bytes({4}, {1, 2, 3, 4});
  bytes[1] = 0x01;
  test::write_plain(dir.path() / "magic", bytes);
  expect_read_error(dir.path() / "magic", {"0x00 0x00", "found 0x00 0x01", "not an IDX file"});
}

TEST(IdxReader, WrongTypeThrowsNamingFoundType) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "floats", test::idx_bytes({1}, {0, 0, 0, 0}, 0x0D));
  expect_read_error(dir.path() / "floats", {"0x08", "found 0x0D (float32)"});
}

TEST(IdxReader, DimensionCountOutsideOneToFourThrows) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "zero", test::idx_bytes({}, {}));
  test::write_plain(dir.path() / "five", test::idx_bytes({1, 1, 1, 1, 1}, {7}));
  expect_read_error(dir.path() / "zero", {"expected 1 to 4 dimensions, found 0"});
  expect_read_error(dir.path() / "five", {"expected 1 to 4 dimensions, found 5"});
}

TEST(IdxReader, ZeroOrAbsurdSizeThrows) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "empty", test::idx_bytes({3, 0}, {}));
  test::write_plain(dir.path() / "huge", test::idx_bytes({65536, 32768}, {1, 2}));
  expect_read_error(dir.path() / "empty", {"[3, 0]", "must be positive"});
  expect_read_error(dir.path() / "huge", {"[65536, 32768]", "below 2^31"});
}

TEST(IdxReader, TrailingBytesThrow) {
  const test::TempDir dir;
  Bytes bytes = test::idx_bytes({2, 2}, {1, 2, 3, 4});
  bytes.push_back(0xAB);
  test::write_gzip(dir.path() / "long.gz", bytes);
  expect_read_error(dir.path() / "long.gz", {"after the 4 data bytes", "corrupt"});
}

TEST(IdxReader, CorruptGzipThrowsWithZlibMessage) {
  const test::TempDir dir;
  // A valid 10-byte gzip header (magic 1f 8b, deflate, no flags) followed by an invalid block.
  Bytes bytes = {0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03};
  bytes.insert(bytes.end(), 32, 0xFF);
  test::write_plain(dir.path() / "bad.gz", bytes);
  expect_read_error(dir.path() / "bad.gz", {"corrupt gzip stream (zlib: invalid block type)"});
}

TEST(IdxReader, MissingFileThrows) {
  const test::TempDir dir;
  expect_read_error(dir.path() / "absent.gz", {"does not exist"});
}

TEST(IdxReader, DirectoryInsteadOfFileThrows) {
  const test::TempDir dir;
  expect_read_error(dir.path(), {"not a regular file"});
}

TEST(FindIdxFile, PrefersGzipWhenBothExist) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "x-idx1-ubyte", test::idx_bytes({1}, {1}));
  test::write_gzip(dir.path() / "x-idx1-ubyte.gz", test::idx_bytes({1}, {2}));
  EXPECT_EQ(find_idx_file(dir.path(), "x-idx1-ubyte"), dir.path() / "x-idx1-ubyte.gz");
}

TEST(FindIdxFile, FallsBackToPlainFile) {
  const test::TempDir dir;
  test::write_plain(dir.path() / "x-idx1-ubyte", test::idx_bytes({1}, {1}));
  EXPECT_EQ(find_idx_file(dir.path(), "x-idx1-ubyte"), dir.path() / "x-idx1-ubyte");
}

TEST(FindIdxFile, ListsBothTriedPathsWhenNeitherExists) {
  const test::TempDir dir;
  EXPECT_THROW(find_idx_file(dir.path(), "x-idx1-ubyte"), DataError);
  const std::string message =
      data_error_message([&] { find_idx_file(dir.path(), "x-idx1-ubyte"); });
  EXPECT_NE(message.find((dir.path() / "x-idx1-ubyte.gz").string()), std::string::npos) << message;
  EXPECT_NE(message.find(" and " + (dir.path() / "x-idx1-ubyte").string()), std::string::npos)
      << message;
}

TEST(IdxReader, RealFashionMnistTestLabelsAreBalanced) {
  const std::filesystem::path path =
      std::filesystem::path(CFLRUN_FMNIST_DIR) / "t10k-labels-idx1-ubyte.gz";
  const torch::Tensor labels = read_idx(path);
  ASSERT_EQ(labels.sizes().vec(), std::vector<std::int64_t>{10000});
  EXPECT_EQ(labels[0].item<int>(), 9);  // the first test image is an ankle boot
  const torch::Tensor counts = torch::bincount(labels.to(torch::kInt64));
  ASSERT_EQ(counts.numel(), 10);
  EXPECT_TRUE(torch::equal(counts, torch::full({10}, 1000, torch::kInt64))) << counts;
}

}  // namespace
}  // namespace cflrun::io
