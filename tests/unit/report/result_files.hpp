#pragma once
// Writes small but real result files (cflrun::io::ResultWriter) for the report tests.

#include <filesystem>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include <cflrun/io/result_schema.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/report/report_command.hpp>

namespace cflrun::report::testing {

namespace fs = std::filesystem;

/// What a fake run records: its config and per-round series (one value per round).
struct FakeRun {
  std::map<std::string, std::string> config;
  std::vector<double> ari;
  std::vector<double> accuracy;
  std::vector<double> test_loss;  ///< empty: 1 - accuracy.
  enum class Status { kComplete, kRunning, kFailed } status = Status::kComplete;
  /// Set: a changing population (issue 45) whose population changes at these 1-based rounds
  /// (/population/change_rounds): client 1 moves from cluster 1 to cluster 0 at the first change
  /// and client 0 drops out from the second on (/clients/true_cluster, /clients/available).
  std::optional<std::vector<int>> change_rounds = std::nullopt;
};

/// Round `round`'s (1-based) /clients/true_cluster and /clients/available rows of `run`.
inline std::pair<std::vector<int>, std::vector<int>> population_rows(const FakeRun& run,
                                                                     int round) {
  const auto& changes = *run.change_rounds;
  const bool moved = !changes.empty() && round >= changes[0];
  const bool dropped = changes.size() > 1 && round >= changes[1];
  return {{0, moved ? 0 : 1}, {dropped ? 0 : 1, 1}};
}

/// The config cflrun writes, with the bookkeeping keys that must not split groups.
inline std::map<std::string, std::string> base_config(const std::string& algorithm, int seed) {
  const auto s = std::to_string(seed);
  return {{"algorithm", algorithm},
          {"dataset", "fmnist"},
          {"partition", "label_skew_1"},
          {"rounds", "12"},
          {"lr", "0.01"},
          {"seed", s},
          {"data-seed", s},
          {"out", "r" + s + ".h5"},
          {"threads", s},
          {"ranks", s},
          {"git_commit", "abc" + s},
          {"version", "0.1.0"},
          {"overwrite", "false"},
          {"clients", "2"},
          {"models", algorithm == "fedavg" ? "1" : "2"}};
}

/// Writes `run` to `path` as cflrun would: 2 clients, 2 models, one row per round.
inline void write_run(const fs::path& path, const FakeRun& run) {
  constexpr int kClients = 2;
  io::ResultLayout layout;
  layout.num_clients = kClients;
  layout.num_models = 2;
  layout.phase_names = {"round"};
  layout.planned_rounds = static_cast<std::int64_t>(run.ari.size());
  layout.changing_population = run.change_rounds.has_value();
  io::ResultWriter writer(path, layout, /*overwrite=*/true);
  writer.write_config({run.config.begin(), run.config.end()});
  if (run.change_rounds) {
    writer.write_change_rounds(*run.change_rounds);
  } else {
    writer.write_true_clusters({0, 1});
  }
  for (std::size_t t = 0; t < run.ari.size(); ++t) {
    const double test_loss = run.test_loss.empty() ? 1.0 - run.accuracy[t] : run.test_loss[t];
    io::RoundRecord record;
    record.set(io::schema::kAri, run.ari[t]);
    record.set(io::schema::kAccuracy, run.accuracy[t]);
    record.set(io::schema::kAccuracyWeighted, run.accuracy[t]);
    record.set(io::schema::kTestLoss, test_loss);
    record.set(io::schema::kTrainLoss, 0.0);
    record.set(io::schema::kWorkerComputeSeconds, 0.0);
    record.set(io::schema::kBytesSent, std::int64_t{0});
    record.set(io::schema::kBytesReceived, std::int64_t{0});
    record.set(io::schema::kSeconds, std::vector<double>{0.1});
    record.set(io::schema::kAssignment, std::vector<int>{0, 1});
    record.set(io::schema::kLiveModels,
               run.config.count("models") != 0 ? std::stoi(run.config.at("models")) : 2);
    record.set(io::schema::kClientAccuracy,
               std::vector<float>(kClients, static_cast<float>(run.accuracy[t])));
    record.set(io::schema::kClientTestLoss,
               std::vector<float>(kClients, static_cast<float>(test_loss)));
    if (run.change_rounds) {
      const auto [true_cluster, available] = population_rows(run, static_cast<int>(t) + 1);
      record.set(io::schema::kTrueCluster, true_cluster);
      record.set(io::schema::kAvailable, available);
    }
    writer.append_round(record);
  }
  if (run.status == FakeRun::Status::kComplete) {
    writer.complete_into(path);
  } else if (run.status == FakeRun::Status::kFailed) {
    writer.mark_failed("out of memory");
  }
}

/// `rounds` values: `before` up to (1-based) round `change - 1`, then `after`.
inline std::vector<double> step(int rounds, double before, int change, double after) {
  std::vector<double> values(rounds, before);
  for (int t = change - 1; t < rounds; ++t) {
    values[t] = after;
  }
  return values;
}

/// What one `cflrun report ...` call printed and returned.
struct ReportOutcome {
  int code = 0;
  std::string out;
  std::string err;
};

/// Runs `cflrun report ARGS...` in this process (run_report_command), capturing its output.
inline ReportOutcome run_report(std::vector<std::string> args) {
  args.insert(args.begin(), "report");
  std::vector<const char*> argv;
  for (const auto& arg : args) {
    argv.push_back(arg.c_str());
  }
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_report_command(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

/// A fresh directory per test, removed afterwards.
class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("cflrun_report_" + std::to_string(getpid()) + "_" +
                                        info->test_suite_name() + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  fs::path dir_;
};

}  // namespace cflrun::report::testing
