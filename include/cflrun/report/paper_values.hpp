#pragma once
/// @file
/// The CLoVE paper's reference values (Tables 1, 2, 4, 5 and 9, kept as data in
/// jobs/paper/paper_values.csv) and the `cflrun report --paper` table that puts each measured cell
/// beside the paper's value and the difference.

#include <filesystem>
#include <string>
#include <vector>

#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/metric.hpp>
#include <cflrun/report/table_format.hpp>

namespace cflrun::report {

/// The default file of `--paper`, relative to the source tree.
inline constexpr const char* kDefaultPaperValues = "jobs/paper/paper_values.csv";

/// One cell of the paper: mean and std over its 3 seeds.
struct PaperValue {
  std::string table;                  ///< e.g. "Table 1".
  Metric metric = Metric::kAccuracy;  ///< accuracy | ari | ari_round10 | first_round_ari_0.9 |
                                      ///< test_loss (Table 5, unsupervised runs).
  std::string partition;              ///< cflrun's --partition value, e.g. "label_skew_1".
  std::string dataset;                ///< cflrun's --dataset value: mnist | cifar10 | fmnist.
  std::string algorithm;              ///< cflrun's --algorithm value, e.g. "clove".
  double mean = 0.0;  ///< as printed (accuracy in %, ARI in [−1, 1], rounds 1-based, MSE).
  double std = 0.0;   ///< as printed.
};

/// Reads a CSV of `table,metric,partition,dataset,algorithm,mean,std` rows after that header
/// line; lines starting with # are comments.
/// @throws DataError naming the file (and the line, for a malformed row: wrong field count, an
///         unknown metric, a number that does not parse) or saying how to fix a missing file.
std::vector<PaperValue> read_paper_values(const std::filesystem::path& path);

struct PaperReferences;

/// One row per (group, metric) that the paper reports (a test-loss cell for a group of
/// unsupervised runs, every other metric for supervised ones: matches in paper_table.cpp): the
/// paper's table, partition, dataset, algorithm, rounds, metric, the accuracy's definition (that of
/// the row's reference code: paper_references.hpp), n, cflrun's mean +- std over the group's seeds,
/// the paper's mean +- std, the difference of the means (cflrun - paper, in the metric's unit and
/// precision), and for accuracy, ARI and test loss the cell's class (classify). Rows follow the
/// groups' order, metrics in all_metrics() order. Where several groups match one cell (partition,
/// dataset, algorithm), the one with the most runs stands for it (of equals, one whose runs
/// recorded the sample-weighted accuracy, else the first) and the caption counts the values left
/// out.
/// @param groups      groups of complete runs (group_runs).
/// @param values      the paper's cells (read_paper_values).
/// @param references  accuracy definitions and evidence (read_paper_references).
/// @param source      named in the caption (the values' file).
/// @param unmatched   set to the number of groups without any paper cell.
Table paper_comparison_table(const std::vector<RunGroup>& groups,
                             const std::vector<PaperValue>& values,
                             const PaperReferences& references, const std::string& source,
                             int& unmatched);

/// The counts of the paper's Table 1 (accuracy), Table 2 (ARI) and Table 5 (unsupervised test
/// loss) cells per class (within, outside with evidence, outside, missing: classify), one row per
/// dataset and metric that `values` has cells for, datasets in the order of `values`. A cell with
/// several matching groups is classed by the group that stands for it in paper_comparison_table; a
/// cell without one is missing.
Table paper_summary_table(const std::vector<RunGroup>& groups,
                          const std::vector<PaperValue>& values, const PaperReferences& references,
                          const std::string& source);

}  // namespace cflrun::report
