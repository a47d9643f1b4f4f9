#pragma once
/// @file
/// The table of `cflrun report --recovery`: how each group of runs of a changing population
/// (issue 45) recovers from each change, mean +- std over its seeds (recovery.hpp).

#include <string>
#include <vector>

#include <cflrun/report/group_statistics.hpp>
#include <cflrun/report/table_format.hpp>

namespace cflrun::report {

/// One row per group and change round (groups in the order given, change rounds ascending; a
/// group whose runs change at different rounds gets a row for each, over the runs with it):
/// `key_columns` (config values), the change round, n (runs with that change round), then mean
/// +- std over those runs of: the ARI and the accuracy recovery rounds (over the runs that
/// recover; "(k/n never)" counts those that do not, and a run whose series is undefined there,
/// e.g. ARI of fedavg, counts in neither), and the accuracy before, at (after) and after the
/// change (dip), in percent. Caption: the definitions and the keys common to every group.
/// @param groups       groups of complete runs (group_runs); runs without recoveries add nothing.
/// @param key_columns  config keys shown as leading columns, e.g. varying_keys(groups).
Table recovery_table(const std::vector<RunGroup>& groups,
                     const std::vector<std::string>& key_columns);

}  // namespace cflrun::report
