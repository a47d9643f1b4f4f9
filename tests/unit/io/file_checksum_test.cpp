#include <cflrun/io/file_checksum.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_rows.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/io/tensor_store.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::io {
namespace {

namespace fs = std::filesystem;

class FileChecksum : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("cflrun_checksum_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A complete 3-round result file (2 clients, 2 models, loss vectors), published at `path`.
  ResultWriter write_rounds(const fs::path& path, int rounds) {
    ResultLayout layout;
    layout.num_clients = 2;
    layout.num_models = 2;
    layout.has_loss_vectors = true;
    layout.phase_names = {"train"};
    layout.planned_rounds = rounds;
    layout.extra_datasets = {{"/algorithm/norms", {2}}};
    ResultWriter writer(path, layout, /*overwrite=*/true);
    for (int r = 0; r < rounds; ++r) {
      RoundRecord record;
      for (const char* path : {schema::kAccuracy, schema::kAccuracyWeighted, schema::kTestLoss, schema::kTrainLoss,
                               schema::kWorkerComputeSeconds}) {
        record.set(path, 0.0);
      }
      record.set(schema::kAri, r == 0 ? std::nan("") : 0.5 * r);
      record.set(schema::kBytesSent, std::int64_t{1000} + r);
      record.set(schema::kBytesReceived, std::int64_t{0});
      record.set(schema::kSeconds, std::vector<double>{0.25 * r});
      record.set(schema::kAssignment, std::vector<int>{r % 2, 1 - r % 2});
      record.set(schema::kLossVectors, std::vector<float>{1.0f * r, 2.0f, 3.0f, 4.0f / (r + 1)});
      record.set(schema::kClientAccuracy, std::vector<float>{0.5f, 0.25f * r});
      record.set(schema::kClientTestLoss, std::vector<float>{1.5f, 2.5f});
      record.set(schema::kLiveModels, 2);
      record.set("/algorithm/norms", std::vector<float>{0.125f * r, 7.0f});
      writer.append_round(record);
    }
    return writer;
  }

  static void flip_byte(const fs::path& path, std::uint64_t offset) {
    std::fstream file(path, std::ios::binary | std::ios::in | std::ios::out);
    file.seekg(static_cast<std::streamoff>(offset));
    char byte = 0;
    file.get(byte);
    file.seekp(static_cast<std::streamoff>(offset));
    file.put(static_cast<char>(byte ^ 0x10));
  }

  fs::path dir_;
};

TEST_F(FileChecksum, CompletedResultFileIsSealedAndEveryFlippedByteIsFound) {
  const auto partial = dir_ / "run.h5.partial";
  const auto out = dir_ / "run.h5";
  auto writer = write_rounds(partial, 3);
  EXPECT_EQ(check_file_checksum(partial).state,
            ChecksumState::kUnsealed);  // a partial file is never sealed
  writer.complete_into(out);
  EXPECT_FALSE(fs::exists(partial));
  ASSERT_EQ(check_file_checksum(out).state, ChecksumState::kVerified)
      << check_file_checksum(out).problem;
  EXPECT_EQ(ResultReader(out).status(), schema::kStatusComplete);
  const auto size = fs::file_size(out);
  const auto copy = dir_ / "copy.h5";
  for (std::uint64_t offset = 0; offset < size;
       offset += 97) {  // the seal, HDF5's metadata, the data
    fs::copy_file(out, copy, fs::copy_options::overwrite_existing);
    flip_byte(copy, offset);
    const auto check = check_file_checksum(copy);
    EXPECT_EQ(check.state, ChecksumState::kDamaged) << "byte " << offset;
    EXPECT_NE(check.problem.find(copy.string()), std::string::npos) << check.problem;
  }
  fs::copy_file(out, copy, fs::copy_options::overwrite_existing);
  std::ofstream(copy, std::ios::app) << "x";  // a byte added
  EXPECT_EQ(check_file_checksum(copy).state, ChecksumState::kDamaged);
}

TEST_F(FileChecksum, TensorStoreRefusesAnyFlippedByteNamingTheFile) {
  const auto path = dir_ / "state.h5";
  write_tensor_groups(path, {{"models", {{"states", torch::randn({2, 50})}}}});
  ASSERT_NO_THROW(read_tensor_groups(path));
  const auto size = fs::file_size(path);
  const auto copy = dir_ / "copy.h5";
  for (std::uint64_t offset = 0; offset < size; offset += 61) {
    fs::copy_file(path, copy, fs::copy_options::overwrite_existing);
    flip_byte(copy, offset);
    try {
      read_tensor_groups(copy);
      ADD_FAILURE() << "byte " << offset << " flipped, read anyway";
    } catch (const DataError& e) {
      EXPECT_NE(std::string(e.what()).find(copy.string()), std::string::npos) << e.what();
    }
  }
}

TEST_F(FileChecksum, KeptRowsRebuildAnIdenticalFileAndDifferencesAreNamed) {
  const auto first = dir_ / "first.h5";
  const auto writer = write_rounds(first, 3);
  const auto rows = writer.kept_rows();
  ASSERT_EQ(rows.at(schema::kLossVectors).sizes(), (std::vector<std::int64_t>{3, 2, 2}));
  EXPECT_EQ(rows.at(schema::kBytesSent).scalar_type(), torch::kInt64);
  EXPECT_EQ(row_difference(first, rows, /*whole=*/true), "");  // NaN ARI of round 1 included

  auto again = write_rounds(dir_ / "again.h5", 0);
  again.append_rows(rows);
  EXPECT_EQ(again.completed_rounds(), 3);
  EXPECT_EQ(row_difference(dir_ / "again.h5", rows, true), "");
  EXPECT_EQ(ResultReader(dir_ / "again.h5").read_f32("/algorithm/norms"),
            ResultReader(first).read_f32("/algorithm/norms"));

  auto fewer = rows;
  for (auto& [path, tensor] : fewer) {
    tensor = tensor.narrow(0, 0, 2);
  }
  EXPECT_EQ(row_difference(first, fewer, /*whole=*/false), "");  // a prefix
  EXPECT_NE(row_difference(first, fewer, /*whole=*/true).find("holds 3 rounds, expected 2"),
            std::string::npos);
  auto changed = rows;
  changed.at(schema::kClientAccuracy) = changed.at(schema::kClientAccuracy).clone();
  changed.at(schema::kClientAccuracy)[1][1] = 0.5f;
  const auto difference = row_difference(first, changed, false);
  EXPECT_NE(difference.find(first.string()), std::string::npos) << difference;
  EXPECT_NE(difference.find(schema::kClientAccuracy), std::string::npos) << difference;
  EXPECT_NE(row_difference(dir_ / "missing.h5", rows, false), "");

  auto wrong = rows;
  wrong.erase(schema::kAri);
  auto other = write_rounds(dir_ / "other.h5", 0);
  EXPECT_THROW(other.append_rows(wrong), DataError);
  wrong = rows;
  wrong.at(schema::kAri) = wrong.at(schema::kAri).to(torch::kFloat32);
  EXPECT_THROW(other.append_rows(wrong), DataError);
  EXPECT_EQ(other.completed_rounds(), 0);
}

}  // namespace
}  // namespace cflrun::io
