#pragma once
/// @file
/// Groups runs that differ only by seed and summarizes each metric over the seeds as mean +- std
/// with NumPy's default ddof = 0, as the official notebook computes the CLoVE paper's Tables 1,
/// 2 and 4 (clove-official-setup.md Sec. 12).

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <cflrun/report/metric.hpp>
#include <cflrun/report/run_summary.hpp>

namespace cflrun::report {

/// Mean and standard deviation of one metric over the runs of a group.
struct Statistic {
  double mean = 0.0;  ///< mean over the runs where the metric is defined; NaN if there are none.
  double std = 0.0;   ///< population std (ddof = 0) over the same runs; NaN if there are none.
  int defined = 0;    ///< runs where the metric is defined.
  int total = 0;      ///< runs in the group (defined + undefined).
};

/// Mean and ddof-0 std of the defined values; undefined values (nullopt) only count in `total`.
Statistic summarize(const std::vector<std::optional<double>>& values);

/// True for /config keys that do not define the experiment and so never split groups: the options
/// of kinds seed, placement and bookkeeping (core::OptionKind: seed, data-seed, pool-seed, threads,
/// device, out, resume, ...), build and machine provenance (version, git_commit, ranks, ...), and
/// --data-dir, --models and --server-hosts-clients.
bool is_bookkeeping_key(const std::string& key);

/// Runs that differ only in bookkeeping keys (above), i.e. by seed: one row of a table.
struct RunGroup {
  /// /config without the bookkeeping keys and other algorithms' options.
  std::map<std::string, std::string> key;
  std::vector<RunSummary> runs;  ///< the group's runs, in input order.

  /// `metric` over the runs (use shown_metric to pick test loss for unsupervised groups).
  Statistic statistic(Metric metric) const;
  /// True if the group's runs are unsupervised (config `unsupervised` = "true").
  bool unsupervised() const;
  /// The value of config key `name` in this group, or "" if its runs lack it.
  std::string value(const std::string& name) const;
};

/// Orders two config values: numerically if both are numbers ("5" < "10"), else as text.
bool value_less(const std::string& a, const std::string& b);

/// Groups runs by their config without bookkeeping keys and without the options of algorithms other
/// than the run's (cli::other_algorithms_options: files of builds before 2026-11-28 recorded every
/// algorithm's options, later ones only their own). Groups are sorted by their key, key
/// names alphabetically, values with value_less.
std::vector<RunGroup> group_runs(const std::vector<RunSummary>& runs);

/// Keys whose value differs between groups (or is missing in some), sorted by name.
std::vector<std::string> varying_keys(const std::vector<RunGroup>& groups);

/// Keys with the same value in every group, with that value, sorted by name.
std::vector<std::pair<std::string, std::string>> common_keys(const std::vector<RunGroup>& groups);

/// A `--filter key=value` selection: a run is kept if, for every key named, its config value is
/// one of the values given for that key (values of one key are alternatives; keys combine).
using RunFilter = std::map<std::string, std::vector<std::string>>;

/// Parses `key=value` texts into a RunFilter.
/// @throws ConfigError for a text without '=' or with an empty key.
RunFilter parse_filters(const std::vector<std::string>& texts);

/// The runs that pass `filter`.
/// @throws ConfigError if a filter key is in no run's config (probably a typo); the message lists
///         the keys present.
std::vector<RunSummary> filter_runs(const std::vector<RunSummary>& runs, const RunFilter& filter);

/// One line per pair (seed, data seed) that two or more runs of a group share, naming their
/// files ("seed 1 (data seed 1) appears in a.h5 b.h5"), for a warning: such runs are duplicates
/// (e.g. one run repeated with another rank count), yet each counts as a seed.
std::vector<std::string> duplicate_seed_notes(const std::vector<RunGroup>& groups);

}  // namespace cflrun::report
