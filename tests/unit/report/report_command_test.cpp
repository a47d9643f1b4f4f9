#include <cflrun/report/report_command.hpp>

#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>
#include <cflrun/report/paper_values.hpp>

#include "result_files.hpp"

namespace cflrun::report {
namespace {

using testing::base_config;
using testing::FakeRun;
using testing::step;
using testing::write_run;

constexpr int kRounds = 12;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

class ReportCommand : public testing::TempDirTest {
 protected:
  testing::ReportOutcome report(std::vector<std::string> args) const {
    return testing::run_report(std::move(args));
  }

  void write(const std::string& name, const std::map<std::string, std::string>& config,
             const std::vector<double>& ari, double final_accuracy,
             FakeRun::Status status = FakeRun::Status::kComplete) const {
    const auto rounds = static_cast<int>(ari.size());
    FakeRun run{config, ari, step(rounds, 0.5, rounds, final_accuracy), {}, status};
    write_run(dir_ / name, run);
  }

  /// 3 algorithms x 3 seeds, 12 rounds, with hand-chosen ARI and final accuracy:
  ///   clove  ARI >= 0.9 first at rounds 2, 3, 4; final ARI 1; accuracy 90, 92, 94
  ///   ifca   ARI(10) / final = 0.4/0.8, 0.6/0.6, 0.5/1.0; first at never, never, 12;
  ///          accuracy 80, 82, 87
  ///   fedavg ARI NaN; accuracy 60, 60, 63
  void write_three_algorithms() const {
    const double clove_accuracy[] = {0.90, 0.92, 0.94};
    const double ifca_accuracy[] = {0.80, 0.82, 0.87};
    const double fedavg_accuracy[] = {0.60, 0.60, 0.63};
    const double ifca_round10[] = {0.4, 0.6, 0.5};
    const double ifca_final[] = {0.8, 0.6, 1.0};
    for (int seed = 1; seed <= 3; ++seed) {
      const auto s = std::to_string(seed);
      write("clove_" + s + ".h5", base_config("clove", seed), step(kRounds, 0.2, seed + 1, 1.0),
            clove_accuracy[seed - 1]);
      auto ifca = step(kRounds, 0.3, 10, ifca_round10[seed - 1]);
      ifca[11] = ifca_final[seed - 1];
      ifca[10] = seed == 2 ? 0.6 : ifca[9];
      write("ifca_" + s + ".h5", base_config("ifca", seed), ifca, ifca_accuracy[seed - 1]);
      write("fedavg_" + s + ".h5", base_config("fedavg", seed), std::vector<double>(kRounds, kNaN),
            fedavg_accuracy[seed - 1]);
    }
  }

  /// clove/ifca x fmnist/mnist x label_skew_1/concept_shift x seeds 1, 2 (1 round each): final
  /// accuracy = 0.50 + 0.20 [ifca] + 0.10 [mnist] + 0.05 [concept_shift] -+ 0.01 for seed 1/2.
  void write_paper_grid() const {
    for (const char* algorithm : {"clove", "ifca"}) {
      for (const char* dataset : {"fmnist", "mnist"}) {
        for (const char* partition : {"label_skew_1", "concept_shift"}) {
          for (int seed = 1; seed <= 2; ++seed) {
            auto config = base_config(algorithm, seed);
            config["dataset"] = dataset;
            config["partition"] = partition;
            const double base = 0.50 + (config["algorithm"] == "ifca" ? 0.20 : 0.0) +
                                (config["dataset"] == "mnist" ? 0.10 : 0.0) +
                                (config["partition"] == "concept_shift" ? 0.05 : 0.0);
            write(std::string(algorithm) + "_" + dataset + "_" + partition + "_" +
                      std::to_string(seed) + ".h5",
                  config, {1.0}, base + (seed == 1 ? -0.01 : 0.01));
          }
        }
      }
    }
  }
};

TEST_F(ReportCommand, DefaultTableGroupsBySeedWithHandComputedStatistics) {
  write_three_algorithms();
  const auto result = report({dir_.string()});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            "Final-round metrics, mean +- std over seeds (std with ddof 0); n = runs per group.\n"
            "Same in every group: dataset=fmnist, lr=0.01, partition=label_skew_1, rounds=12.\n"
            "\n"
            "| algorithm | n | accuracy (%) | ARI | ARI round 10 (% of final) | "
            "first round ARI >= 0.9 | clusters |\n"
            "| --- | --- | --- | --- | --- | --- | --- |\n"
            "| clove | 3 | 92.0 +- 1.6 | 1.00 +- 0.00 | 100.0 +- 0.0 | 3.0 +- 0.8 | 2.0 +- 0.0 |\n"
            "| fedavg | 3 | 61.0 +- 1.4 | - | - | - | 1.0 +- 0.0 |\n"
            "| ifca | 3 | 83.0 +- 2.9 | 0.80 +- 0.16 | 66.7 +- 23.6 | "
            "12.0 +- 0.0 (2/3 never) | 2.0 +- 0.0 |\n");
}

TEST_F(ReportCommand, PaperComparisonPutsThePapersValueAndTheDifferenceBesideEachKnownCell) {
  write_three_algorithms();
  const auto values = dir_ / "paper.csv";
  std::ofstream(values) << "# comment\n"
                           "table,metric,partition,dataset,algorithm,mean,std\n"
                           "Table 1,accuracy,label_skew_1,fmnist,clove,99.1,0.0\n"
                           "Table 2,ari,label_skew_1,fmnist,clove,1.00,0.00\n"
                           "Table 4,first_round_ari_0.9,label_skew_1,fmnist,ifca,7.3,7.5\n"
                           "Table 1,accuracy,concept_shift,fmnist,clove,84.3,0.2\n";
  const auto result = report({dir_.string(), "--paper", values.string()});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "cflrun beside the CLoVE paper (values: " + values.string() +
                "); mean +- std over seeds; difference = cflrun mean - paper mean; "
                "accuracy as the row's reference code computes it\n"
                "\n\n"
                "| paper table | partition | dataset | algorithm | rounds | metric | "
                "accuracy as | n | cflrun | paper | difference | class |\n"
                "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- "
                "|\n"
                "| Table 1 | label_skew_1 | fmnist | clove | 12 | accuracy | client mean | "
                "3 | 92.0 +- 1.6 | 99.1 +- 0.0 | -7.1 | outside |\n"
                "| Table 2 | label_skew_1 | fmnist | clove | 12 | ari |  | 3 | 1.00 +- "
                "0.00 | 1.00 +- 0.00 | +0.00 | within |\n"
                "| Table 4 | label_skew_1 | fmnist | ifca | 12 | first_round_ari_0.9 |  | "
                "3 | 12.0 +- 0.0 (2/3 never) | "
                "7.3 +- 7.5 | +4.7 |  |\n");
  EXPECT_NE(result.err.find("1 group(s) match no cell of the paper"), std::string::npos)
      << result.err;
  EXPECT_EQ(report({dir_.string(), "--paper", values.string(), "--rows", "algorithm"}).code, 2);
  std::ofstream(values, std::ios::app) << "Table 1,accuracy,label_skew_1,fmnist,ifca,ninety,1\n";
  EXPECT_THROW(report({dir_.string(), "--paper", values.string()}), DataError);
  EXPECT_THROW(report({dir_.string(), "--paper", (dir_ / "absent.csv").string()}), DataError);
}

TEST_F(ReportCommand, ShippedPaperValuesParseAndHoldTheFashionMnistCells) {
  const auto values =
      read_paper_values(std::filesystem::path(CFLRUN_SOURCE_DIR) / kDefaultPaperValues);
  int fmnist_clove = 0;
  int test_loss = 0;
  for (const auto& value : values) {
    fmnist_clove += value.dataset == "fmnist" && value.algorithm == "clove";
    test_loss += value.metric == Metric::kTestLoss && value.partition == "class_per_cluster";
    if (value.metric == Metric::kAri) {
      EXPECT_GE(value.mean, -1.0);
      EXPECT_LE(value.mean, 1.0);
    }
  }
  // 4 partitions x accuracy, ARI, ARI round 10, first round ARI >= 0.9; Table 5's test loss.
  EXPECT_EQ(fmnist_clove, 17);
  EXPECT_EQ(test_loss, 12);  // Table 5: FedAvg, Local-only, IFCA, CLoVE x 3 datasets
}

TEST_F(ReportCommand, CsvGivesOneRowPerGroupWithMeanAndStdColumns) {
  write_three_algorithms();
  const auto result = report({dir_.string(), "--format", "csv", "--filter", "algorithm=clove"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_EQ(result.out,
            "n,accuracy_mean,accuracy_std,accuracy_n,ari_mean,ari_std,ari_n,ari_round10_mean,"
            "ari_round10_std,ari_round10_n,first_round_ari_0.9_mean,first_round_ari_0.9_std,"
            "first_round_ari_0.9_n,clusters_mean,clusters_std,clusters_n\n"
            "3,92,1.632993162,3,1,0,3,100,0,3,3,0.8164965809,3,2,0,3\n");
}

TEST_F(ReportCommand, IncompleteFailedAndUnreadableFilesAreLeftOutAndListed) {
  write_three_algorithms();
  write("clove_4.h5", base_config("clove", 4), step(5, 0.0, 6, 0.0), 0.10,
        FakeRun::Status::kRunning);
  write("clove_5.h5", base_config("clove", 5), step(5, 0.0, 6, 0.0), 0.10,
        FakeRun::Status::kFailed);
  write("clove_6.h5.partial", base_config("clove", 6), step(5, 0.0, 6, 0.0), 0.10,
        FakeRun::Status::kRunning);  // a run in progress: listed too, not passed over
  std::ofstream(dir_ / "junk.h5") << "not hdf5";
  const auto result = report({dir_.string(), "--metric", "accuracy"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("| clove | 3 | 92.0 +- 1.6 |\n"), std::string::npos) << result.out;
  EXPECT_NE(result.err.find("left out 3 incomplete run(s): " + (dir_ / "clove_4.h5").string() +
                            " (running, 5/5 rounds); " + (dir_ / "clove_5.h5").string() +
                            " (failed: out of memory, 5/5 rounds); " +
                            (dir_ / "clove_6.h5.partial").string() + " (running, 5/5 rounds)"),
            std::string::npos)
      << result.err;
  EXPECT_NE(result.err.find("left out 1 unreadable file(s): " + (dir_ / "junk.h5").string()),
            std::string::npos)
      << result.err;
}

TEST_F(ReportCommand, NoCompleteRunIsADataError) {
  write("clove_4.h5", base_config("clove", 4), step(5, 0.0, 6, 0.0), 0.1,
        FakeRun::Status::kRunning);
  EXPECT_THROW(report({dir_.string()}), DataError);
}

TEST_F(ReportCommand, PaperLayoutOneTablePerPartition) {
  write_paper_grid();
  const auto result = report(
      {dir_.string(), "--rows", "algorithm", "--columns", "dataset", "--tables", "partition"});
  EXPECT_EQ(result.code, 0) << result.err;
  const std::string method = "mean +- std over seeds (std with ddof 0), n = 2 per cell\n\n";
  EXPECT_EQ(result.out,
            "partition = concept_shift: accuracy (%), rows algorithm, columns dataset; " + method +
                "| algorithm | fmnist | mnist |\n"
                "| --- | --- | --- |\n"
                "| clove | 55.0 +- 1.0 | 65.0 +- 1.0 |\n"
                "| ifca | 75.0 +- 1.0 | 85.0 +- 1.0 |\n"
                "\n"
                "partition = label_skew_1: accuracy (%), rows algorithm, columns dataset; " +
                method +
                "| algorithm | fmnist | mnist |\n"
                "| --- | --- | --- |\n"
                "| clove | 50.0 +- 1.0 | 60.0 +- 1.0 |\n"
                "| ifca | 70.0 +- 1.0 | 80.0 +- 1.0 |\n");
}

TEST_F(ReportCommand, PaperLayoutAsCsvAndLatex) {
  write_paper_grid();
  const auto csv = report({dir_.string(), "--rows", "algorithm", "--columns", "dataset", "--tables",
                           "partition", "--metric", "ari", "--format", "csv"});
  EXPECT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.substr(0, csv.out.find('\n', csv.out.find('\n') + 1) + 1),
            "partition,algorithm,dataset,n,ari_mean,ari_std,ari_n\n"
            "concept_shift,clove,fmnist,2,1,0,2\n");
  EXPECT_EQ(std::count(csv.out.begin(), csv.out.end(), '\n'), 9);  // header + 8 cells
  const auto latex = report({dir_.string(), "--rows", "algorithm", "--columns", "dataset",
                             "--tables", "partition", "--format", "latex"});
  EXPECT_NE(latex.out.find("\\begin{tabular}{lcc}\n\\hline\nalgorithm & fmnist & mnist \\\\\n"
                           "\\hline\nclove & $55.0 \\pm 1.0$ & $65.0 \\pm 1.0$ \\\\\n"),
            std::string::npos)
      << latex.out;
}

TEST_F(ReportCommand, KeyVaryingInsideACellIsAnErrorUntilFilteredOrTabled) {
  write_paper_grid();
  auto config = base_config("clove", 1);
  config["lr"] = "0.001";
  write("clove_lr.h5", config, {1.0}, 0.3);
  const std::vector<std::string> grid{dir_.string(), "--rows",   "algorithm", "--columns",
                                      "dataset",     "--tables", "partition"};
  const auto error = report(grid);
  EXPECT_EQ(error.code, 2);
  EXPECT_EQ(error.out, "");
  EXPECT_NE(error.err.find("lr varies within a table cell (e.g. the cell partition=label_skew_1, "
                           "algorithm=clove, dataset=fmnist holds lr = 0.001, 0.01)"),
            std::string::npos)
      << error.err;
  EXPECT_NE(error.err.find("--filter"), std::string::npos);
  auto filtered = grid;
  filtered.insert(filtered.end(), {"--filter", "lr=0.01"});
  const auto selected = report(filtered);
  EXPECT_EQ(selected.code, 0) << selected.err;
  EXPECT_NE(selected.out.find("| clove | 50.0 +- 1.0 | 60.0 +- 1.0 |\n"), std::string::npos)
      << selected.out;
  auto tabled = grid;
  tabled.back() = "partition,lr";
  const auto split = report(tabled);
  EXPECT_EQ(split.code, 0) << split.err;
  EXPECT_NE(split.out.find("partition = label_skew_1, lr = 0.001: accuracy (%)"),
            std::string::npos);
  EXPECT_NE(split.out.find("| clove | 30.0 +- 0.0 |  |\n"), std::string::npos) << split.out;
}

TEST_F(ReportCommand, UnevenSeedCountsAreShownPerCell) {
  write_paper_grid();
  std::filesystem::remove(dir_ / "ifca_mnist_label_skew_1_2.h5");
  const auto result = report({dir_.string(), "--rows", "algorithm", "--columns", "dataset",
                              "--filter", "partition=label_skew_1"});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("| ifca | 70.0 +- 1.0 [n=2] | 79.0 +- 0.0 [n=1] |"), std::string::npos)
      << result.out;
}

TEST_F(ReportCommand, UnsupervisedRunsReportTheirTestLoss) {
  for (int seed = 1; seed <= 2; ++seed) {
    auto config = base_config("clove", seed);
    config["unsupervised"] = "true";
    FakeRun run{config, {1.0, 1.0}, {0.0, 0.0}, {0.5, seed == 1 ? 0.014 : 0.016}};
    write_run(dir_ / ("u" + std::to_string(seed) + ".h5"), run);
  }
  const auto result = report({dir_.string()});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("| n | accuracy (%) | test loss | ARI |"), std::string::npos)
      << result.out;
  EXPECT_NE(result.out.find("| 2 | - | 0.015 +- 0.001 | 1.00 +- 0.00 |"), std::string::npos)
      << result.out;
}

TEST_F(ReportCommand, LinearRegressionRunsReportTheirTestLossLikeUnsupervisedOnes) {
  auto config = base_config("clove", 1);
  config["dataset"] = "linreg";
  FakeRun run{config, {1.0, 1.0}, {NAN, NAN}, {0.5, 0.002}};
  write_run(dir_ / "linreg.h5", run);
  const auto result = report({dir_.string()});
  EXPECT_EQ(result.code, 0) << result.err;
  EXPECT_NE(result.out.find("| 1 | - | 0.002 +- 0.000 | 1.00 +- 0.00 |"), std::string::npos)
      << result.out;
}

TEST_F(ReportCommand, ArgumentErrorsReturnTwoAndHelpReturnsZero) {
  write_three_algorithms();
  EXPECT_EQ(report({dir_.string(), "--format", "html"}).code, 2);
  EXPECT_EQ(report({dir_.string(), "--metric", "f1"}).code, 2);
  EXPECT_EQ(report({dir_.string(), "--columns", "dataset"}).code, 2);
  EXPECT_EQ(report({dir_.string(), "--rows", "seed"}).code, 2);
  EXPECT_EQ(report({}).code, 2);
  EXPECT_EQ(report({(dir_ / "missing").string()}).code, 2);
  const auto help = report({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("--tables"), std::string::npos);
}

}  // namespace
}  // namespace cflrun::report
