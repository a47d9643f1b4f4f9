#include <cflrun/report/group_statistics.hpp>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iterator>
#include <limits>
#include <set>

#include <cflrun/cli/option_kinds.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

/// The /config keys that never define the experiment a run belongs to: the options of kinds seed,
/// placement and bookkeeping (cli::option_names), what cflrun records beside the options, and three
/// experiment options that `cflrun report` has always left out of the group key.
const std::set<std::string>& bookkeeping_keys() {
  static const auto keys = [] {
    using core::OptionKind;
    auto keys =
        cli::option_names({OptionKind::kSeed, OptionKind::kPlacement, OptionKind::kBookkeeping});
    // Build, machine and layout facts (src/run/experiment_setup.cpp); "blas" in files of builds
    // before d5601f2 (PyPI LibTorch).
    keys.insert({"version", "git_commit", "torch_version", "cuda", "cpu_kernels", "blas", "ranks",
                 "threads_per_rank", "clients", "build_history"});
    // Experiment options (--skip-complete and --resume compare them) that report keeps out of the
    // group key, as it always has: data-dir is a path (the same data elsewhere), models follows
    // --clusters unless given, server-hosts-clients moves only low bits.
    keys.insert({"data-dir", "models", "server-hosts-clients"});
    return keys;
  }();
  return keys;
}

/// The options of algorithms other than `algorithm` (cli::other_algorithms_options), once per
/// algorithm; none for a name no algorithm has (a row of an algorithm since renamed).
const std::set<std::string>& foreign_options(const std::string& algorithm) {
  static std::map<std::string, std::set<std::string>> known;
  auto found = known.find(algorithm);
  if (found == known.end()) {
    std::set<std::string> names;
    try {
      names = cli::other_algorithms_options(algorithm);
    } catch (const ConfigError&) {
    }
    found = known.emplace(algorithm, std::move(names)).first;
  }
  return found->second;
}

/// /config without the bookkeeping keys and without other algorithms' options (which files of
/// builds before 2026-11-28 recorded for every run).
std::map<std::string, std::string> group_key(const RunSummary& run) {
  const auto algorithm = run.config.find("algorithm");
  const auto& foreign = foreign_options(algorithm == run.config.end() ? "" : algorithm->second);
  std::map<std::string, std::string> key;
  for (const auto& [name, value] : run.config) {
    if (!is_bookkeeping_key(name) && foreign.count(name) == 0) {
      key.emplace(name, value);
    }
  }
  return key;
}

/// Parses the whole of `text` as a number.
std::optional<double> as_number(const std::string& text) {
  if (text.empty()) {
    return std::nullopt;
  }
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  return *end == '\0' ? std::optional<double>(value) : std::nullopt;
}

/// Orders keys: names alphabetically, values of the same name by value_less.
bool key_less(const std::map<std::string, std::string>& a,
              const std::map<std::string, std::string>& b) {
  return std::lexicographical_compare(
      a.begin(), a.end(), b.begin(), b.end(), [](const auto& x, const auto& y) {
        return x.first != y.first ? x.first < y.first : value_less(x.second, y.second);
      });
}

std::set<std::string> all_keys(const std::vector<RunGroup>& groups) {
  std::set<std::string> keys;
  for (const auto& group : groups) {
    for (const auto& entry : group.key) {
      keys.insert(entry.first);
    }
  }
  return keys;
}

bool varies(const std::vector<RunGroup>& groups, const std::string& key) {
  return std::any_of(groups.begin(), groups.end(), [&](const RunGroup& group) {
    return group.key.count(key) == 0 || group.value(key) != groups.front().value(key);
  });
}

std::string config_or_empty(const RunSummary& run, const std::string& key) {
  const auto it = run.config.find(key);
  return it == run.config.end() ? "" : it->second;
}

}  // namespace

Statistic summarize(const std::vector<std::optional<double>>& values) {
  Statistic statistic;
  statistic.total = static_cast<int>(values.size());
  double sum = 0.0;
  for (const auto& value : values) {
    if (value) {
      sum += *value;
      ++statistic.defined;
    }
  }
  if (statistic.defined == 0) {
    statistic.mean = statistic.std = kNaN;
    return statistic;
  }
  statistic.mean = sum / statistic.defined;
  double squares = 0.0;
  for (const auto& value : values) {
    if (value) {
      squares += (*value - statistic.mean) * (*value - statistic.mean);
    }
  }
  statistic.std = std::sqrt(squares / statistic.defined);  // NumPy np.std default: ddof = 0
  return statistic;
}

bool is_bookkeeping_key(const std::string& key) { return bookkeeping_keys().count(key) != 0; }

Statistic RunGroup::statistic(Metric metric) const {
  std::vector<std::optional<double>> values;
  values.reserve(runs.size());
  for (const auto& run : runs) {
    values.push_back(metric_value(run.metrics, metric));
  }
  return summarize(values);
}

bool RunGroup::unsupervised() const { return !runs.empty() && runs.front().unsupervised(); }

std::string RunGroup::value(const std::string& name) const {
  const auto it = key.find(name);
  return it == key.end() ? "" : it->second;
}

bool value_less(const std::string& a, const std::string& b) {
  const auto x = as_number(a);
  const auto y = as_number(b);
  if (x && y && *x != *y) {
    return *x < *y;
  }
  return a < b;
}

namespace {

/// Every run's group key, an option some runs record and an older build's run lacks filled in
/// with its default (the value that build ran with).
std::vector<std::map<std::string, std::string>> group_keys(const std::vector<RunSummary>& runs) {
  std::vector<std::map<std::string, std::string>> keys;
  std::set<std::string> names;
  for (const auto& run : runs) {
    keys.push_back(group_key(run));
    for (const auto& entry : keys.back()) {
      names.insert(entry.first);
    }
  }
  for (auto& key : keys) {
    for (const auto& name : names) {
      const auto by_default = cli::default_option_values().find(name);
      if (by_default != cli::default_option_values().end()) {
        key.emplace(name, by_default->second);
      }
    }
  }
  return keys;
}

}  // namespace

std::vector<RunGroup> group_runs(const std::vector<RunSummary>& runs) {
  auto keys = group_keys(runs);
  std::vector<RunGroup> groups;
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const auto& run = runs[r];
    auto& key = keys[r];
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const RunGroup& group) { return group.key == key; });
    if (it == groups.end()) {
      groups.push_back(RunGroup{std::move(key), {}});
      it = std::prev(groups.end());
    }
    it->runs.push_back(run);
  }
  std::stable_sort(groups.begin(), groups.end(),
                   [](const RunGroup& a, const RunGroup& b) { return key_less(a.key, b.key); });
  return groups;
}

std::vector<std::string> varying_keys(const std::vector<RunGroup>& groups) {
  std::vector<std::string> keys;
  for (const auto& key : all_keys(groups)) {
    if (varies(groups, key)) {
      keys.push_back(key);
    }
  }
  return keys;
}

std::vector<std::pair<std::string, std::string>> common_keys(const std::vector<RunGroup>& groups) {
  std::vector<std::pair<std::string, std::string>> keys;
  for (const auto& key : all_keys(groups)) {
    if (!varies(groups, key)) {
      keys.emplace_back(key, groups.front().value(key));
    }
  }
  return keys;
}

RunFilter parse_filters(const std::vector<std::string>& texts) {
  RunFilter filter;
  for (const auto& text : texts) {
    const auto equals = text.find('=');
    if (equals == std::string::npos || equals == 0) {
      throw ConfigError(
          "--filter must be KEY=VALUE (a /config key and its value, e.g. "
          "algorithm=clove), but got '" +
          text + "'");
    }
    filter[text.substr(0, equals)].push_back(text.substr(equals + 1));
  }
  return filter;
}

std::vector<RunSummary> filter_runs(const std::vector<RunSummary>& runs, const RunFilter& filter) {
  for (const auto& [key, values] : filter) {
    const bool known = std::any_of(runs.begin(), runs.end(),
                                   [&](const RunSummary& run) { return run.config.count(key); });
    if (!known && !runs.empty()) {
      std::string present;
      for (const auto& entry : runs.front().config) {
        present += (present.empty() ? "" : ", ") + entry.first;
      }
      throw ConfigError("--filter " + key + "=...: no run has config key '" + key +
                        "'; keys present: " + present);
    }
  }
  std::vector<RunSummary> kept;
  std::copy_if(runs.begin(), runs.end(), std::back_inserter(kept), [&](const RunSummary& run) {
    return std::all_of(filter.begin(), filter.end(), [&](const auto& entry) {
      const auto& values = entry.second;
      return std::find(values.begin(), values.end(), config_or_empty(run, entry.first)) !=
             values.end();
    });
  });
  return kept;
}

std::vector<std::string> duplicate_seed_notes(const std::vector<RunGroup>& groups) {
  std::vector<std::string> notes;
  for (const auto& group : groups) {
    std::map<std::pair<std::string, std::string>, std::vector<std::string>> by_seed;
    for (const auto& run : group.runs) {
      by_seed[{config_or_empty(run, "seed"), config_or_empty(run, "data-seed")}].push_back(
          run.path.string());
    }
    for (const auto& [seeds, files] : by_seed) {
      if (files.size() > 1) {
        std::string note = "seed " + seeds.first + " (data seed " + seeds.second + ") appears in";
        for (const auto& file : files) {
          note += " " + file;
        }
        notes.push_back(note);
      }
    }
  }
  return notes;
}

}  // namespace cflrun::report
