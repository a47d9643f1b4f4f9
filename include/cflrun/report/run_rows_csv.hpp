#pragma once
/// @file
/// Committed per-run rows (results/run_summaries.py: one CSV row per run of a paper sweep, with its
/// per-round accuracy and ARI) read back as runs a report can group and tabulate, so the paper's
/// tables can be made again from the rows in the repository after the result files are gone.

#include <filesystem>
#include <vector>

#include <cflrun/report/run_summary.hpp>

namespace cflrun::report {

/// True if `path` names a CSV of per-run rows (extension .csv).
bool is_run_rows_csv(const std::filesystem::path& path);

/// Reads a runs.csv of results/run_summaries.py: a header line with at least `config`, `seed`,
/// `rounds`, `git_commit`, `accuracy` and `ari`, then one row per complete run (quoted fields as
/// Python's csv module writes them). Each row becomes a complete RunSummary whose path is
/// "FILE line N", whose metrics are computed from its per-round series (`accuracy` and `ari`:
/// space-separated values, one per round; `accuracy_weighted` and `test_loss` where the column
/// has values: an unsupervised run's Table 5 metric is its final test loss), and
/// whose config is the row's `options` (config-file lines `key = value` joined by "; ") where
/// given, else what the jobs/paper config name `<dataset>_<partition>_<algorithm>` says, plus
/// seed, rounds, git_commit, ranks and `paper_config` (the name). Runs of one cell then group
/// together as result files do (group_runs), by seed.
/// @throws DataError naming the file and line for a missing column, a row with another number of
///         fields, a series whose length is not `rounds`, or a value that does not parse; and if
///         the file cannot be opened.
std::vector<RunSummary> read_run_rows_csv(const std::filesystem::path& path);

}  // namespace cflrun::report
