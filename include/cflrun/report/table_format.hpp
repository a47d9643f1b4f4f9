#pragma once
/// @file
/// A report table independent of its output format, and its renderings as Markdown (pipe
/// tables), CSV (RFC 4180, separate mean and std columns) and LaTeX (tabular, $m \pm s$).

#include <string>
#include <variant>
#include <vector>

#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/metric.hpp>

namespace cflrun::report {

/// A cell holding a metric summarized over seeds.
struct StatisticCell {
  Statistic statistic;      ///< mean, std and counts.
  Metric metric;            ///< sets the precision and the word for undefined runs.
  bool show_count = false;  ///< append " [n=total]" (when seed counts differ between cells).
};

/// A table cell: text (a config value, a count; "" = empty) or a statistic.
using Cell = std::variant<std::string, StatisticCell>;

/// A column: its title for Markdown and LaTeX, its name for CSV.
struct Column {
  std::string title;       ///< e.g. "accuracy (%)".
  std::string csv_name;    ///< e.g. "accuracy"; a statistic column gives <name>_mean,_std,_n.
  bool statistic = false;  ///< cells are StatisticCell (CSV: three fields), else text.
};

/// One table: caption lines, columns, and rows of cells (each row has one cell per column).
struct Table {
  std::vector<std::string> caption;  ///< Markdown: lines before the table; LaTeX: % comments;
                                     ///< CSV: not printed.
  std::vector<Column> columns;
  std::vector<std::vector<Cell>> rows;
};

/// Output formats of `cflrun report --format`.
enum class Format { kMarkdown, kCsv, kLatex };

/// The format named `name` (markdown | csv | latex).
/// @throws ConfigError naming `name` and the accepted names.
Format parse_format(const std::string& name);

/// A statistic as printed in Markdown ("99.1 +- 0.2"), or in LaTeX ("$99.1 \pm 0.2$"): "-" if
/// no run defines it; " (k/n never)" appended if k of n runs do not; " [n=N]" if show_count.
std::string format_statistic(const StatisticCell& cell, Format format);

/// Renders tables one after another, separated by a blank line. CSV prints one header row and
/// one row per table row; a statistic column gives <name>_mean and <name>_std (full precision,
/// empty if undefined) and <name>_n (runs where it is defined).
/// @throws ShapeError if a row's cell count differs from the column count.
std::string format_tables(const std::vector<Table>& tables, Format format);

}  // namespace cflrun::report
