#pragma once
/// @file
/// Arranges groups of runs into tables: a list with one row per group (the default), or the
/// CLoVE paper's grid (Tables 1, 2, 4: one table per data mixing, rows = algorithms, columns =
/// datasets, cells = mean +- std over seeds).

#include <string>
#include <vector>

#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/metric.hpp>
#include <cflrun/report/table_format.hpp>

namespace cflrun::report {

/// The grid layout of `--rows KEY --columns KEY --tables KEY[,KEY...]`.
struct GridLayout {
  std::string rows;                 ///< config key whose values are the rows, e.g. "algorithm".
  std::string columns;              ///< key whose values are the columns, e.g. "dataset"; "" =
                                    ///< one column, the metric.
  std::vector<std::string> tables;  ///< keys whose value combinations split tables, e.g.
                                    ///< "partition"; empty = one table.
};

/// A group's value of config key `key` as a table shows it: "(unset)" where its runs lack it.
std::string shown_value(const RunGroup& group, const std::string& key);

/// The caption line naming the keys with one value in every group ("Same in every group:
/// dataset=fmnist, lr=0.01."), or "" if there is none.
std::string common_keys_caption(const std::vector<RunGroup>& groups);

/// One row per group: `key_columns` (config values), n (runs), then one column per metric. When
/// accuracy is among `metrics` and some group is unsupervised, a test-loss column follows it.
/// Caption: how the numbers are computed and the keys common to every group.
Table group_list_table(const std::vector<RunGroup>& groups,
                       const std::vector<std::string>& key_columns,
                       const std::vector<Metric>& metrics);

/// Checks that each grid cell (a value of every table key, the row key and the column key) holds
/// at most one group, i.e. no other key varies within a cell.
/// @throws ConfigError if a layout key is in no group's config (the message lists the keys), if a
///         key is used twice, or if keys outside the layout vary within a cell: the message names
///         them with an example cell and says to select runs with --filter KEY=VALUE or to add
///         the keys to --tables.
void check_grid_layout(const std::vector<RunGroup>& groups, const GridLayout& layout);

/// The grid tables of `metric`, one per combination of table-key values (in value_less order).
/// Every table has the same columns (all values of the column key); rows are the row-key values
/// present in that table; both in value_less order. A cell without runs is empty. When seed
/// counts differ between a table's cells, each cell shows its count ("[n=2]"). Unsupervised
/// groups show their test loss where accuracy is asked for (shown_metric).
/// @throws ConfigError as check_grid_layout.
std::vector<Table> grid_tables(const std::vector<RunGroup>& groups, const GridLayout& layout,
                               Metric metric);

/// The grid as one list for CSV: one row per cell (group), with the layout keys (tables, rows,
/// columns) as leading columns, n, and `metric` (plus test loss as in group_list_table), sorted
/// by the layout keys' values.
/// @throws ConfigError as check_grid_layout.
Table grid_list_table(const std::vector<RunGroup>& groups, const GridLayout& layout, Metric metric);

}  // namespace cflrun::report
