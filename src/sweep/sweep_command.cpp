#include <cflrun/sweep/sweep_command.hpp>

#include <filesystem>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/core/subcommand.hpp>
#include <cflrun/sweep/manifest.hpp>
#include <cflrun/sweep/sweep_grid.hpp>

namespace po = boost::program_options;

namespace cflrun::sweep {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "Usage: cflrun sweep --set NAME=V1,V2,... [--set ...] --out MANIFEST [--config FILE]\n"
    "                    [--results-dir DIR] [--flag SWITCH]... [--max-parallel P] [--force]\n"
    "\n"
    "Writes a manifest for a SLURM job array: one line per run, the cflrun arguments of that run,\n"
    "for every combination of the --set values (cartesian product in --set order, the last --set\n"
    "varying fastest). Line i (0-based: the first line is index 0) is array task i, i.e.\n"
    "$SLURM_ARRAY_TASK_ID; jobs/slurm/sweep.sbatch runs it. Every line names its seed, so\n"
    "--set seed=... is required. Each run writes RESULTS_DIR/<name>.h5, <name> made of the values\n"
    "that vary (numbers prefixed by their option), e.g. clove_label_skew_1_seed1.h5.\n"
    "Option names are only checked to look like cflrun options ([a-z0-9-]+); cflrun validates\n"
    "them and their values when each run starts, before writing anything. Values may hold\n"
    "letters, digits and ._+-/:@%= only (no spaces). Paths are written as given (relative to the\n"
    "directory the array job runs in).\n"
    "\n"
    "Example: cflrun sweep --config jobs/fmnist_label_skew1.cfg \\\n"
    "           --set algorithm=clove,ifca,fedavg --set partition=label_skew_1,concept_shift \\\n"
    "           --set seed=1,2,3 \\\n"
    "           --results-dir results/ls1 --out results/ls1/manifest.txt\n";

struct SweepOptions {
  SweepSpec spec;
  std::vector<std::string> sets;
  std::string results_dir;
  std::string out;
  int max_parallel = 0;
  bool force = false;
  bool help = false;
};

po::options_description describe(SweepOptions& o) {
  po::options_description options("Options");
  options.add_options()("set", po::value(&o.sets)->composing(),
                        "NAME=V1,V2,...: a cflrun option (without --) and its values; repeatable")(
      "out", po::value(&o.out), "manifest file to write (path; required)")(
      "config", po::value(&o.spec.config_file), "config file given to every run (path)")(
      "results-dir", po::value(&o.results_dir),
      "directory of the runs' result files (path; default: the manifest's directory)")(
      "flag", po::value(&o.spec.flags)->composing(),
      "cflrun switch added to every run, without -- (quiet | skip-complete | overwrite); "
      "repeatable")(
      "max-parallel", po::value(&o.max_parallel)->default_value(0),
      "array tasks running at once in the suggested sbatch command (count; 0 = no limit)")(
      "force", po::bool_switch(&o.force), "replace an existing manifest")(
      "help,h", "print this help and exit");
  return options;
}

/// @throws ConfigError for an unknown option or a missing or bad value.
SweepOptions parse_options(int argc, const char* const argv[], std::string& help) {
  SweepOptions o;
  const auto options = describe(o);
  const po::positional_options_description none;  // stray words are errors, not ignored
  po::variables_map vm;
  try {
    po::store(po::command_line_parser(argc, argv).options(options).positional(none).run(), vm);
    po::notify(vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see cflrun sweep --help)");
  }
  std::ostringstream text;
  text << kUsage << "\n" << options;
  help = text.str();
  o.help = vm.count("help") != 0;
  if (o.help) {
    return o;
  }
  if (o.out.empty()) {
    throw ConfigError("--out MANIFEST is required (e.g. --out results/sweep/manifest.txt)");
  }
  if (o.max_parallel < 0) {
    throw ConfigError("--max-parallel must be >= 0 (0 = no limit), but got " +
                      std::to_string(o.max_parallel));
  }
  if (!o.spec.config_file.empty() && !fs::is_regular_file(o.spec.config_file)) {
    throw ConfigError(
        "--config " + o.spec.config_file +
        ": no such file; check the path (relative to the directory the array will run in)");
  }
  for (const auto& set : o.sets) {
    o.spec.axes.push_back(parse_grid_axis(set));
  }
  const fs::path manifest(o.out);
  o.spec.results_dir = !o.results_dir.empty()       ? fs::path(o.results_dir)
                       : manifest.has_parent_path() ? manifest.parent_path()
                                                    : fs::path(".");
  return o;
}

int sweep(const SweepOptions& o, std::ostream& out, std::ostream& err) {
  const auto lines = manifest_lines(o.spec);
  write_manifest(o.out, lines, o.force);
  out << "wrote " << lines.size() << " runs to " << o.out
      << " (line i, 0-based, is SLURM array task i)\n"
      << "submit with: " << sbatch_command(o.out, lines.size(), o.max_parallel) << "\n";
  if (lines.size() > kSlurmDefaultMaxArraySize) {
    err << "cflrun sweep: note: " << lines.size() << " tasks exceed SLURM's default MaxArraySize ("
        << kSlurmDefaultMaxArraySize << "); check `scontrol show config | grep MaxArraySize` or "
        << "split the grid\n";
  }
  return 0;
}

}  // namespace

int run_sweep_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err) {
  return core::run_subcommand("sweep", err, [&] {
    std::string help;
    const auto options = parse_options(argc, argv, help);
    if (options.help) {
      out << help;
      return 0;
    }
    return sweep(options, out, err);
  });
}

int run_sweep_command(int argc, const char* const argv[]) {
  return run_sweep_command(argc, argv, std::cout, std::cerr);
}

}  // namespace cflrun::sweep
