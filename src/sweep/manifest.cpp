#include <cflrun/sweep/manifest.hpp>

#include <algorithm>
#include <fstream>
#include <map>
#include <set>
#include <system_error>

#include <cflrun/core/error.hpp>

namespace cflrun::sweep {
namespace {

namespace fs = std::filesystem;

constexpr const char* kResultExtension = ".h5";

// cflrun switches take no value ("--quiet", not "--quiet true"): they go in SweepSpec::flags.
const std::set<std::string> kSwitches{"overwrite", "quiet", "skip-complete"};
// cflrun options that do not run an experiment.
const std::set<std::string> kNotRunOptions{"help", "version"};

void check_axes(const std::vector<GridAxis>& axes) {
  const bool has_seed = std::any_of(axes.begin(), axes.end(),
                                    [](const GridAxis& axis) { return axis.option == "seed"; });
  if (!has_seed) {
    throw ConfigError(
        "cflrun sweep needs --set seed=... so that every manifest line names its seed (e.g. --set "
        "seed=1,2,3)");
  }
  for (const auto& axis : axes) {
    if (axis.option == "out" || axis.option == "config") {
      throw ConfigError("--set " + axis.option + "=...: the sweep sets --" + axis.option +
                        " itself; use cflrun sweep's " +
                        (axis.option == "out" ? "--results-dir" : "--config"));
    }
    if (kNotRunOptions.count(axis.option) != 0) {
      throw ConfigError("--set " + axis.option + "=...: --" + axis.option +
                        " does not run an experiment; give run options only");
    }
    if (kSwitches.count(axis.option) != 0) {
      throw ConfigError("--set " + axis.option + "=...: --" + axis.option +
                        " is a switch without a value; add it to every run with --flag " +
                        axis.option);
    }
  }
}

void check_word(const std::string& what, const std::string& word) {
  if (!is_safe_word(word)) {
    throw ConfigError(what + " '" + word +
                      "' may only hold letters, digits and ._+-/:@%= (no spaces or quotes), so "
                      "that a manifest line splits into arguments");
  }
}

void check_spec(const SweepSpec& spec) {
  check_axes(spec.axes);
  if (!spec.config_file.empty()) {
    check_word("--config", spec.config_file);
  }
  check_word("--results-dir", spec.results_dir.string());
  for (const auto& flag : spec.flags) {
    check_word("--flag", flag);
    if (kSwitches.count(flag) == 0) {
      throw ConfigError("--flag " + flag +
                        ": not a cflrun switch that a run can take; use one of overwrite, quiet, "
                        "skip-complete (options with values go in --set)");
    }
  }
}

std::string line_of(const SweepSpec& spec, const GridPoint& point, const std::string& name) {
  std::string line = spec.config_file.empty() ? "" : "--config " + spec.config_file + " ";
  for (const auto& [option, value] : point) {
    line += "--" + option + " " + value + " ";
  }
  line += "--out " + (spec.results_dir / (name + kResultExtension)).string();
  for (const auto& flag : spec.flags) {
    line += " --" + flag;
  }
  return line;
}

}  // namespace

std::vector<std::string> manifest_lines(const SweepSpec& spec) {
  check_spec(spec);
  std::vector<std::string> lines;
  std::map<std::string, std::size_t> line_of_name;
  for (const auto& point : expand_grid(spec.axes)) {
    const auto name = run_name(point, spec.axes);
    const auto [it, is_new] = line_of_name.emplace(name, lines.size());
    if (!is_new) {
      throw ConfigError("manifest lines " + std::to_string(it->second) + " and " +
                        std::to_string(lines.size()) + " would both write " + name +
                        kResultExtension +
                        " (values that differ only in characters other than letters, digits and "
                        "._+-); use distinct values");
    }
    lines.push_back(line_of(spec, point, name));
  }
  return lines;
}

void write_manifest(const fs::path& path, const std::vector<std::string>& lines, bool force) {
  if (fs::exists(path) && !force) {
    throw ConfigError(
        "manifest " + path.string() +
        " exists; use --force to replace it (its runs' result files are not touched)");
  }
  std::error_code error;
  if (path.has_parent_path()) {
    fs::create_directories(path.parent_path(), error);
  }
  std::ofstream file(path, std::ios::trunc);
  for (const auto& line : lines) {
    file << line << '\n';
  }
  file.close();
  if (error || !file) {
    throw ConfigError("cannot write manifest " + path.string() +
                      (error ? " (" + error.message() + ")" : std::string()) +
                      "; check the directory and its permissions");
  }
}

std::string sbatch_command(const fs::path& manifest, std::size_t lines, int max_parallel) {
  std::string array = "0-" + std::to_string(lines == 0 ? 0 : lines - 1);
  if (max_parallel > 0) {
    array += '%';  // appended piecewise: GCC 12 warns falsely on "%" + std::string in C++20
    array += std::to_string(max_parallel);
  }
  return "sbatch --array=" + array + " " + kSweepScript + " " + manifest.string();
}

}  // namespace cflrun::sweep
