// Committed per-run rows read back (run_rows_csv.hpp), and the paper comparison's classes and
// counts (paper_references.hpp, `cflrun report --paper --summary`) on hand-made rows.
#include <cflrun/report/paper_references.hpp>
#include <cflrun/report/paper_values.hpp>
#include <cflrun/report/report_command.hpp>
#include <cflrun/report/recovery.hpp>
#include <cflrun/report/run_rows_csv.hpp>

#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

#include "result_files.hpp"

namespace cflrun::report {
namespace {

constexpr const char* kHeader =
    "config,seed,rounds,git_commit,accuracy,ari,accuracy_weighted,device,ranks,threads_per_rank,"
    "builds,options,test_loss\r\n";

/// A row as results/run_summaries.py writes it: 3 rounds, options quoted (they hold commas).
std::string row(const std::string& config, int seed, const std::string& accuracy,
                const std::string& ari, const std::string& weighted, const std::string& options,
                const std::string& test_loss = "") {
  return config + "," + std::to_string(seed) + ",3,abc," + accuracy + "," + ari + "," + weighted +
         ",cpu: AVX2,1,2,round 1: 0.1.0 (abc),\"" + options + "\"," + test_loss + "\r\n";
}

class PaperSummary : public testing::TempDirTest {
 protected:
  std::string report(const std::vector<std::string>& words) const {
    const auto outcome = testing::run_report(words);
    EXPECT_EQ(outcome.code, 0) << outcome.err;
    return outcome.out;
  }
};

TEST_F(PaperSummary, CommittedRowsReadBackAsCompleteRunsWithTheirOptions) {
  const auto csv = dir_ / "runs.csv";
  std::ofstream(csv) << kHeader
                     << row("fmnist_label_skew_2_clove", 1, "0.5 0.8 0.9", "0.2 1 1",
                            "0.4 0.7 0.85",
                            "algorithm = clove; dataset = fmnist; label-sets = 2,4,6,9/0,2,3,4; "
                            "partition = label_skew_2; seed = 1")
                     << row("fmnist_label_skew_1_fedavg", 2, "0.5 0.6 0.65", "nan nan nan", "", "");
  const auto runs = read_run_rows_csv(csv);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_TRUE(runs[0].complete());
  EXPECT_EQ(runs[0].config.at("label-sets"), "2,4,6,9/0,2,3,4");
  EXPECT_EQ(runs[0].config.at("partition"), "label_skew_2");
  EXPECT_EQ(runs[0].config.at("paper_config"), "fmnist_label_skew_2_clove");
  EXPECT_DOUBLE_EQ(*runs[0].metrics.accuracy_percent, 90.0);
  EXPECT_DOUBLE_EQ(*runs[0].metrics.accuracy_weighted_percent, 85.0);
  EXPECT_DOUBLE_EQ(*runs[0].metrics.ari, 1.0);
  EXPECT_DOUBLE_EQ(*runs[0].metrics.first_round_ari_0_9, 2.0);
  // A row without options (written before the column existed): the cell from the config name.
  EXPECT_EQ(runs[1].config.at("algorithm"), "fedavg");
  EXPECT_EQ(runs[1].config.at("partition"), "label_skew_1");
  EXPECT_EQ(runs[1].config.at("dataset"), "fmnist");
  EXPECT_EQ(runs[1].config.at("seed"), "2");
  EXPECT_FALSE(runs[1].metrics.ari.has_value());
  EXPECT_FALSE(runs[1].metrics.accuracy_weighted_percent.has_value());
}

TEST_F(PaperSummary, RowsOfAChangingPopulationCarryTheirRecoveries) {
  const auto csv = dir_ / "runs.csv";
  std::ofstream(csv) << "config,seed,rounds,git_commit,accuracy,ari,options,change_rounds\r\n"
                     << "drift_clove,1,4,abc,0.8 0.8 0.5 0.8,1 1 0.4 0.95,"
                        "\"algorithm = clove; changes = drift round=3 fraction=0.2\",3\r\n";
  const auto runs = read_run_rows_csv(csv);
  ASSERT_EQ(runs.size(), 1u);
  ASSERT_EQ(runs[0].recoveries.size(), 1u);
  EXPECT_EQ(runs[0].recoveries[0].change_round, 3);
  EXPECT_EQ(runs[0].recoveries[0].ari.state, RecoveryState::kRecovered);
  EXPECT_EQ(runs[0].recoveries[0].ari.rounds, 1);
  EXPECT_DOUBLE_EQ(*runs[0].recoveries[0].accuracy_after, 0.5);
}

TEST_F(PaperSummary, MalformedRowsNameTheFileAndLine) {
  const auto csv = dir_ / "runs.csv";
  std::ofstream(csv) << kHeader << row("fmnist_label_skew_1_clove", 1, "0.5 0.8", "0 1 1", "", "");
  try {
    read_run_rows_csv(csv);
    FAIL() << "a series of 2 values for 3 rounds was accepted";
  } catch (const DataError& e) {
    EXPECT_NE(std::string(e.what()).find("runs.csv line 2 accuracy: 2 values for 3 rounds"),
              std::string::npos)
        << e.what();
  }
  std::ofstream(csv) << "config,seed\n";
  EXPECT_THROW(read_run_rows_csv(csv), DataError);
}

TEST_F(PaperSummary, CellsAreClassedAtThePapersPrecisionWithTheReferenceDefinition) {
  PaperValue accuracy{"Table 1", Metric::kAccuracy, "label_skew_1", "fmnist", "clove", 90.0, 0.5};
  PaperReferences references;
  const auto with_mean = [](double mean) { return Statistic{mean, 0.0, 3, 3}; };
  EXPECT_EQ(classify(with_mean(92.04), accuracy, references), CellClass::kWithin);   // +2.0
  EXPECT_EQ(classify(with_mean(92.06), accuracy, references), CellClass::kOutside);  // +2.1
  accuracy.std = 3.0;  // the paper's std widens the band
  EXPECT_EQ(classify(with_mean(92.9), accuracy, references), CellClass::kWithin);
  references.evidence[cell_key(accuracy)] = "runs X";
  EXPECT_EQ(classify(with_mean(95.0), accuracy, references), CellClass::kOutsideWithEvidence);
  EXPECT_EQ(classify(Statistic{0.0, 0.0, 0, 3}, accuracy, references), CellClass::kMissing);
  const PaperValue ari{"Table 2", Metric::kAri, "label_skew_1", "fmnist", "clove", 0.55, 0.18};
  EXPECT_EQ(classify(with_mean(0.65), ari, references), CellClass::kWithin);
  EXPECT_EQ(classify(with_mean(0.66), ari, references), CellClass::kOutside);
  // Table 5's test loss: within 20 % of the paper's value (0.0032 here) or its std.
  PaperValue loss{"Table 5", Metric::kTestLoss, "class_per_cluster", "fmnist", "clove", 0.016, 0.0};
  EXPECT_EQ(classify(with_mean(0.0191), loss, references), CellClass::kWithin);   // 0.019
  EXPECT_EQ(classify(with_mean(0.0201), loss, references), CellClass::kOutside);  // 0.020
  EXPECT_EQ(classify(with_mean(0.0121), loss, references), CellClass::kOutside);  // 0.012
  loss.std = 0.005;
  EXPECT_EQ(classify(with_mean(0.0209), loss, references), CellClass::kWithin);
  // The rule as captions and --help print it, written from the same constants.
  EXPECT_EQ(within_rule_text(),
            "accuracy: |cflrun - paper| <= max(2 points, the paper's std); ARI: <= 0.1; test loss: "
            "<= max(20 % of the paper's value, its std)");
}

TEST_F(PaperSummary, SummaryCountsEachDatasetsCellsPerClass) {
  const auto csv = dir_ / "runs.csv";
  std::ofstream out(csv);
  out << kHeader;
  for (int seed = 1; seed <= 3; ++seed) {
    // clove: accuracy 90 (paper 89: within), ARI 1 (paper 0.8: outside).
    out << row("fmnist_label_skew_1_clove", seed, "0.5 0.8 0.9", "0 1 1", "", "");
    // fedpac: client mean 85 (paper 80: outside as a mean) but sample-weighted 81: within; the
    // same cell's older rows (no options, no sample-weighted accuracy) are left out.
    out << row(
        "fmnist_label_skew_1_fedpac", seed, "0.5 0.8 0.85", "nan nan nan", "0.5 0.8 0.81",
        "algorithm = fedpac; dataset = fmnist; lr = 0.005; partition = label_skew_1; rounds = 3");
    out << row("fmnist_label_skew_1_fedpac", seed, "0.5 0.8 0.84", "nan nan nan", "", "");
    // fesem: 60 against the paper's 50, outside with evidence.
    out << row("fmnist_label_skew_1_fesem", seed, "0.5 0.6 0.6", "0 0 0", "0.5 0.6 0.6", "");
    // Table 5: a supervised run of a test-loss cell's partition, dataset and algorithm (not the
    // cell's group, although first), and an unsupervised CLoVE, final test loss 0.018 against the
    // paper's 0.016 (within).
    out << row("fmnist_class_per_cluster_clove", seed, "0.5 0.6 0.7", "1 1 1", "",
               "algorithm = clove; dataset = fmnist; partition = class_per_cluster", "0.9 0.8 0.7");
    out << row("fmnist_unsupervised_clove", seed, "nan nan nan", "0.5 1 1", "",
               "algorithm = clove; dataset = fmnist; partition = class_per_cluster; "
               "unsupervised = true",
               "0.05 0.02 0.018");
  }
  out.close();
  const auto values = dir_ / "paper_values.csv";
  std::ofstream(values) << "table,metric,partition,dataset,algorithm,mean,std\n"
                           "Table 1,accuracy,label_skew_1,fmnist,clove,89.0,0.1\n"
                           "Table 2,ari,label_skew_1,fmnist,clove,0.8,0.1\n"
                           "Table 1,accuracy,label_skew_1,fmnist,fedpac,80.0,0.5\n"
                           "Table 1,accuracy,label_skew_1,fmnist,fesem,50.0,0.5\n"
                           "Table 1,accuracy,concept_shift,fmnist,clove,84.3,0.2\n"
                           "Table 1,accuracy,label_skew_1,mnist,clove,99.0,0.1\n"
                           "Table 5,test_loss,class_per_cluster,fmnist,clove,0.016,0.000\n"
                           "Table 5,test_loss,class_per_cluster,mnist,clove,0.014,0.000\n";
  std::ofstream(dir_ / kAccuracyDefinitionsFile) << "algorithm,accuracy,source\n"
                                                    "fedpac,sample_weighted,PFLlib\n"
                                                    "fesem,sample_weighted,FlexCFL\n";
  std::ofstream(dir_ / kEvidenceFile)
      << "metric,partition,dataset,algorithm,evidence\n"
         "accuracy,label_skew_1,fmnist,fesem,first_member runs, seeds 1-3 (runs.csv)\n";
  const auto summary = report({csv.string(), "--paper", values.string(), "--summary"});
  EXPECT_NE(summary.find("| dataset | metric | cells | within | outside with evidence | outside | "
                         "missing |\n"
                         "| --- | --- | --- | --- | --- | --- | --- |\n"
                         "| fmnist | accuracy | 4 | 2 | 1 | 0 | 1 |\n"
                         "| fmnist | ari | 1 | 0 | 0 | 1 | 0 |\n"
                         "| fmnist | test_loss | 1 | 1 | 0 | 0 | 0 |\n"
                         "| mnist | accuracy | 1 | 0 | 0 | 0 | 1 |\n"
                         "| mnist | test_loss | 1 | 0 | 0 | 0 | 1 |\n"),
            std::string::npos)
      << summary;
  EXPECT_NE(summary.find("within: " + within_rule_text()), std::string::npos) << summary;
  EXPECT_NE(report({"--help"})
                .find("Class within, per metric:\n  accuracy: |cflrun - paper| <= "
                      "max(2 points, the paper's std)\n  ARI: <= 0.1\n"),
            std::string::npos);
  const auto table = report({csv.string(), "--paper", values.string()});
  EXPECT_NE(table.find("| fedpac | 3 | accuracy | sample-weighted | 3 | 81.0 +- 0.0 | 80.0 +- 0.5 "
                       "| +1.0 | within |"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("1 value(s) of other groups of the same cells left out"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("84.0"), std::string::npos) << table;
  EXPECT_EQ(table.find("0.700"), std::string::npos) << table;
  EXPECT_NE(table.find("| Table 5 | class_per_cluster | fmnist | clove | 3 | test_loss |  | 3 | "
                       "0.018 +- 0.000 | 0.016 +- 0.000 | +0.002 | within |"),
            std::string::npos)
      << table;
}

TEST_F(PaperSummary, OfEqualGroupsACellShowsTheOneBuiltFromCommittedCode) {
  const auto csv = dir_ / "runs.csv";
  std::ofstream out(csv);
  out << kHeader;
  const std::string options = "algorithm = fedpac; dataset = fmnist; partition = label_skew_1";
  for (int seed = 1; seed <= 3; ++seed) {
    // The group sorted first, from a tree with uncommitted changes: 84.
    auto dirty = row("fmnist_label_skew_1_fedpac", seed, "0.5 0.8 0.84", "nan nan nan",
                     "0.5 0.8 0.84", options);
    dirty.replace(dirty.find(",abc,"), 5, ",abc-dirty,");
    out << dirty;
    // The same cell's rerun from a commit (one more option, so another group): 81.
    out << row("fmnist_label_skew_1_fedpac", seed, "0.5 0.8 0.81", "nan nan nan", "0.5 0.8 0.81",
               options + "; lr = 0.005");
  }
  out.close();
  const auto values = dir_ / "paper_values.csv";
  std::ofstream(values) << "table,metric,partition,dataset,algorithm,mean,std\n"
                           "Table 1,accuracy,label_skew_1,fmnist,fedpac,80.0,0.5\n";
  const auto table = report({csv.string(), "--paper", values.string()});
  EXPECT_NE(table.find("| 3 | 81.0 +- 0.0 | 80.0 +- 0.5 | +1.0 | within |"), std::string::npos)
      << table;
  EXPECT_EQ(table.find("84.0"), std::string::npos) << table;
  EXPECT_NE(table.find("then one built from committed code"), std::string::npos) << table;
}

TEST_F(PaperSummary, ShippedDefinitionsNameEveryRowAndTheEvidenceParses) {
  const auto values = std::filesystem::path(CFLRUN_SOURCE_DIR) / kDefaultPaperValues;
  const auto references = read_paper_references(values);
  EXPECT_EQ(references.accuracy.size(), 12u);
  EXPECT_EQ(references.accuracy_of("clove"), AccuracyDefinition::kClientMean);
  EXPECT_EQ(references.accuracy_of("fedproto"), AccuracyDefinition::kSampleWeighted);
  EXPECT_FALSE(references.evidence.empty());
  for (const auto& value : read_paper_values(values)) {
    EXPECT_EQ(references.accuracy.count(value.algorithm), 1u) << value.algorithm;
  }
}

}  // namespace
}  // namespace cflrun::report
