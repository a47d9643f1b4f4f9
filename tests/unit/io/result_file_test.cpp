#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_writer.hpp>

#include <cmath>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "../../integration/check_failure.hpp"

#include <cflrun/core/error.hpp>
#include <cflrun/io/hdf5_handle.hpp>
#include <cflrun/io/result_schema.hpp>

namespace cflrun::io {
namespace {

namespace fs = std::filesystem;

constexpr int kClients = 4;
constexpr int kModels = 3;

ResultLayout make_layout(bool has_loss_vectors) {
  ResultLayout layout;
  layout.num_clients = kClients;
  layout.num_models = kModels;
  layout.has_loss_vectors = has_loss_vectors;
  layout.phase_names = {"loss_vectors", "train", "aggregate"};
  layout.planned_rounds = 10;
  return layout;
}

/// Round r's record, with values distinct per round, field and client. Round 0 has ARI = NaN.
RoundRecord make_record(int r, bool has_loss_vectors) {
  RoundRecord record;
  record.set(schema::kAri, r == 0 ? std::numeric_limits<double>::quiet_NaN() : 1.0 / (r + 2));
  record.set(schema::kAccuracy, 0.1 * (r + 1));
  record.set(schema::kAccuracyWeighted, 0.09 * (r + 1));
  record.set(schema::kTestLoss, 2.0 / 3.0 + r);
  record.set(schema::kTrainLoss, 1e-3 * (r + 7));
  record.set(schema::kWorkerComputeSeconds, 0.25 * (r + 1));
  record.set(schema::kBytesSent, std::int64_t{1000003} * (r + 1));
  record.set(schema::kBytesReceived, std::int64_t{77} * (r + 5));
  record.set(schema::kSeconds, std::vector<double>{1.5 + r, 2.25 + r, 1.0 / 7.0 + r});
  record.set(schema::kLiveModels, 0);
  std::vector<int> assignment;
  std::vector<float> accuracy, test_loss, loss_vectors;
  for (int c = 0; c < kClients; ++c) {
    assignment.push_back((c + r) % kModels);
    accuracy.push_back(0.5f + 0.01f * static_cast<float>(10 * r + c));
    test_loss.push_back(1.0f / static_cast<float>(3 + 10 * r + c));
    for (int k = 0; has_loss_vectors && k < kModels; ++k) {
      loss_vectors.push_back(static_cast<float>(100 * r + 10 * c + k) / 9.0f);
    }
  }
  record.set(schema::kAssignment, assignment);
  record.set(schema::kClientAccuracy, accuracy);
  record.set(schema::kClientTestLoss, test_loss);
  if (has_loss_vectors) {
    record.set(schema::kLossVectors, loss_vectors);
  }
  return record;
}

/// The row of `path` in `record`, as T values.
template <typename T>
std::vector<T> row_of(const RoundRecord& record, const char* path) {
  const torch::Tensor row = record.find(path)->to(c10::CppTypeToScalarType<T>::value);
  return {row.data_ptr<T>(), row.data_ptr<T>() + row.numel()};
}

/// A reader of `path` rows as T values, for expect_rows_bitwise.
template <typename T>
auto rows_of(const char* path) {
  return [path](const RoundRecord& record) { return row_of<T>(record, path); };
}

std::uint64_t bits(double value) {
  std::uint64_t out = 0;
  std::memcpy(&out, &value, sizeof(out));
  return out;
}

std::uint32_t bits(float value) {
  std::uint32_t out = 0;
  std::memcpy(&out, &value, sizeof(out));
  return out;
}

/// Expects `actual` to hold, bit for bit, field(round r) for r = 0..rounds-1, concatenated.
template <typename T, typename Field>
void expect_rows_bitwise(const std::vector<T>& actual, int rounds, bool has_loss_vectors,
                         Field field) {
  std::vector<T> expected;
  for (int r = 0; r < rounds; ++r) {
    const auto row = field(make_record(r, has_loss_vectors));
    expected.insert(expected.end(), std::begin(row), std::end(row));
  }
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    EXPECT_EQ(bits(actual[i]), bits(expected[i])) << "element " << i;
  }
}

/// Checks every per-round dataset of a file holding rounds 0..rounds-1 from make_record.
void expect_rounds(const ResultReader& reader, int rounds, bool has_loss_vectors) {
  using Shape = std::vector<std::size_t>;
  const auto t = static_cast<std::size_t>(rounds);
  Shape shape;
  expect_rows_bitwise(reader.read_f64(schema::kAri, &shape), rounds, has_loss_vectors,
                      rows_of<double>(schema::kAri));
  EXPECT_EQ(shape, Shape({t}));
  for (const char* path :
       {schema::kAccuracy, schema::kAccuracyWeighted, schema::kTestLoss, schema::kTrainLoss,
        schema::kWorkerComputeSeconds, schema::kBytesSent, schema::kBytesReceived}) {
    expect_rows_bitwise(reader.read_f64(path), rounds, has_loss_vectors, rows_of<double>(path));
  }
  expect_rows_bitwise(reader.read_f64(schema::kSeconds, &shape), rounds, has_loss_vectors,
                      rows_of<double>(schema::kSeconds));
  EXPECT_EQ(shape, Shape({t, 3}));
  const std::vector<int> assignment = reader.read_i32(schema::kAssignment, &shape);
  EXPECT_EQ(shape, Shape({t, kClients}));
  std::vector<int> expected_assignment;
  for (int r = 0; r < rounds; ++r) {
    const auto row = row_of<int>(make_record(r, has_loss_vectors), schema::kAssignment);
    expected_assignment.insert(expected_assignment.end(), row.begin(), row.end());
  }
  EXPECT_EQ(assignment, expected_assignment);
  expect_rows_bitwise(reader.read_f32(schema::kClientAccuracy, &shape), rounds, has_loss_vectors,
                      rows_of<float>(schema::kClientAccuracy));
  EXPECT_EQ(shape, Shape({t, kClients}));
  expect_rows_bitwise(reader.read_f32(schema::kClientTestLoss, &shape), rounds, has_loss_vectors,
                      rows_of<float>(schema::kClientTestLoss));
  EXPECT_EQ(shape, Shape({t, kClients}));
  if (has_loss_vectors) {
    expect_rows_bitwise(reader.read_f32(schema::kLossVectors, &shape), rounds, true,
                        rows_of<float>(schema::kLossVectors));
    EXPECT_EQ(shape, Shape({t, kClients, kModels}));
  }
}

/// In a forked child: writes two rounds, then dies by SIGKILL with the writer still open, as a
/// job killed by the scheduler would. Exits with code 2 if writing throws.
[[noreturn]] void write_two_rounds_then_die(const fs::path& path) {
  try {
    ResultWriter writer(path, make_layout(true), false);
    writer.write_config({{"seed", "7"}});
    writer.append_round(make_record(0, true));
    writer.append_round(make_record(1, true));
    std::raise(SIGKILL);
  } catch (...) {
  }
  _exit(2);
}

std::string file_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

class ResultFile : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ =
        fs::temp_directory_path() / ("cflrun_result_file_" + std::to_string(getpid()) + "_" + test);
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  /// A path inside a directory that does not exist yet (the writer must create it).
  fs::path out() const { return dir_ / "nested" / "run.h5"; }

  fs::path dir_;
};

TEST_F(ResultFile, RoundTripsConfigTrueClustersAndThreeRounds) {
  const std::vector<std::pair<std::string, std::string>> config = {
      {"seed", "42"}, {"algorithm", "clove"}, {"git_commit", "0123abc"}, {"blas", ""}};
  {
    ResultWriter writer(out(), make_layout(true), /*overwrite=*/false);
    writer.write_config(config);
    writer.write_true_clusters({0, 0, 1, 2});
    for (int r = 0; r < 3; ++r) {
      writer.append_round(make_record(r, true));
    }
    EXPECT_EQ(writer.completed_rounds(), 3);
  }
  const ResultReader reader(out());
  const std::vector<std::pair<std::string, std::string>> sorted = {
      {"algorithm", "clove"}, {"blas", ""}, {"git_commit", "0123abc"}, {"seed", "42"}};
  EXPECT_EQ(reader.config(), sorted);
  EXPECT_EQ(reader.config_value("algorithm"), "clove");
  EXPECT_EQ(reader.completed_rounds(), 3);
  EXPECT_EQ(reader.planned_rounds(), 10);
  EXPECT_EQ(reader.status(), "running");
  EXPECT_EQ(reader.phase_names(), (std::vector<std::string>{"loss_vectors", "train", "aggregate"}));
  std::vector<std::size_t> shape;
  EXPECT_EQ(reader.read_i32(schema::kTrueCluster, &shape), (std::vector<int>{0, 0, 1, 2}));
  EXPECT_EQ(shape, (std::vector<std::size_t>{kClients}));
  EXPECT_TRUE(std::isnan(reader.read_f64(schema::kAri).front()));
  expect_rounds(reader, 3, true);
}

TEST_F(ResultFile, LayoutWithoutLossVectorsHasNoLossVectorDataset) {
  {
    ResultWriter writer(out(), make_layout(false), false);
    writer.append_round(make_record(0, false));
  }
  const ResultReader reader(out());
  EXPECT_FALSE(reader.has_dataset(schema::kLossVectors));
  EXPECT_TRUE(reader.has_dataset(schema::kAssignment));
  EXPECT_FALSE(reader.has_dataset(schema::kClientsGroup));  // a group, not a dataset
  EXPECT_FALSE(reader.has_dataset("/no/such/thing"));
  EXPECT_THROW(reader.read_f32(schema::kLossVectors), DataError);
  expect_rounds(reader, 1, false);
}

TEST_F(ResultFile, MixtureExtraDatasetsAndSourceScoresRoundTrip) {
  constexpr int kSources = 2;
  auto layout = make_layout(false);
  layout.num_sources = kSources;
  // FedSoft's importance weights in /clients, and a dataset in a group the writer must create.
  layout.extra_datasets = {{schema::kImportance, {kClients, kModels}},
                           {"/algorithm/norms", {kModels}}};
  const std::vector<double> mixture{0.9, 0.1, 0.9, 0.1, 0.1, 0.9, 0.3, 0.7};
  std::vector<std::vector<float>> importance, accuracy;
  {
    ResultWriter writer(out(), layout, false);
    EXPECT_THROW(writer.write_mixture({0.5, 0.5}), ShapeError);
    writer.write_mixture(mixture);
    for (int r = 0; r < 2; ++r) {
      auto record = make_record(r, false);
      EXPECT_THROW(writer.append_round(record), ShapeError);  // importance and scores missing
      std::vector<float> u, source_accuracy, source_loss;
      for (int i = 0; i < kClients * kModels; ++i) {
        u.push_back(0.01f * static_cast<float>(i + 100 * r));
      }
      record.set(schema::kImportance, u);
      record.set("/algorithm/norms", std::vector<float>(kModels, 2.5f * static_cast<float>(r)));
      record.set(schema::kLiveModels, r + 1);
      for (int i = 0; i < kModels * kSources; ++i) {
        source_accuracy.push_back(0.1f * static_cast<float>(i) + static_cast<float>(r));
        source_loss.push_back(static_cast<float>(i * r));
      }
      record.set(schema::kSourceAccuracy, source_accuracy);
      EXPECT_THROW(writer.append_round(record), ShapeError);  // source losses missing
      record.set(schema::kSourceLoss, source_loss);
      importance.push_back(u);
      accuracy.push_back(source_accuracy);
      writer.append_round(record);
    }
  }
  const ResultReader reader(out());
  std::vector<std::size_t> shape;
  EXPECT_EQ(reader.read_f64(schema::kMixture, &shape), mixture);
  EXPECT_EQ(shape, (std::vector<std::size_t>{kClients, kSources}));
  const auto u = reader.read_f32(schema::kImportance, &shape);
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, kClients, kModels}));
  EXPECT_EQ(std::vector<float>(u.begin() + kClients * kModels, u.end()), importance[1]);
  EXPECT_EQ(reader.read_f32("/algorithm/norms", &shape),
            (std::vector<float>{0, 0, 0, 2.5f, 2.5f, 2.5f}));
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, kModels}));
  EXPECT_EQ(reader.read_i32(schema::kLiveModels), (std::vector<int>{1, 2}));
  const auto scores = reader.read_f32(schema::kSourceAccuracy, &shape);
  EXPECT_EQ(shape, (std::vector<std::size_t>{2, kModels, kSources}));
  EXPECT_EQ(std::vector<float>(scores.begin(), scores.begin() + kModels * kSources), accuracy[0]);
  EXPECT_TRUE(reader.has_dataset(schema::kSourceLoss));
}

TEST_F(ResultFile, ExistingFileWithoutOverwriteThrowsAndKeepsItsBytes) {
  {
    ResultWriter writer(out(), make_layout(true), false);
    writer.append_round(make_record(0, true));
    writer.complete_into(out());
  }
  const std::string before = file_bytes(out());
  ASSERT_FALSE(before.empty());
  try {
    ResultWriter writer(out(), make_layout(true), false);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& error) {
    EXPECT_NE(std::string(error.what()).find("--overwrite"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find(out().string()), std::string::npos) << error.what();
  }
  EXPECT_EQ(file_bytes(out()), before);
}

TEST_F(ResultFile, OverwriteReplacesTheExistingFile) {
  {
    ResultWriter writer(out(), make_layout(true), false);
    writer.write_config({{"seed", "1"}});
    writer.append_round(make_record(0, true));
    writer.append_round(make_record(1, true));
    writer.complete_into(out());
  }
  { ResultWriter writer(out(), make_layout(false), /*overwrite=*/true); }
  const ResultReader reader(out());
  EXPECT_EQ(reader.completed_rounds(), 0);
  EXPECT_EQ(reader.status(), "running");
  EXPECT_TRUE(reader.config().empty());
  EXPECT_FALSE(reader.has_dataset(schema::kLossVectors));
  std::vector<std::size_t> shape;
  EXPECT_TRUE(reader.read_f64(schema::kSeconds, &shape).empty());
  EXPECT_EQ(shape, (std::vector<std::size_t>{0, 3}));
}

// check_results' checks over every round read through checks::round_values, which refuses a
// file without rounds (a "for all" over none would pass and prove nothing).
TEST_F(ResultFile, ChecksOverTheRoundsRefuseAFileWithoutRounds) {
  { ResultWriter writer(out(), make_layout(false), /*overwrite=*/false); }
  try {
    checks::round_values(ResultReader(out()), schema::kAri);
    ADD_FAILURE() << "a file without rounds passed";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), std::string("the result file's ") + schema::kAri +
                                         " holds no round; a check over the rounds needs at "
                                         "least one");
  }
  {
    ResultWriter writer(out(), make_layout(false), /*overwrite=*/true);
    writer.append_round(make_record(0, false));
  }
  EXPECT_EQ(checks::round_values(ResultReader(out()), schema::kAri).size(), 1U);
}

TEST_F(ResultFile, AppendRoundWithWrongSizesThrowsShapeErrorAndWritesNothing) {
  ResultWriter writer(out(), make_layout(true), false);
  RoundRecord short_seconds = make_record(0, true);
  short_seconds.set(schema::kSeconds, std::vector<double>{1.5, 2.25});
  EXPECT_THROW(writer.append_round(short_seconds), ShapeError);
  RoundRecord long_assignment = make_record(0, true);
  long_assignment.set(schema::kAssignment, std::vector<int>(kClients + 1, 0));
  EXPECT_THROW(writer.append_round(long_assignment), ShapeError);
  RoundRecord float_assignment = make_record(0, true);  // the right count of the wrong type
  float_assignment.set(schema::kAssignment, std::vector<float>(kClients, 0.0f));
  EXPECT_THROW(writer.append_round(float_assignment), ShapeError);
  RoundRecord no_loss_vectors = make_record(0, false);
  EXPECT_THROW(writer.append_round(no_loss_vectors), ShapeError);
  EXPECT_THROW(writer.write_true_clusters({0, 1}), ShapeError);
  EXPECT_EQ(writer.completed_rounds(), 0);

  ResultWriter other(dir_ / "other.h5", make_layout(false), false);
  EXPECT_THROW(other.append_round(make_record(0, true)), ShapeError);  // unexpected loss vectors

  const ResultReader reader(out());
  EXPECT_EQ(reader.completed_rounds(), 0);
  EXPECT_TRUE(reader.read_f64(schema::kAri).empty());
}

TEST_F(ResultFile, InvalidLayoutThrowsShapeError) {
  ResultLayout no_phases = make_layout(true);
  no_phases.phase_names.clear();
  EXPECT_THROW(ResultWriter(out(), no_phases, false), ShapeError);
  ResultLayout no_clients = make_layout(true);
  no_clients.num_clients = 0;
  EXPECT_THROW(ResultWriter(out(), no_clients, false), ShapeError);
  EXPECT_FALSE(fs::exists(out()));
}

TEST_F(ResultFile, CompleteIntoAndMarkFailedSetStatus) {
  const fs::path complete = dir_ / "complete.h5";
  const fs::path failed = dir_ / "failed.h5";
  {
    ResultWriter writer(complete, make_layout(false), false);
    writer.append_round(make_record(0, false));
    writer.complete_into(complete);
    ResultWriter failing(failed, make_layout(false), false);
    failing.mark_failed("MPI rank 3 died");
  }
  EXPECT_EQ(ResultReader(complete).status(), "complete");
  EXPECT_EQ(ResultReader(failed).status(), "failed: MPI rank 3 died");
  EXPECT_EQ(ResultReader(failed).completed_rounds(), 0);
}

TEST_F(ResultFile, KilledWriterLeavesFinishedRoundsReadable) {
  const pid_t child = fork();
  ASSERT_NE(child, -1);
  if (child == 0) {
    write_two_rounds_then_die(out());
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with code " << WEXITSTATUS(status);
  ASSERT_EQ(WTERMSIG(status), SIGKILL);

  const ResultReader reader(out());
  EXPECT_EQ(reader.completed_rounds(), 2);
  EXPECT_EQ(reader.status(), "running");
  EXPECT_EQ(reader.config_value("seed"), "7");
  expect_rounds(reader, 2, true);
}

}  // namespace
}  // namespace cflrun::io
