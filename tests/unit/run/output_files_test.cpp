#include <cflrun/cli/run_options.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/run/output_files.hpp>

#include <fstream>
#include <sstream>
#include <unistd.h>

#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

std::filesystem::path scratch(const std::string& name) {
  const auto dir = std::filesystem::temp_directory_path() /
                   ("cflrun_output_files_" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  return dir / name;
}

TEST(OutputFiles, PathsLieBesideOut) {
  const auto paths = output_paths("results/a/run.h5");
  EXPECT_EQ(paths.partial, "results/a/run.h5.partial");
  EXPECT_EQ(paths.checkpoint, "results/a/run.h5.checkpoint");
  EXPECT_EQ(paths.lock, "results/a/run.h5.lock");
}

TEST(OutputFiles, SecondLockIsRefusedNamingTheHolderAndTheFileGoesWithTheLock) {
  const auto path = scratch("run.h5.lock");
  {
    const RunLock first(path);
    try {
      const RunLock second(path);
      FAIL() << "a second lock on the same file was granted";
    } catch (const ConfigError& e) {
      EXPECT_NE(std::string(e.what()).find("pid " + std::to_string(::getpid())), std::string::npos)
          << e.what();
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path));
  const RunLock again(path);  // free once the first is gone
}

TEST(OutputFiles, ConfigDifferencesIgnoreBookkeepingAndNameEachDifference) {
  const std::vector<std::pair<std::string, std::string>> recorded{
      {"seed", "1"}, {"rounds", "100"}, {"out", "a.h5"}, {"threads", "2"}, {"quiet", "true"}};
  const std::vector<std::pair<std::string, std::string>> same{
      {"seed", "1"}, {"rounds", "100"}, {"out", "b.h5"}, {"threads", "8"}, {"quiet", "false"}};
  EXPECT_TRUE(config_differences(same, recorded).empty());
  const std::vector<std::pair<std::string, std::string>> other{
      {"seed", "2"}, {"rounds", "100"}, {"lr", "0.1"}};
  const auto differences = config_differences(other, recorded);
  ASSERT_EQ(differences.size(), 2U);
  EXPECT_EQ(differences[0], "--seed: 2 (recorded 1)");
  EXPECT_NE(differences[1].find("--lr: 0.1"), std::string::npos);
}

TEST(OutputFiles, AnOptionAnOlderBuildDidNotRecordDiffersOnlyFromItsDefault) {
  const std::vector<std::pair<std::string, std::string>> recorded{
      {"seed", "1"}};  // no --fedpac-lambda
  EXPECT_TRUE(config_differences({{"seed", "1"}, {"fedpac-lambda", "1"}}, recorded)
                  .empty());  // the default
  const auto differences = config_differences({{"seed", "1"}, {"fedpac-lambda", "0.5"}}, recorded);
  ASSERT_EQ(differences.size(), 1U);
  EXPECT_EQ(differences[0], "--fedpac-lambda: 0.5 (not recorded)");
}

TEST(OutputFiles, AFileOfAnOlderBuildWithEveryAlgorithmsOptionsMatchesTheOwnOptionsOnly) {
  // Builds before 2026-11-28 recorded every algorithm's options; a run now records its own.
  cli::RunOptions clove;
  const auto requested = clove.to_attributes();
  auto recorded = requested;
  recorded.emplace_back("pacfl-beta", "7");  // another algorithm's, away from its default
  recorded.emplace_back("cfl-eps1", "0.5");
  EXPECT_TRUE(config_differences(requested, recorded).empty());
}

TEST(OutputFiles, ConfigDifferencesIgnoreExactlyThePlacementAndBookkeepingOptions) {
  // The options ignored before they were derived from the option kinds (cli::option_names).
  for (const char* name : {"out", "threads", "quiet", "overwrite", "skip-complete", "resume",
                           "config", "device", "checkpoint-every", "checkpoint-seconds",
                           "round-timeout", "parallel-clients", "client-batch", "fused-kernels"}) {
    EXPECT_TRUE(config_differences({{name, "1"}}, {{name, "2"}}).empty()) << name;
  }
  // Seeds and the options that move low bits do change results.
  for (const char* name :
       {"seed", "data-seed", "pool-seed", "server-hosts-clients", "flush-denormal", "precision",
        "data-dir", "models", "lr", "kmeans-restarts"}) {
    EXPECT_EQ(config_differences({{name, "1"}}, {{name, "2"}}).size(), 1U) << name;
  }
}

}  // namespace
}  // namespace cflrun::run
