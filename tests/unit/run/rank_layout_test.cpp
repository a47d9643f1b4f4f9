#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <set>
#include <thread>

#include <sched.h>

#include <torch/cuda.h>

#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

TEST(RankLayout, OneRankHostsEveryClient) {
  const auto r = hosted_clients(0, 1, 25);
  EXPECT_EQ(r.first, 0);
  EXPECT_EQ(r.end, 25);
}

TEST(RankLayout, WorkersHostContiguousBalancedGroupsAndTheServerNone) {
  EXPECT_EQ(hosted_clients(0, 3, 25).size(), 0);
  const auto a = hosted_clients(1, 3, 25);
  const auto b = hosted_clients(2, 3, 25);
  EXPECT_EQ(a.first, 0);
  EXPECT_EQ(a.end, b.first);
  EXPECT_EQ(b.end, 25);
  EXPECT_LE(std::abs(a.size() - b.size()), 1);
  int covered = 0;
  for (int rank = 1; rank < 8; ++rank) {
    covered += hosted_clients(rank, 8, 5).size();
  }
  EXPECT_EQ(covered, 5);
}

TEST(RankLayout, WithServerHostsClientsEveryRankHostsABalancedGroupInOrder) {
  // 25 clients over 3 ranks: [0, 8), [8, 16), [16, 25); the server's group is the first.
  const std::vector<std::pair<int, int>> expected{{0, 8}, {8, 16}, {16, 25}};
  for (int rank = 0; rank < 3; ++rank) {
    const auto r = hosted_clients(rank, 3, 25, /*server_hosts_clients=*/true);
    EXPECT_EQ(std::make_pair(r.first, r.end), expected[static_cast<std::size_t>(rank)]);
  }
  EXPECT_EQ(hosted_clients(0, 1, 25, true).size(), 25);
  int covered = 0;
  for (int rank = 0; rank < 8; ++rank) {
    covered += hosted_clients(rank, 8, 5, true).size();
  }
  EXPECT_EQ(covered, 5);
}

TEST(ComputeSetup, CpuIsTheCpuAndGivenThreadsAreUsedAsIs) {
  EXPECT_EQ(select_device(cli::DeviceChoice::kCpu, 0), torch::Device(torch::kCPU));
  EXPECT_EQ(threads_per_rank(3, 2), 3);
}

// *OnThisMachine: checks that depend on what the machine has; each is its own CTest test
// (tests/CMakeLists.txt), reported as Skipped, with the reason, where the machine lacks it.

TEST(ComputeSetupOnThisMachine, CudaWithoutAGpuIsAClearError) {
  if (torch::cuda::is_available()) {
    GTEST_SKIP() << "LibTorch sees a GPU: --device cuda is no error here";
  }
  EXPECT_EQ(select_device(cli::DeviceChoice::kAuto, 0), torch::Device(torch::kCPU));
  EXPECT_THROW(select_device(cli::DeviceChoice::kCuda, 0), ConfigError);
}

// --threads auto: the cores this process may use, split among the node's ranks, at least one; a
// launcher that pinned the rank to fewer cores than the node has already gave it its share.
TEST(ComputeSetupOnThisMachine, ThreadsAutoSplitsTheNodesCores) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  const int node_cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  if (CPU_COUNT(&original) != node_cores) {
    GTEST_SKIP() << "this process may use " << CPU_COUNT(&original) << " of the node's "
                 << node_cores << " cores (a cpuset or binding)";
  }
  EXPECT_EQ(threads_per_rank(0, 1), node_cores);
  EXPECT_EQ(threads_per_rank(0, node_cores), 1);
  EXPECT_EQ(threads_per_rank(0, 64 * node_cores), 1);
}

TEST(ComputeSetupOnThisMachine, ThreadsAutoOfARankPinnedToOneCoreIsOne) {
  cpu_set_t original;
  ASSERT_EQ(sched_getaffinity(0, sizeof(original), &original), 0);
  if (CPU_COUNT(&original) < 2) {
    GTEST_SKIP() << "this process may use one core only: pinning changes nothing";
  }
  // pinned to one core, as mpirun --bind-to core does
  cpu_set_t one;
  CPU_ZERO(&one);
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &original)) {
      CPU_SET(cpu, &one);
      break;
    }
  }
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const int pinned = threads_per_rank(0, 1);
  ASSERT_EQ(sched_setaffinity(0, sizeof(original), &original), 0);
  EXPECT_EQ(pinned, 1);
}

TEST(Progress, PrintsRoundAriAccuracyAndEta) {
  EXPECT_EQ(progress_line(3, 10, 1.0, 0.97124, 0.08, 1.5, 2.0),
            "round    3/10  ARI 1.000  accuracy 0.9712  test loss 0.0800  1.50 s  ETA 0m14s");
  EXPECT_NE(progress_line(1, 2, std::nan(""), 0.5, 1.0, 1.0, 1.0).find("ARI     -"),
            std::string::npos);
  // Unsupervised and regression runs have no accuracy: the test loss is the headline.
  EXPECT_EQ(progress_line(2, 4, 1.0, std::nan(""), 0.05, 1.0, 1.0),
            "round    2/4  ARI 1.000  test loss 0.0500  1.00 s  ETA 0m02s");
}

}  // namespace
}  // namespace cflrun::run
