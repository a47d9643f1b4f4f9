#include <cflrun/sweep/manifest.hpp>
#include <cflrun/sweep/sweep_command.hpp>
#include <cflrun/sweep/sweep_grid.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <unistd.h>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::sweep {
namespace {

namespace fs = std::filesystem;

std::vector<GridAxis> axes(const std::vector<std::string>& sets) {
  std::vector<GridAxis> parsed;
  for (const auto& set : sets) {
    parsed.push_back(parse_grid_axis(set));
  }
  return parsed;
}

TEST(SweepGrid, ParsesOptionAndValues) {
  const auto axis = parse_grid_axis("data-seed=1,2,10");
  EXPECT_EQ(axis.option, "data-seed");
  EXPECT_EQ(axis.values, (std::vector<std::string>{"1", "2", "10"}));
  EXPECT_EQ(parse_grid_axis("data-dir=/scratch/x").values, std::vector<std::string>{"/scratch/x"});
}

TEST(SweepGrid, BadSetSyntaxIsAConfigError) {
  for (const char* bad :
       {"algorithm", "=clove", "Algorithm=clove", "--seed=1", "data_seed=1", "seed=", "seed=1,,2",
        "seed=1,", "data-dir=a b", "lr=0.1,0.1", "dataset=f'mnist", "dataset=$HOME"}) {
    EXPECT_THROW(parse_grid_axis(bad), ConfigError) << bad;
  }
}

TEST(SweepGrid, ProductFollowsSetOrderWithTheLastVaryingFastest) {
  const auto points = expand_grid(axes({"algorithm=clove,ifca", "seed=1,2,3"}));
  ASSERT_EQ(points.size(), 6u);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"clove", "1"}, {"clove", "2"}, {"clove", "3"}, {"ifca", "1"}, {"ifca", "2"}, {"ifca", "3"}};
  for (std::size_t i = 0; i < points.size(); ++i) {
    ASSERT_EQ(points[i].size(), 2u);
    EXPECT_EQ(points[i][0], std::make_pair(std::string("algorithm"), expected[i].first));
    EXPECT_EQ(points[i][1], std::make_pair(std::string("seed"), expected[i].second));
  }
  EXPECT_EQ(expand_grid(axes({"a=1,2", "b=1,2,3", "c=1,2,3,4,5"})).size(), 30u);
  EXPECT_THROW(expand_grid(axes({"seed=1", "seed=2"})), ConfigError);
}

TEST(SweepGrid, NamesAreMadeOfTheVaryingValues) {
  const auto grid = axes({"algorithm=clove,ifca", "partition=label_skew_1,concept_shift",
                          "dataset=fmnist", "lr=0.01,1e-3", "seed=1,2,3"});
  const auto points = expand_grid(grid);
  EXPECT_EQ(run_name(points.front(), grid), "clove_label_skew_1_lr0.01_seed1");
  EXPECT_EQ(run_name(points.back(), grid), "ifca_concept_shift_lr1e-3_seed3");
  const auto paths = axes({"data-dir=/a/b,/c", "seed=1"});
  EXPECT_EQ(run_name(expand_grid(paths).front(), paths), "-a-b");
  const auto single = axes({"seed=4"});
  EXPECT_EQ(run_name(expand_grid(single).front(), single), "run");
}

SweepSpec brief_example() {
  return {
      "jobs/fmnist_label_skew1.cfg",
      axes({"algorithm=clove,ifca,fedavg", "partition=label_skew_1,concept_shift", "seed=1,2,3"}),
      {},
      "results/sweep_name"};
}

TEST(Manifest, OneLinePerRunInProductOrder) {
  const auto lines = manifest_lines(brief_example());
  ASSERT_EQ(lines.size(), 18u);
  EXPECT_EQ(lines[0],
            "--config jobs/fmnist_label_skew1.cfg --algorithm clove --partition label_skew_1 "
            "--seed 1 --out results/sweep_name/clove_label_skew_1_seed1.h5");
  EXPECT_EQ(lines[1],
            "--config jobs/fmnist_label_skew1.cfg --algorithm clove --partition label_skew_1 "
            "--seed 2 --out results/sweep_name/clove_label_skew_1_seed2.h5");
  EXPECT_EQ(lines[3],
            "--config jobs/fmnist_label_skew1.cfg --algorithm clove --partition concept_shift "
            "--seed 1 --out results/sweep_name/clove_concept_shift_seed1.h5");
  EXPECT_EQ(lines[17],
            "--config jobs/fmnist_label_skew1.cfg --algorithm fedavg --partition concept_shift "
            "--seed 3 --out results/sweep_name/fedavg_concept_shift_seed3.h5");
}

TEST(Manifest, FlagsFollowAndConfigIsOptional) {
  SweepSpec spec{"", axes({"seed=7"}), {"quiet", "skip-complete"}, "out"};
  EXPECT_EQ(manifest_lines(spec),
            std::vector<std::string>{"--seed 7 --out out/run.h5 --quiet --skip-complete"});
  spec.flags = {"verbose"};
  EXPECT_THROW(manifest_lines(spec), ConfigError);
}

TEST(Manifest, RejectsGridsThatCannotGiveOneSeededFilePerRun) {
  auto spec = brief_example();
  spec.axes = axes({"algorithm=clove,ifca"});
  EXPECT_THROW(manifest_lines(spec), ConfigError);  // no seed
  for (const char* set : {"out=a.h5", "config=x.cfg", "quiet=true", "overwrite=1", "help=1"}) {
    spec.axes = axes({"seed=1", set});
    EXPECT_THROW(manifest_lines(spec), ConfigError) << set;
  }
  spec.axes = axes({"seed=1", "data-dir=a/b,a:b"});  // both named a-b
  EXPECT_THROW(manifest_lines(spec), ConfigError);
  spec = brief_example();
  spec.results_dir = "my results";
  EXPECT_THROW(manifest_lines(spec), ConfigError);
}

TEST(Manifest, SbatchCommandCoversEveryLine) {
  EXPECT_EQ(sbatch_command("m.txt", 18, 4), "sbatch --array=0-17%4 jobs/slurm/sweep.sbatch m.txt");
  EXPECT_EQ(sbatch_command("m.txt", 1, 0), "sbatch --array=0-0 jobs/slurm/sweep.sbatch m.txt");
}

class SweepCommand : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("cflrun_sweep_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  int sweep(std::vector<std::string> args) {
    args.insert(args.begin(), "sweep");
    std::vector<const char*> argv;
    for (const auto& arg : args) {
      argv.push_back(arg.c_str());
    }
    std::ostringstream out;
    std::ostringstream err;
    const int code = run_sweep_command(static_cast<int>(argv.size()), argv.data(), out, err);
    out_ = out.str();
    err_ = err.str();
    return code;
  }

  std::vector<std::string> manifest() const {
    std::ifstream file(dir_ / "manifest.txt");
    std::vector<std::string> lines;
    for (std::string line; std::getline(file, line);) {
      lines.push_back(line);
    }
    return lines;
  }

  fs::path dir_;
  std::string out_;
  std::string err_;
};

TEST_F(SweepCommand, WritesTheManifestAndSuggestsTheArrayJob) {
  const auto path = (dir_ / "manifest.txt").string();
  ASSERT_EQ(sweep({"--set", "algorithm=clove,ifca", "--set", "seed=1,2,3", "--out", path}), 0)
      << err_;
  const auto lines = manifest();
  ASSERT_EQ(lines.size(), 6u);
  EXPECT_EQ(lines[0], "--algorithm clove --seed 1 --out " + (dir_ / "clove_seed1.h5").string());
  EXPECT_EQ(lines[5], "--algorithm ifca --seed 3 --out " + (dir_ / "ifca_seed3.h5").string());
  EXPECT_EQ(out_, "wrote 6 runs to " + path +
                      " (line i, 0-based, is SLURM array task i)\n"
                      "submit with: sbatch --array=0-5 jobs/slurm/sweep.sbatch " +
                      path + "\n");
}

TEST_F(SweepCommand, RefusesToReplaceAManifestWithoutForce) {
  const auto path = (dir_ / "manifest.txt").string();
  ASSERT_EQ(sweep({"--set", "seed=1,2", "--out", path, "--results-dir", "r"}), 0) << err_;
  EXPECT_EQ(sweep({"--set", "seed=5", "--out", path, "--results-dir", "r"}), 2);
  EXPECT_NE(err_.find("use --force"), std::string::npos) << err_;
  EXPECT_EQ(manifest().size(), 2u);
  ASSERT_EQ(sweep({"--set", "seed=5", "--out", path, "--results-dir", "r", "--force",
                   "--max-parallel", "3"}),
            0)
      << err_;
  EXPECT_EQ(manifest(), std::vector<std::string>{"--seed 5 --out r/run.h5"});
  EXPECT_NE(out_.find("--array=0-0%3 "), std::string::npos) << out_;
}

TEST_F(SweepCommand, ArgumentErrorsReturnTwo) {
  const auto path = (dir_ / "manifest.txt").string();
  EXPECT_EQ(sweep({"--set", "seed=1"}), 2);                 // no --out
  EXPECT_EQ(sweep({"--set", "seed 1", "--out", path}), 2);  // no '='
  EXPECT_EQ(sweep({"--set", "seed=1", "--out", path, "--config", "nope.cfg"}), 2);
  EXPECT_EQ(sweep({"--set", "seed=1", "--out", path, "--max-parallel", "-1"}), 2);
  EXPECT_EQ(sweep({"--set", "seed=1", "--out", path, "extra"}), 2);
  EXPECT_FALSE(fs::exists(path));
  EXPECT_EQ(sweep({"--help"}), 0);
  EXPECT_NE(out_.find("0-based"), std::string::npos);
}

}  // namespace
}  // namespace cflrun::sweep
