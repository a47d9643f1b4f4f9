// `cflrun report --recovery` on real result files of a changing population (issue 45), written
// with io::ResultWriter as a run writes them, read back through read_run_summary and the command.
#include <cflrun/report/recovery.hpp>
#include <cflrun/report/run_summary.hpp>

#include <limits>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/io/result_reader.hpp>

#include "result_files.hpp"

namespace cflrun::report {
namespace {

using testing::base_config;
using testing::FakeRun;
using testing::write_run;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
const std::vector<int> kChanges{4, 8};  // of 10 rounds

/// Three runs of 10 rounds whose population changes at rounds 4 and 8; by hand (rounds 1-based):
///   clove seed 1  ARI back >= 0.9 at rounds 6, 10 (2, 2 rounds); accuracy 0.90 before both
///                 changes, back >= 0.89 at rounds 7, 10 (3, 2); after 0.70, 0.80 = the dips
///   clove seed 2  ARI 0.95 at round 4 (0), never after round 8; accuracy 0.92 before, >= 0.91 at
///                 round 6 (2), never after 8; after 0.90, 0.84; dips 0.87, 0.84
///   fedavg seed 1 ARI NaN; accuracy 0.60 before, >= 0.59 at rounds 5, 10 (1, 2); after 0.50,
///                 0.55; dips 0.50, 0.52
class RecoveryReport : public testing::TempDirTest {
 protected:
  void write_changing(const std::string& name, const std::string& algorithm, int seed,
                      std::vector<double> ari, std::vector<double> accuracy) const {
    FakeRun run{base_config(algorithm, seed), std::move(ari), std::move(accuracy), {}};
    run.config["rounds"] = "10";
    run.config["changes"] = "4: move client 1 to cluster 0; 8: drop client 0";
    run.change_rounds = kChanges;
    write_run(dir_ / name, run);
  }

  /// A run of a fixed population (no /population/change_rounds), 2 rounds.
  FakeRun fixed_run() const { return {base_config("clove", 3), {1.0, 1.0}, {0.9, 0.9}, {}}; }

  void write_three_runs() const {
    write_changing("clove_1.h5", "clove", 1, {1, 1, 1, 0.5, 0.8, 0.95, 1, 0.6, 0.7, 0.92},
                   {0.90, 0.90, 0.90, 0.70, 0.85, 0.88, 0.90, 0.80, 0.86, 0.89});
    write_changing("clove_2.h5", "clove", 2, {1, 1, 1, 0.95, 1, 1, 1, 0.5, 0.6, 0.7},
                   {0.92, 0.92, 0.92, 0.90, 0.87, 0.93, 0.92, 0.84, 0.85, 0.86});
    write_changing("fedavg_1.h5", "fedavg", 1, std::vector<double>(10, kNaN),
                   {0.60, 0.60, 0.60, 0.50, 0.60, 0.60, 0.60, 0.55, 0.52, 0.59});
  }
};

TEST_F(RecoveryReport, ChangingPopulationFileReadsBackWithItsRecoveries) {
  write_three_runs();
  const io::ResultReader reader(dir_ / "clove_1.h5");
  std::vector<std::size_t> shape;
  const auto truth = reader.read_i32(io::schema::kTrueCluster, &shape);
  EXPECT_EQ(shape, (std::vector<std::size_t>{10, 2}));  // [T, M]: each round's truth
  EXPECT_EQ(truth[2 * 2 + 1], 1);                       // round 3: client 1 still in cluster 1
  EXPECT_EQ(truth[3 * 2 + 1], 0);                       // round 4: moved
  EXPECT_EQ(reader.read_i32(io::schema::kAvailable)[7 * 2], 0);  // round 8: client 0 gone
  EXPECT_EQ(read_change_rounds(reader), kChanges);

  const auto run = read_run_summary(dir_ / "clove_1.h5");
  ASSERT_TRUE(run.complete());
  ASSERT_EQ(run.recoveries.size(), 2u);
  const auto& first = run.recoveries[0];
  EXPECT_EQ(first.change_round, 4);
  EXPECT_EQ(first.ari.state, RecoveryState::kRecovered);
  EXPECT_EQ(first.ari.rounds, 2);
  EXPECT_EQ(first.accuracy.state, RecoveryState::kRecovered);
  EXPECT_EQ(first.accuracy.rounds, 3);
  EXPECT_DOUBLE_EQ(*first.accuracy_before, 0.90);
  EXPECT_DOUBLE_EQ(*first.accuracy_after, 0.70);
  EXPECT_DOUBLE_EQ(*first.accuracy_dip, 0.70);
  EXPECT_EQ(run.recoveries[1].change_round, 8);
  EXPECT_EQ(run.recoveries[1].accuracy.rounds, 2);  // round 10: 0.89 is within 1 point of 0.90

  const auto fedavg = read_run_summary(dir_ / "fedavg_1.h5");
  EXPECT_EQ(fedavg.recoveries.at(0).ari.state, RecoveryState::kUndefined);
}

TEST_F(RecoveryReport, FilesWithoutChangeRoundsHaveNoRecoveries) {
  write_run(dir_ / "fixed.h5", fixed_run());
  EXPECT_TRUE(read_run_summary(dir_ / "fixed.h5").recoveries.empty());
  FakeRun unchanged = fixed_run();
  unchanged.change_rounds = std::vector<int>{};  // a changing population whose events never came
  write_run(dir_ / "unchanged.h5", unchanged);
  EXPECT_TRUE(read_change_rounds(io::ResultReader(dir_ / "unchanged.h5")).empty());
  EXPECT_TRUE(read_run_summary(dir_ / "unchanged.h5").recoveries.empty());
}

TEST_F(RecoveryReport, TableHasOneRowPerGroupAndChangeRoundOverSeeds) {
  write_three_runs();
  write_run(dir_ / "fixed.h5", fixed_run());
  const auto result = testing::run_report({dir_.string(), "--recovery"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err,
            "cflrun report: note: left out 1 run(s) without change rounds (no "
            "/population/change_rounds, or none in it): " +
                (dir_ / "fixed.h5").string() + "\n");
  const auto table_start = result.out.find("| algorithm |");
  ASSERT_NE(table_start, std::string::npos) << result.out;
  EXPECT_NE(result.out.find("Same in every group: changes=4: move client 1 to cluster 0; 8: drop "
                            "client 0, dataset=fmnist"),
            std::string::npos)
      << result.out;
  EXPECT_EQ(
      result.out.substr(table_start),
      "| algorithm | change round | n | ARI before | ARI after | ARI recovery (rounds) "
      "| accuracy recovery (rounds) | accuracy before (%) | accuracy after (%) "
      "| accuracy dip (%) |\n"
      "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
      "| clove | 4 | 2 | 1.00 +- 0.00 | 0.72 +- 0.22 | 1.0 +- 1.0 | 2.5 +- 0.5 | 91.0 +- 1.0 "
      "| 80.0 +- 10.0 | 78.5 +- 8.5 |\n"
      "| clove | 8 | 2 | 1.00 +- 0.00 | 0.55 +- 0.05 | 2.0 +- 0.0 (1/2 never) "
      "| 2.0 +- 0.0 (1/2 never) | 91.0 +- 1.0 | 82.0 +- 2.0 | 82.0 +- 2.0 |\n"
      "| fedavg | 4 | 1 | - | - | - | 1.0 +- 0.0 | 60.0 +- 0.0 | 50.0 +- 0.0 | 50.0 +- 0.0 |\n"
      "| fedavg | 8 | 1 | - | - | - | 2.0 +- 0.0 | 60.0 +- 0.0 | 55.0 +- 0.0 | 52.0 +- 0.0 |\n");
}

TEST_F(RecoveryReport, CsvGivesMeanStdAndCountColumns) {
  write_three_runs();
  const auto result = testing::run_report(
      {dir_.string(), "--recovery", "--format", "csv", "--filter", "algorithm=clove"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "change_round,n,ari_before_mean,ari_before_std,ari_before_n,ari_after_mean,"
            "ari_after_std,ari_after_n,ari_recovery_rounds_mean,ari_recovery_rounds_std,"
            "ari_recovery_rounds_n,accuracy_recovery_rounds_mean,accuracy_recovery_rounds_std,"
            "accuracy_recovery_rounds_n,accuracy_before_mean,accuracy_before_std,"
            "accuracy_before_n,accuracy_after_mean,accuracy_after_std,accuracy_after_n,"
            "accuracy_dip_mean,accuracy_dip_std,accuracy_dip_n\n"
            "4,2,1,0,2,0.725,0.225,2,1,1,2,2.5,0.5,2,91,1,2,80,10,2,78.5,8.5,2\n"
            "8,2,1,0,2,0.55,0.05,2,2,0,1,2,0,1,91,1,2,82,2,2,82,2,2\n");
}

TEST_F(RecoveryReport, RunsWithoutChangesAloneAreADataErrorAndOtherTablesAreRefused) {
  write_run(dir_ / "fixed.h5", fixed_run());
  EXPECT_THROW(testing::run_report({dir_.string(), "--recovery"}), DataError);
  EXPECT_EQ(testing::run_report({dir_.string(), "--recovery", "--paper"}).code, 2);
  EXPECT_EQ(testing::run_report({dir_.string(), "--recovery", "--rows", "algorithm"}).code, 2);
  EXPECT_EQ(testing::run_report({dir_.string(), "--recovery", "--metric", "ari"}).code, 2);
  const auto help = testing::run_report({"--help"});
  EXPECT_NE(help.out.find("--recovery"), std::string::npos);
}

}  // namespace
}  // namespace cflrun::report
