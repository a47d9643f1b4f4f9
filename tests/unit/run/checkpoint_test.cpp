#include <cflrun/core/error.hpp>
#include <cflrun/run/checkpoint.hpp>

#include <cmath>
#include <fstream>
#include <unistd.h>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::run {
namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cflrun_checkpoint_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

algo::AlgorithmState sample_state(double shift) {
  return {{"weights", torch::arange(6, torch::kFloat32).reshape({2, 3}) + shift},
          {"tree", torch::tensor({3, -1, 7}, torch::kInt64)},
          {"series", torch::tensor({0.25 + shift, 1e-300}, torch::kFloat64)}};
}

void expect_same(const algo::AlgorithmState& a, const algo::AlgorithmState& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [name, tensor] : a) {
    const auto& other = b.at(name);
    EXPECT_EQ(tensor.scalar_type(), other.scalar_type()) << name;
    EXPECT_TRUE(torch::equal(tensor.nan_to_num(-7.0), other.nan_to_num(-7.0))) << name;
  }
}

TEST(Checkpoint, PackedStatesRoundTripAndDelimitThemselves) {
  const auto a = pack_state(sample_state(0.0));
  const auto b = pack_state(sample_state(1.0));
  auto both = a;
  both.insert(both.end(), b.begin(), b.end());
  std::size_t at = 0;
  expect_same(unpack_state(both, at), sample_state(0.0));
  EXPECT_EQ(at, a.size());
  expect_same(unpack_state(both, at), sample_state(1.0));
  EXPECT_EQ(at, a.size() + b.size());
  expect_same(unpack_state(a), sample_state(0.0));
  EXPECT_THROW(unpack_state(std::vector<double>(a.begin(), a.end() - 1)), DataError);
}

TEST(Checkpoint, FileRoundTripsBitForBitAndReplacesTheOldOneWhole) {
  const auto path = scratch("run.h5.checkpoint");
  Checkpoint written;
  written.next_round = 7;
  written.config = {{"seed", "3"}, {"algorithm", "clove"}};
  written.models = torch::randn({5, 11});
  written.algorithm = sample_state(2.0);
  written.server = sample_state(3.0);
  written.ranks = {sample_state(4.0), sample_state(5.0)};
  written.rows = {
      {"/rounds/ari", torch::tensor({std::nan(""), 0.5}, torch::kFloat64)},
      {"/clients/assignment", torch::tensor({0, 1, 1, 0}, torch::kInt32).reshape({2, 2})}};
  written.builds = {{"1", "0.1.0 (abc)"}, {"5", "0.1.1 (def)"}};
  write_checkpoint(path, written);
  written.next_round = 8;  // a second checkpoint replaces the first
  write_checkpoint(path, written);
  EXPECT_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  const auto read = read_checkpoint(path);
  EXPECT_EQ(read.next_round, 8);
  EXPECT_EQ(read.config, written.config);
  EXPECT_TRUE(torch::equal(read.models, written.models));
  expect_same(read.algorithm, written.algorithm);
  expect_same(read.server, written.server);
  ASSERT_EQ(read.ranks.size(), 2U);
  expect_same(read.ranks[1], written.ranks[1]);
  expect_same(read.rows, written.rows);
  EXPECT_TRUE(std::isnan(read.rows.at("/rounds/ari")[0].item<double>()));
  EXPECT_EQ(read.builds, written.builds);
}

TEST(Checkpoint, DamagedOrMissingFileIsADataError) {
  const auto path = scratch("damaged.checkpoint");
  std::ofstream(path) << "not a checkpoint";
  EXPECT_THROW(read_checkpoint(path), DataError);
  EXPECT_THROW(read_checkpoint(scratch("missing.checkpoint")), DataError);
}

}  // namespace
}  // namespace cflrun::run
