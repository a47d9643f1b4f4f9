#include <cflrun/report/table_layout.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr const char* kUnset = "(unset)";
constexpr const char* kMethod = "mean +- std over seeds (std with ddof 0)";

using Values = std::vector<std::string>;

bool values_less(const Values& a, const Values& b) {
  return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), value_less);
}

Values shown_values(const RunGroup& group, const std::vector<std::string>& keys) {
  Values values;
  for (const auto& key : keys) {
    values.push_back(shown_value(group, key));
  }
  return values;
}

/// Sorted distinct values of `key` over `groups`.
Values distinct_values(const std::vector<RunGroup>& groups, const std::string& key) {
  Values values;
  for (const auto& group : groups) {
    values.push_back(shown_value(group, key));
  }
  std::sort(values.begin(), values.end(), value_less);
  values.erase(std::unique(values.begin(), values.end()), values.end());
  return values;
}

std::string join(const std::vector<std::string>& items, const std::string& separator) {
  std::string text;
  for (const auto& item : items) {
    text += (text.empty() ? "" : separator) + item;
  }
  return text;
}

std::string assignments(const std::vector<std::string>& keys, const Values& values,
                        const std::string& equals) {
  std::vector<std::string> items;
  for (std::size_t i = 0; i < keys.size(); ++i) {
    items.push_back(keys[i] + equals + values[i]);
  }
  return join(items, ", ");
}

bool any_unsupervised(const std::vector<RunGroup>& groups) {
  return std::any_of(groups.begin(), groups.end(),
                     [](const RunGroup& group) { return group.unsupervised(); });
}

/// The metrics of a list table: test loss joins accuracy when some group is unsupervised.
std::vector<Metric> list_metrics(const std::vector<RunGroup>& groups, std::vector<Metric> metrics) {
  const auto accuracy = std::find(metrics.begin(), metrics.end(), Metric::kAccuracy);
  const bool has_loss =
      std::find(metrics.begin(), metrics.end(), Metric::kTestLoss) != metrics.end();
  if (accuracy != metrics.end() && !has_loss && any_unsupervised(groups)) {
    metrics.insert(std::next(accuracy), Metric::kTestLoss);
  }
  return metrics;
}

/// Layout keys in table order: tables, rows, columns.
std::vector<std::string> layout_keys(const GridLayout& layout) {
  auto keys = layout.tables;
  keys.push_back(layout.rows);
  if (!layout.columns.empty()) {
    keys.push_back(layout.columns);
  }
  return keys;
}

void check_layout_keys(const std::vector<RunGroup>& groups, const GridLayout& layout) {
  const auto keys = layout_keys(layout);
  std::set<std::string> present;
  for (const auto& group : groups) {
    for (const auto& entry : group.key) {
      present.insert(entry.first);
    }
  }
  std::set<std::string> used;
  for (const auto& key : keys) {
    if (!used.insert(key).second) {
      throw ConfigError("report layout: key '" + key +
                        "' is given twice among --rows, "
                        "--columns and --tables; use each key once");
    }
    if (present.count(key) == 0) {
      throw ConfigError("report layout: '" + key + "' is not a config key that groups runs (" +
                        (is_bookkeeping_key(key) ? "it is per-run bookkeeping" : "no run has it") +
                        "); keys: " + join({present.begin(), present.end()}, ", "));
    }
  }
}

/// Groups by grid cell (values of the layout keys).
std::map<Values, std::vector<RunGroup>> cells_of(const std::vector<RunGroup>& groups,
                                                 const GridLayout& layout) {
  std::map<Values, std::vector<RunGroup>> cells;
  for (const auto& group : groups) {
    cells[shown_values(group, layout_keys(layout))].push_back(group);
  }
  return cells;
}

std::string cell_caption(const std::vector<RunGroup>& groups, const GridLayout& layout,
                         Metric metric, bool show_count) {
  auto title = metric_info(metric).title;
  if (metric == Metric::kAccuracy && any_unsupervised(groups)) {
    title += " (test loss for unsupervised runs)";
  }
  std::string prefix =
      layout.tables.empty()
          ? ""
          : assignments(layout.tables, shown_values(groups.front(), layout.tables), " = ") + ": ";
  const auto count = groups.front().runs.size();
  return prefix + title + ", rows " + layout.rows +
         (layout.columns.empty() ? "" : ", columns " + layout.columns) + "; " + kMethod +
         (show_count ? ", n per cell in brackets" : ", n = " + std::to_string(count) + " per cell");
}

/// One grid table from the groups sharing one combination of table-key values. `columns` are
/// the column values of every table, so that all tables have the same columns.
Table grid_table(const std::vector<RunGroup>& groups, const GridLayout& layout, Metric metric,
                 const Values& columns) {
  std::set<std::size_t> counts;
  for (const auto& group : groups) {
    counts.insert(group.runs.size());
  }
  const bool show_count = counts.size() > 1;
  Table table;
  table.caption.push_back(cell_caption(groups, layout, metric, show_count));
  table.columns.push_back({layout.rows, layout.rows, false});
  for (const auto& column : columns) {
    const auto title = layout.columns.empty() ? metric_info(metric).title : column;
    table.columns.push_back({title, title, true});
  }
  for (const auto& row : distinct_values(groups, layout.rows)) {
    std::vector<Cell> cells{row};
    for (const auto& column : columns) {
      const auto it = std::find_if(groups.begin(), groups.end(), [&](const RunGroup& group) {
        return shown_value(group, layout.rows) == row &&
               (layout.columns.empty() || shown_value(group, layout.columns) == column);
      });
      if (it == groups.end()) {
        cells.emplace_back(std::string());
        continue;
      }
      const auto shown = shown_metric(metric, it->unsupervised());
      cells.emplace_back(StatisticCell{it->statistic(shown), shown, show_count});
    }
    table.rows.push_back(std::move(cells));
  }
  return table;
}

}  // namespace

std::string shown_value(const RunGroup& group, const std::string& key) {
  return group.key.count(key) != 0 ? group.value(key) : kUnset;
}

std::string common_keys_caption(const std::vector<RunGroup>& groups) {
  std::vector<std::string> common;
  for (const auto& [key, value] : common_keys(groups)) {
    common.push_back(key + "=" + value);
  }
  return common.empty() ? "" : "Same in every group: " + join(common, ", ") + ".";
}

Table group_list_table(const std::vector<RunGroup>& groups,
                       const std::vector<std::string>& key_columns,
                       const std::vector<Metric>& metrics) {
  Table table;
  table.caption.push_back(std::string("Final-round metrics, ") + kMethod + "; n = runs per group.");
  if (const auto common = common_keys_caption(groups); !common.empty()) {
    table.caption.push_back(common);
  }
  for (const auto& key : key_columns) {
    table.columns.push_back({key, key, false});
  }
  table.columns.push_back({"n", "n", false});
  const auto shown = list_metrics(groups, metrics);
  for (const Metric metric : shown) {
    table.columns.push_back({metric_info(metric).title, metric_info(metric).name, true});
  }
  for (const auto& group : groups) {
    std::vector<Cell> row;
    for (const auto& key : key_columns) {
      row.emplace_back(shown_value(group, key));
    }
    row.emplace_back(std::to_string(group.runs.size()));
    for (const Metric metric : shown) {
      row.emplace_back(StatisticCell{group.statistic(metric), metric, false});
    }
    table.rows.push_back(std::move(row));
  }
  return table;
}

void check_grid_layout(const std::vector<RunGroup>& groups, const GridLayout& layout) {
  check_layout_keys(groups, layout);
  const auto keys = layout_keys(layout);
  std::set<std::string> varying;
  std::string example;
  for (const auto& [cell, members] : cells_of(groups, layout)) {
    if (members.size() < 2) {
      continue;
    }
    const auto inside = varying_keys(members);
    if (example.empty() && !inside.empty()) {
      std::vector<std::string> values;
      for (const auto& member : members) {
        values.push_back(shown_values(member, inside).front());
      }
      example = " (e.g. the cell " + assignments(keys, cell, "=") + " holds " + inside.front() +
                " = " + join(values, ", ") + ")";
    }
    varying.insert(inside.begin(), inside.end());
  }
  if (!varying.empty()) {
    const auto names = join({varying.begin(), varying.end()}, ", ");
    throw ConfigError("report layout: " + names + (varying.size() == 1 ? " varies" : " vary") +
                      " within a table cell" + example +
                      "; select runs with --filter KEY=VALUE, or add " + names + " to --tables");
  }
}

Table grid_list_table(const std::vector<RunGroup>& groups, const GridLayout& layout,
                      Metric metric) {
  check_grid_layout(groups, layout);
  const auto keys = layout_keys(layout);
  auto sorted = groups;
  std::stable_sort(sorted.begin(), sorted.end(), [&](const RunGroup& a, const RunGroup& b) {
    return values_less(shown_values(a, keys), shown_values(b, keys));
  });
  return group_list_table(sorted, keys, {metric});
}

std::vector<Table> grid_tables(const std::vector<RunGroup>& groups, const GridLayout& layout,
                               Metric metric) {
  check_grid_layout(groups, layout);
  std::vector<std::pair<Values, std::vector<RunGroup>>> parts;
  for (const auto& group : groups) {
    const auto values = shown_values(group, layout.tables);
    auto it = std::find_if(parts.begin(), parts.end(),
                           [&](const auto& part) { return part.first == values; });
    if (it == parts.end()) {
      parts.emplace_back(values, std::vector<RunGroup>{});
      it = std::prev(parts.end());
    }
    it->second.push_back(group);
  }
  std::stable_sort(parts.begin(), parts.end(),
                   [](const auto& a, const auto& b) { return values_less(a.first, b.first); });
  const auto columns =
      layout.columns.empty() ? Values{""} : distinct_values(groups, layout.columns);
  std::vector<Table> tables;
  for (const auto& part : parts) {
    tables.push_back(grid_table(part.second, layout, metric, columns));
  }
  return tables;
}

}  // namespace cflrun::report
