#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/core/error.hpp>

#include <algorithm>
#include <cmath>
#include <set>

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

TEST(ComputeSetup, CudaOnACpuOnlyBuildIsAClearError) {
  EXPECT_EQ(select_device("cpu", 0), torch::Device(torch::kCPU));
  if (!torch::cuda::is_available()) {
    EXPECT_EQ(select_device("auto", 0), torch::Device(torch::kCPU));
    EXPECT_THROW(select_device("cuda", 0), ConfigError);
  }
  EXPECT_EQ(threads_per_rank(3, 2), 3);
  EXPECT_GE(threads_per_rank(0, 64), 1);
}

TEST(Progress, PrintsRoundAriAccuracyAndEta) {
  EXPECT_EQ(progress_line(3, 10, 1.0, 0.97124, 0.08, 1.5, 2.0),
            "round    3/10  ARI 1.000  accuracy 0.9712  test loss 0.0800  1.50 s  ETA 0m14s");
  EXPECT_NE(progress_line(1, 2, std::nan(""), 0.5, 1.0, 1.0, 1.0).find("ARI     -"), std::string::npos);
}

}  // namespace
}  // namespace cflrun::run

#include <cflrun/run/participation.hpp>

namespace cflrun::run {
namespace {

TEST(Participation, FullParticipationTakesEveryClientWithoutDrawing) {
  const auto all = draw_participants(7, 1.0, 3, 5);
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Participation, DrawsASortedSeededSampleOfTheRightSizePerRound) {
  const auto a = draw_participants(25, 0.2, 1, 0);
  ASSERT_EQ(a.size(), 5U);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 5U);
  EXPECT_EQ(a, draw_participants(25, 0.2, 1, 0));
  EXPECT_NE(a, draw_participants(25, 0.2, 1, 1));  // a new sample every round
  EXPECT_EQ(participants_per_round(25, 0.01), 1);
  EXPECT_THROW(participants_per_round(25, 0.0), ConfigError);
  EXPECT_THROW(participants_per_round(25, 1.5), ConfigError);
}

TEST(Participation, EveryClientIsSampledAboutEquallyOften) {
  std::vector<int> count(10, 0);
  for (int round = 0; round < 2000; ++round) {
    for (int c : draw_participants(10, 0.3, 4, round)) {
      ++count[static_cast<std::size_t>(c)];
    }
  }
  for (int c : count) {  // expected 600 each; 5 sigma ~ 100
    EXPECT_NEAR(c, 600, 100);
  }
}

}  // namespace
}  // namespace cflrun::run

#include <cflrun/run/round_traffic.hpp>

namespace cflrun::run {
namespace {

TEST(RoundTraffic, CountsModelsLossVectorsAndUpdatesPerParticipant) {
  // CLoVE, 25 clients, K = 5 models of P = 5142 floats: each client gets 5 models and its
  // assignment, and returns 5 float losses, its model and its sample count.
  const auto clove = round_traffic(25, 5, 5142, 5);
  EXPECT_EQ(clove.sent, 25 * (5 * 5142 * 4 + 4));
  EXPECT_EQ(clove.received, 25 * (5 * 4 + 5142 * 4 + 8));
  // FedAvg: one model each way, no loss vectors.
  const auto fedavg = round_traffic(25, 1, 5142, 0);
  EXPECT_EQ(fedavg.sent, 25 * (5142 * 4 + 4));
  EXPECT_EQ(fedavg.received, 25 * (5142 * 4 + 8));
  EXPECT_EQ(round_traffic(0, 5, 5142, 5).sent, 0);
}

}  // namespace
}  // namespace cflrun::run
