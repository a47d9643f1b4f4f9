#include <cflrun/report/table_format.hpp>

#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

StatisticCell cell(Metric metric, double mean, double std, int defined, int total) {
  return StatisticCell{Statistic{mean, std, defined, total}, metric, false};
}

/// Three groups with hand-computed statistics: accuracies {90, 92, 94} and {80, 82, 87} (std
/// ddof 0: sqrt(8/3), sqrt(26/3)), first rounds {2, 3, 4} (std sqrt(2/3)) and {12, never, never}.
Table small_table() {
  Table table;
  table.caption = {"Caption line", "50% done"};
  table.columns = {{"algorithm", "algorithm", false},
                   {"n", "n", false},
                   {"accuracy (%)", "accuracy", true},
                   {"first round ARI >= 0.9", "first_round_ari_0.9", true}};
  const auto accuracy = Metric::kAccuracy;
  const auto first = Metric::kFirstRoundAri09;
  table.rows = {
      {std::string("clove"), std::string("3"), cell(accuracy, 92.0, std::sqrt(8.0 / 3.0), 3, 3),
       cell(first, 3.0, std::sqrt(2.0 / 3.0), 3, 3)},
      {std::string("ifca"), std::string("3"), cell(accuracy, 83.0, std::sqrt(26.0 / 3.0), 3, 3),
       cell(first, 12.0, 0.0, 1, 3)},
      {std::string("fed_avg"), std::string("3"), cell(accuracy, kNaN, kNaN, 0, 3),
       cell(first, kNaN, kNaN, 0, 3)}};
  return table;
}

TEST(TableFormat, RecoveryCellsWithoutAnyRecoverySayNever) {
  EXPECT_EQ(format_statistic(cell(Metric::kRecoveryRounds, kNaN, kNaN, 0, 2), Format::kMarkdown),
            "never (2/2)");
  EXPECT_EQ(format_statistic(cell(Metric::kRecoveryRounds, kNaN, kNaN, 0, 0), Format::kMarkdown),
            "-");  // undefined for every run (no ARI)
  EXPECT_EQ(format_statistic(cell(Metric::kFirstRoundAri09, kNaN, kNaN, 0, 3), Format::kMarkdown),
            "-");  // fedavg: no ARI, not "never"
}

TEST(TableFormat, MarkdownPipeTable) {
  EXPECT_EQ(format_tables({small_table()}, Format::kMarkdown),
            "Caption line\n"
            "50% done\n"
            "\n"
            "| algorithm | n | accuracy (%) | first round ARI >= 0.9 |\n"
            "| --- | --- | --- | --- |\n"
            "| clove | 3 | 92.0 +- 1.6 | 3.0 +- 0.8 |\n"
            "| ifca | 3 | 83.0 +- 2.9 | 12.0 +- 0.0 (2/3 never) |\n"
            "| fed_avg | 3 | - | - |\n");
}

TEST(TableFormat, CsvSeparatesMeanStdAndCount) {
  EXPECT_EQ(format_tables({small_table()}, Format::kCsv),
            "algorithm,n,accuracy_mean,accuracy_std,accuracy_n,first_round_ari_0.9_mean,"
            "first_round_ari_0.9_std,first_round_ari_0.9_n\n"
            "clove,3,92,1.632993162,3,3,0.8164965809,3\n"
            "ifca,3,83,2.943920289,3,12,0,1\n"
            "fed_avg,3,,,0,,,0\n");
}

TEST(TableFormat, LatexTabularWithPm) {
  EXPECT_EQ(format_tables({small_table()}, Format::kLatex),
            "% Caption line\n"
            "% 50% done\n"
            "\\begin{tabular}{llcc}\n"
            "\\hline\n"
            "algorithm & n & accuracy (\\%) & first round ARI $\\geq$ 0.9 \\\\\n"
            "\\hline\n"
            "clove & 3 & $92.0 \\pm 1.6$ & $3.0 \\pm 0.8$ \\\\\n"
            "ifca & 3 & $83.0 \\pm 2.9$ & $12.0 \\pm 0.0$ (2/3 never) \\\\\n"
            "fed\\_avg & 3 & - & - \\\\\n"
            "\\hline\n"
            "\\end{tabular}\n");
}

TEST(TableFormat, StatisticPrecisionAndNotes) {
  EXPECT_EQ(
      format_statistic(cell(Metric::kAri, 0.8, std::sqrt(0.08 / 3.0), 3, 3), Format::kMarkdown),
      "0.80 +- 0.16");
  EXPECT_EQ(format_statistic(cell(Metric::kTestLoss, 0.0143, 0.0004, 3, 3), Format::kMarkdown),
            "0.014 +- 0.000");
  EXPECT_EQ(format_statistic(cell(Metric::kAri, -0.001, 0.02, 3, 3), Format::kMarkdown),
            "0.00 +- 0.02");  // no "-0.00"
  EXPECT_EQ(format_statistic(cell(Metric::kAri, 0.5, 0.0, 2, 3), Format::kMarkdown),
            "0.50 +- 0.00 (1/3 undefined)");
  auto counted = cell(Metric::kAccuracy, 99.06, 0.11, 2, 2);
  counted.show_count = true;
  EXPECT_EQ(format_statistic(counted, Format::kLatex), "$99.1 \\pm 0.1$ [n=2]");
}

TEST(TableFormat, CsvQuotesFieldsWithCommas) {
  Table table;
  table.columns = {{"data-dir", "data-dir", false}};
  table.rows = {{std::string("a,\"b\"")}};
  EXPECT_EQ(format_tables({table}, Format::kCsv), "data-dir\n\"a,\"\"b\"\"\"\n");
}

TEST(TableFormat, RowWithTheWrongCellCountIsAShapeError) {
  auto table = small_table();
  table.rows[0].pop_back();
  EXPECT_THROW(format_tables({table}, Format::kMarkdown), ShapeError);
}

TEST(TableFormat, ParsesFormatNames) {
  EXPECT_EQ(parse_format("latex"), Format::kLatex);
  EXPECT_THROW(parse_format("html"), ConfigError);
}

}  // namespace
}  // namespace cflrun::report
