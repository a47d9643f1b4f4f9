#include <cflrun/run/round_traffic.hpp>

#include <gtest/gtest.h>

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

TEST(RoundTraffic, WeightSharingSendsOneSharedCopyAndKHeads) {
  // IFCA Sec. 4.1 with the CNN: 2 572 shared floats, heads of 2 570; K = 5 heads + 1 shared copy.
  const auto shared = round_traffic(10, 5, 5142, 5, 2572);
  EXPECT_EQ(shared.sent, 10 * ((2572 + 5 * 2570) * 4 + 4));
  EXPECT_EQ(shared.received, round_traffic(10, 5, 5142, 5).received);  // each client returns one model
  EXPECT_EQ(round_traffic(10, 1, 5142, 0, 2572).sent, round_traffic(10, 1, 5142, 0).sent);
}

TEST(RoundTraffic, FedSoftSendsAllCentersInImportanceRoundsOnly) {
  // 100 clients, K = 2 centers of P = 20 floats, 15 clients trained this round.
  const auto estimation = soft_round_traffic(100, 15, 2, 20, true);
  EXPECT_EQ(estimation.sent, 100 * 2 * 20 * 4);
  EXPECT_EQ(estimation.received, 15 * 20 * 4 + 100 * (2 * 4 + 8));
  const auto plain = soft_round_traffic(100, 15, 2, 20, false);
  EXPECT_EQ(plain.sent, 15 * 2 * 20 * 4);
  EXPECT_EQ(plain.received, 15 * 20 * 4);
}

}  // namespace
}  // namespace cflrun::run
