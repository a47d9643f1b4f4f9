#include <cflrun/report/group_statistics.hpp>

#include <algorithm>
#include <cmath>
#include <set>

#include <gtest/gtest.h>

#include <cflrun/cli/option_kinds.hpp>
#include <cflrun/core/error.hpp>

#include "result_files.hpp"

namespace cflrun::report {
namespace {

using testing::base_config;

RunSummary summary(const std::map<std::string, std::string>& config, double accuracy,
                   const std::string& path = "x.h5") {
  RunSummary run;
  run.path = path;
  run.status = "complete";
  run.config = config;
  run.metrics.accuracy_percent = accuracy;
  return run;
}

TEST(Summarize, MeanAndPopulationStdLikeNumpy) {
  // np.mean([1, 2, 3, 4]) = 2.5, np.std([1, 2, 3, 4]) = sqrt(1.25) (ddof 0; ddof 1 would be 1.29).
  const auto s = summarize({1.0, 2.0, 3.0, 4.0});
  EXPECT_DOUBLE_EQ(s.mean, 2.5);
  EXPECT_DOUBLE_EQ(s.std, std::sqrt(1.25));
  EXPECT_EQ(s.defined, 4);
  EXPECT_EQ(s.total, 4);
}

TEST(Summarize, UndefinedValuesOnlyCountInTheTotal) {
  const auto s = summarize({2.0, std::nullopt, 4.0});
  EXPECT_DOUBLE_EQ(s.mean, 3.0);
  EXPECT_DOUBLE_EQ(s.std, 1.0);
  EXPECT_EQ(s.defined, 2);
  EXPECT_EQ(s.total, 3);
  const auto none = summarize({std::nullopt, std::nullopt});
  EXPECT_TRUE(std::isnan(none.mean));
  EXPECT_EQ(none.defined, 0);
  EXPECT_EQ(none.total, 2);
}

TEST(GroupRuns, RunsDifferingOnlyBySeedAndBookkeepingShareAGroup) {
  std::vector<RunSummary> runs;
  for (int seed = 1; seed <= 3; ++seed) {
    runs.push_back(summary(base_config("ifca", seed), 80.0 + seed));
    runs.push_back(summary(base_config("clove", seed), 90.0 + seed));
  }
  const auto groups = group_runs(runs);
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].value("algorithm"), "clove");
  EXPECT_EQ(groups[1].value("algorithm"), "ifca");
  EXPECT_EQ(groups[0].runs.size(), 3u);
  EXPECT_EQ(groups[0].key.count("seed"), 0u);
  EXPECT_DOUBLE_EQ(groups[0].statistic(Metric::kAccuracy).mean, 92.0);
  EXPECT_DOUBLE_EQ(groups[1].statistic(Metric::kAccuracy).std, std::sqrt(2.0 / 3.0));
  EXPECT_EQ(varying_keys(groups), std::vector<std::string>{"algorithm"});
  const auto common = common_keys(groups);
  EXPECT_NE(std::find(common.begin(), common.end(),
                      std::make_pair(std::string("lr"), std::string("0.01"))),
            common.end());
}

TEST(GroupRuns, ExperimentKeysSplitGroups) {
  auto other = base_config("clove", 1);
  other["lr"] = "0.001";
  const auto groups = group_runs({summary(base_config("clove", 1), 90.0), summary(other, 80.0)});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].value("lr"), "0.001");
  EXPECT_EQ(varying_keys(groups), std::vector<std::string>{"lr"});
}

TEST(GroupRuns, OtherAlgorithmsOptionsOfOlderFilesSplitNoGroup) {
  // Files of builds before 2026-11-28 recorded every algorithm's options (here CLoVE's k-means
  // under the official preset); later ones only the run's own algorithm's.
  auto older = base_config("ifca", 1);
  older["kmeans-init"] = "greedy";
  older["pacfl-beta"] = "4.9000000000000004";
  const auto ifca = group_runs({summary(older, 80.0), summary(base_config("ifca", 2), 90.0)});
  ASSERT_EQ(ifca.size(), 1u);
  EXPECT_EQ(ifca[0].runs.size(), 2u);
  // An algorithm's own option still splits its groups.
  auto greedy = base_config("clove", 1);
  greedy["kmeans-init"] = "greedy";
  EXPECT_EQ(group_runs({summary(greedy, 80.0), summary(base_config("clove", 2), 90.0)}).size(), 2u);
}

TEST(GroupRuns, BookkeepingKeysAreTheSeedsPathsAndProvenance) {
  for (const char* key : {"seed", "data-seed", "out", "threads", "ranks", "git_commit", "device",
                          "skip-complete", "models"}) {
    EXPECT_TRUE(is_bookkeeping_key(key)) << key;
  }
  for (const char* key : {"algorithm", "lr", "partition", "rounds", "kmeans-restarts"}) {
    EXPECT_FALSE(is_bookkeeping_key(key)) << key;
  }
}

/// The keys report grouped over before they were derived from the option kinds.
const std::set<std::string> kBookkeepingBefore{"seed",
                                               "data-seed",
                                               "pool-seed",
                                               "out",
                                               "overwrite",
                                               "quiet",
                                               "config",
                                               "threads",
                                               "device",
                                               "ranks",
                                               "threads_per_rank",
                                               "blas",
                                               "cpu_kernels",
                                               "cuda",
                                               "git_commit",
                                               "version",
                                               "torch_version",
                                               "skip-complete",
                                               "data-dir",
                                               "clients",
                                               "models",
                                               "resume",
                                               "checkpoint-every",
                                               "checkpoint-seconds",
                                               "round-timeout",
                                               "server-hosts-clients",
                                               "parallel-clients",
                                               "client-batch",
                                               "fused-kernels",
                                               "build_history"};

TEST(GroupRuns, BookkeepingKeysAreTheSetTheyReplaced) {
  using core::OptionKind;
  auto keys = cli::option_names({OptionKind::kExperiment, OptionKind::kSeed, OptionKind::kPlacement,
                                 OptionKind::kBookkeeping});
  keys.insert(kBookkeepingBefore.begin(), kBookkeepingBefore.end());
  for (const auto& key : keys) {
    // dry-run: never in /config (a dry run writes no file).
    EXPECT_EQ(is_bookkeeping_key(key), kBookkeepingBefore.count(key) != 0 || key == "dry-run")
        << key;
  }
}

TEST(GroupRuns, PlacementOptionsJoinGroupsExperimentOptionsSplitThem) {
  auto serial = base_config("clove", 1);
  serial["parallel-clients"] = "false";
  serial["precision"] = "fp32";
  auto parallel = serial;
  parallel["parallel-clients"] = "true";
  EXPECT_EQ(group_runs({summary(serial, 90.0), summary(parallel, 80.0)}).size(), 1U);
  auto bf16 = serial;
  bf16["precision"] = "bf16";
  EXPECT_EQ(group_runs({summary(serial, 90.0), summary(bf16, 80.0)}).size(), 2U);
}

TEST(GroupRuns, AnOptionAnOlderBuildDidNotRecordJoinsTheGroupOfItsDefault) {
  auto older = base_config("fedpac", 1);  // written before --fedpac-lambda existed
  older.erase("fedpac-lambda");
  auto newer = base_config("fedpac", 2);
  newer["fedpac-lambda"] = "1";  // the default
  EXPECT_EQ(group_runs({summary(older, 90.0), summary(newer, 80.0)}).size(), 1U);
  newer["fedpac-lambda"] = "0.5";
  EXPECT_EQ(group_runs({summary(older, 90.0), summary(newer, 80.0)}).size(), 2U);
}

TEST(ValueLess, NumbersNumericallyTextAlphabetically) {
  EXPECT_TRUE(value_less("5", "10"));
  EXPECT_TRUE(value_less("0.001", "0.01"));
  EXPECT_TRUE(value_less("clove", "fedavg"));
  EXPECT_FALSE(value_less("10", "5"));
}

TEST(FilterRuns, ValuesOfOneKeyAreAlternativesKeysCombine) {
  std::vector<RunSummary> runs;
  for (const char* algorithm : {"clove", "ifca", "fedavg"}) {
    for (int seed = 1; seed <= 2; ++seed) {
      runs.push_back(summary(base_config(algorithm, seed), 0.0));
    }
  }
  const auto kept =
      filter_runs(runs, parse_filters({"algorithm=clove", "algorithm=ifca", "seed=2"}));
  ASSERT_EQ(kept.size(), 2u);
  EXPECT_EQ(kept[0].config.at("algorithm"), "clove");
  EXPECT_EQ(kept[1].config.at("algorithm"), "ifca");
  EXPECT_EQ(kept[1].config.at("seed"), "2");
  EXPECT_THROW(filter_runs(runs, parse_filters({"algoritm=clove"})), ConfigError);
  EXPECT_THROW(parse_filters({"clove"}), ConfigError);
}

TEST(DuplicateSeeds, RunsWithTheSameSeedInAGroupAreNoted) {
  const auto groups = group_runs({summary(base_config("clove", 1), 90.0, "a.h5"),
                                  summary(base_config("clove", 1), 90.0, "b.h5"),
                                  summary(base_config("clove", 2), 90.0, "c.h5")});
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_EQ(duplicate_seed_notes(groups),
            std::vector<std::string>{"seed 1 (data seed 1) appears in a.h5 b.h5"});
}

}  // namespace
}  // namespace cflrun::report
