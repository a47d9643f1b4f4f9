#include <cflrun/report/run_summary.hpp>

#include <cmath>
#include <fstream>
#include <limits>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

#include "result_files.hpp"

namespace cflrun::report {
namespace {

using testing::base_config;
using testing::FakeRun;
using testing::step;
using testing::write_run;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

TEST(RunMetrics, FinalValuesComeFromTheLastRound) {
  const auto m = compute_run_metrics({0.2, 0.5, 0.95, 0.8}, {0.5, 0.6, 0.7, 0.875},
                                     {1.0, 0.9, 0.8, 0.25}, /*unsupervised=*/false);
  EXPECT_DOUBLE_EQ(*m.accuracy_percent, 87.5);
  EXPECT_DOUBLE_EQ(*m.test_loss, 0.25);
  EXPECT_DOUBLE_EQ(*m.ari, 0.8);
  EXPECT_DOUBLE_EQ(*m.first_round_ari_0_9, 3.0);  // 0.95 at the third round, 1-based
  EXPECT_FALSE(m.ari_round10_percent);            // only 4 rounds
}

TEST(RunMetrics, AriPercentRelatesTheTenthRoundToTheLast) {
  auto ari = step(12, 0.3, 10, 0.45);
  ari[10] = ari[11] = 0.9;  // rounds 11, 12
  EXPECT_DOUBLE_EQ(*compute_run_metrics(ari, {}, {}, false).ari_round10_percent, 50.0);
  const auto ten = step(10, 0.3, 10, 0.6);  // round 10 is the last round
  EXPECT_DOUBLE_EQ(*compute_run_metrics(ten, {}, {}, false).ari_round10_percent, 100.0);
  const auto nine = step(9, 0.3, 9, 0.6);
  EXPECT_FALSE(compute_run_metrics(nine, {}, {}, false).ari_round10_percent);
}

TEST(RunMetrics, ZeroFinalAriLeavesThePercentUndefined) {
  const auto m = compute_run_metrics(step(12, 0.5, 12, 0.0), {}, {}, false);
  EXPECT_FALSE(m.ari_round10_percent);
  EXPECT_DOUBLE_EQ(*m.ari, 0.0);
}

TEST(RunMetrics, ThresholdNeverReachedOrNanAriIsUndefined) {
  const auto never = compute_run_metrics(step(12, 0.5, 3, 0.89), {}, {}, false);
  EXPECT_FALSE(never.first_round_ari_0_9);
  const auto exactly = compute_run_metrics(step(12, 0.5, 7, 0.9), {}, {}, false);
  EXPECT_DOUBLE_EQ(*exactly.first_round_ari_0_9, 7.0);  // >= 0.9, not > 0.9
  const auto nan = compute_run_metrics(std::vector<double>(12, kNaN), {0.5}, {}, false);
  EXPECT_FALSE(nan.ari);
  EXPECT_FALSE(nan.ari_round10_percent);
  EXPECT_FALSE(nan.first_round_ari_0_9);
  EXPECT_DOUBLE_EQ(*nan.accuracy_percent, 50.0);
}

TEST(RunMetrics, UnsupervisedRunsHaveNoAccuracy) {
  const auto m = compute_run_metrics({1.0}, {0.5}, {0.014}, /*unsupervised=*/true);
  EXPECT_FALSE(m.accuracy_percent);
  EXPECT_DOUBLE_EQ(*m.test_loss, 0.014);
}

class RunSummaryFile : public testing::TempDirTest {};

TEST_F(RunSummaryFile, ReadsConfigStatusAndMetricsOfACompleteFile) {
  FakeRun run{base_config("clove", 2), step(12, 0.2, 3, 1.0), step(12, 0.5, 12, 0.93), {}};
  write_run(dir_ / "clove_2.h5", run);
  const auto summary = read_run_summary(dir_ / "clove_2.h5");
  EXPECT_TRUE(summary.complete());
  EXPECT_EQ(summary.completed_rounds, 12);
  EXPECT_EQ(summary.config.at("seed"), "2");
  EXPECT_EQ(summary.config.at("algorithm"), "clove");
  EXPECT_DOUBLE_EQ(*summary.metrics.accuracy_percent, 93.0);
  EXPECT_DOUBLE_EQ(*summary.metrics.first_round_ari_0_9, 3.0);
  EXPECT_DOUBLE_EQ(*summary.metrics.ari_round10_percent, 100.0);
}

TEST_F(RunSummaryFile, IncompleteFilesKeepTheirStatusAndHaveNoMetrics) {
  FakeRun run{base_config("clove", 1), step(5, 0.2, 2, 1.0), step(5, 0.5, 2, 0.9), {}};
  run.status = FakeRun::Status::kRunning;
  write_run(dir_ / "running.h5", run);
  run.status = FakeRun::Status::kFailed;
  write_run(dir_ / "failed.h5", run);
  const auto running = read_run_summary(dir_ / "running.h5");
  EXPECT_FALSE(running.complete());
  EXPECT_EQ(running.status, "running");
  EXPECT_FALSE(running.metrics.ari);
  EXPECT_EQ(read_run_summary(dir_ / "failed.h5").status, "failed: out of memory");
}

TEST_F(RunSummaryFile, DirectoriesGiveTheirH5FilesAndTheirSubdirectoriesSortedAndOnce) {
  for (const char* name : {"b.h5", "a.h5", "notes.txt"}) {
    std::ofstream(dir_ / name) << "x";
  }
  std::filesystem::create_directories(dir_ / "sub");
  std::ofstream(dir_ / "sub" / "c.h5") << "x";
  const auto files = expand_result_inputs({dir_.string(), (dir_ / "a.h5").string()});
  ASSERT_EQ(files.size(), 3u);
  EXPECT_EQ(files[0].filename(), "a.h5");
  EXPECT_EQ(files[1].filename(), "b.h5");
  EXPECT_EQ(files[2], dir_ / "sub" / "c.h5");  // a sweep of sweeps: one directory per cell
  EXPECT_THROW(expand_result_inputs({(dir_ / "missing.h5").string()}), ConfigError);
  EXPECT_THROW(expand_result_inputs({(dir_ / "sub" / "nothing").string()}), ConfigError);
  std::filesystem::create_directories(dir_ / "empty");
  EXPECT_THROW(expand_result_inputs({(dir_ / "empty").string()}), ConfigError);
}

}  // namespace
}  // namespace cflrun::report
