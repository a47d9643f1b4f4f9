#include <cflrun/report/recovery_table.hpp>

#include <optional>
#include <set>

#include <cflrun/report/metric.hpp>
#include <cflrun/report/recovery.hpp>
#include <cflrun/report/table_layout.hpp>

namespace cflrun::report {
namespace {

constexpr double kPercent = 100.0;

/// One change round's entries of a group's runs, one per run that has it.
using Recoveries = std::vector<const ChangeRecovery*>;

std::set<int> change_rounds_of(const RunGroup& group) {
  std::set<int> rounds;
  for (const auto& run : group.runs) {
    for (const auto& recovery : run.recoveries) {
      rounds.insert(recovery.change_round);
    }
  }
  return rounds;
}

Recoveries recoveries_at(const RunGroup& group, int change_round) {
  Recoveries found;
  for (const auto& run : group.runs) {
    for (const auto& recovery : run.recoveries) {
      if (recovery.change_round == change_round) {
        found.push_back(&recovery);
      }
    }
  }
  return found;
}

/// Recovery rounds over the runs where the series is defined; those that never recover count
/// as undefined values, so that the cell says "(k/n never)".
StatisticCell rounds_cell(const Recoveries& recoveries, RecoveryRounds ChangeRecovery::*series) {
  std::vector<std::optional<double>> values;
  for (const auto* recovery : recoveries) {
    const auto& rounds = recovery->*series;
    if (rounds.state == RecoveryState::kRecovered) {
      values.emplace_back(rounds.rounds);
    } else if (rounds.state == RecoveryState::kNever) {
      values.emplace_back(std::nullopt);
    }
  }
  return {summarize(values), Metric::kRecoveryRounds, false};
}

/// A per-run value (an accuracy as percent, an ARI as it is) over the runs, mean +- std.
StatisticCell value_cell(const Recoveries& recoveries, std::optional<double> ChangeRecovery::*value,
                         Metric metric) {
  const double scale = metric == Metric::kAccuracy ? kPercent : 1.0;
  std::vector<std::optional<double>> values;
  for (const auto* recovery : recoveries) {
    const auto& v = recovery->*value;
    values.push_back(v ? std::optional<double>(scale * *v) : std::nullopt);
  }
  return {summarize(values), metric, false};
}

std::vector<std::string> caption(const std::vector<RunGroup>& groups) {
  std::vector<std::string> lines{
      "Recovery after each population change at round r (1-based); mean +- std over seeds (std "
      "with ddof 0); n = runs with that change round.",
      "ARI recovery: rounds d >= 0 until ARI(r + d) >= 0.9; accuracy recovery: until "
      "accuracy(r + d) >= accuracy(r - 1) - 1 point; searched to the run's end, past later "
      "changes; mean over the runs that recover, (k/n never) for the others, '-' where undefined "
      "(no ARI: fedavg, local; no round before a change at round 1).",
      "Accuracy before: round r - 1; after: round r; dip: the lowest from round r to the next "
      "change (or the end)."};
  if (const auto common = common_keys_caption(groups); !common.empty()) {
    lines.push_back(common);
  }
  return lines;
}

std::vector<Column> columns(const std::vector<std::string>& key_columns) {
  std::vector<Column> columns;
  for (const auto& key : key_columns) {
    columns.push_back({key, key, false});
  }
  columns.insert(columns.end(), {{"change round", "change_round", false},
                                 {"n", "n", false},
                                 {"ARI before", "ari_before", true},
                                 {"ARI after", "ari_after", true},
                                 {"ARI recovery (rounds)", "ari_recovery_rounds", true},
                                 {"accuracy recovery (rounds)", "accuracy_recovery_rounds", true},
                                 {"accuracy before (%)", "accuracy_before", true},
                                 {"accuracy after (%)", "accuracy_after", true},
                                 {"accuracy dip (%)", "accuracy_dip", true}});
  return columns;
}

std::vector<Cell> row(const RunGroup& group, const std::vector<std::string>& key_columns,
                      int change_round) {
  std::vector<Cell> cells;
  for (const auto& key : key_columns) {
    cells.emplace_back(shown_value(group, key));
  }
  const auto recoveries = recoveries_at(group, change_round);
  cells.insert(cells.end(),
               {std::to_string(change_round), std::to_string(recoveries.size()),
                value_cell(recoveries, &ChangeRecovery::ari_before, Metric::kAri),
                value_cell(recoveries, &ChangeRecovery::ari_after, Metric::kAri),
                rounds_cell(recoveries, &ChangeRecovery::ari),
                rounds_cell(recoveries, &ChangeRecovery::accuracy),
                value_cell(recoveries, &ChangeRecovery::accuracy_before, Metric::kAccuracy),
                value_cell(recoveries, &ChangeRecovery::accuracy_after, Metric::kAccuracy),
                value_cell(recoveries, &ChangeRecovery::accuracy_dip, Metric::kAccuracy)});
  return cells;
}

}  // namespace

Table recovery_table(const std::vector<RunGroup>& groups,
                     const std::vector<std::string>& key_columns) {
  Table table;
  table.caption = caption(groups);
  table.columns = columns(key_columns);
  for (const auto& group : groups) {
    for (const int change_round : change_rounds_of(group)) {
      table.rows.push_back(row(group, key_columns, change_round));
    }
  }
  return table;
}

}  // namespace cflrun::report
