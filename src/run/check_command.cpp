#include <cflrun/run/check_command.hpp>

#include <algorithm>
#include <array>
#include <iostream>
#include <string>
#include <string_view>
#include <vector>

#include <cflrun/cli/run_options.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/experiment.hpp>

namespace cflrun::run {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitUsage = 2;

const char* const kUsage =
    "Usage: cflrun check CONFIG... [-- OPTION...]\n\n"
    "Dry-runs every CONFIG as `cflrun --config CONFIG --dry-run OPTION...` would: options checked, "
    "data\n"
    "loaded, partition, algorithm and models built, nothing trained or written. The OPTIONs after "
    "--\n"
    "apply to every config and win over it (e.g. -- --data-dir DIR). Prints ok or FAIL per "
    "config;\n"
    "exits 1 if any failed. Example: cflrun check jobs/paper/fmnist_*.cfg\n";

/// Dry-runs one config; returns "" or the error message (already printed).
std::string dry_run(const std::string& config, const std::vector<std::string>& extra,
                    const comm::Communicator& comm) {
  std::vector<std::string> words{"cflrun", "--config", config, "--dry-run"};
  words.insert(words.end(), extra.begin(), extra.end());
  std::vector<const char*> argv;
  for (const auto& word : words) {
    argv.push_back(word.c_str());
  }
  try {
    const auto parsed = collective_step(
        comm, [&] { return cli::parse_command_line(static_cast<int>(argv.size()), argv.data()); });
    run_experiment(parsed.options, comm);
    return {};
  } catch (const ReportedError& e) {
    return e.what();
  } catch (
      const std::exception& e) {  // not a cflrun::Error (e.g. LibTorch's): this rank's own failure
    print_error(comm, e.what());
    return e.what();
  }
}

/// The words that ask for the usage text, and the one that ends cflrun check's own words.
constexpr std::array<std::string_view, 2> kHelpWords{"--help", "-h"};
constexpr std::string_view kSeparator = "--";

}  // namespace

int run_check_command(int argc, const char* const argv[], const comm::Communicator& comm,
                      std::ostream& out, std::ostream& err) {
  std::vector<std::string> configs;
  std::vector<std::string> extra;
  bool after_separator = false;
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (!after_separator &&
        std::find(kHelpWords.begin(), kHelpWords.end(), word) != kHelpWords.end()) {
      out << kUsage;
      return 0;
    }
    if (!after_separator && word == kSeparator) {
      after_separator = true;
    } else {
      (after_separator ? extra : configs).push_back(word);
    }
  }
  if (configs.empty()) {
    err << "cflrun check: error: no config file given\n" << kUsage;
    return kExitUsage;
  }
  int failed = 0;
  for (const auto& config : configs) {
    const std::string failure = dry_run(config, extra, comm);
    failed += failure.empty() ? 0 : 1;
    if (comm.is_root()) {
      (failure.empty() ? out << "ok: " << config : out << "FAIL: " << config << ": " << failure)
          << std::endl;
    }
  }
  if (comm.is_root()) {
    out << configs.size() - failed << " of " << configs.size() << " configs passed --dry-run"
        << std::endl;
  }
  return failed == 0 ? 0 : kExitFailed;
}

}  // namespace cflrun::run
