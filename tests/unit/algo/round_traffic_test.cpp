#include <cflrun/algo/round_traffic.hpp>

#include <gtest/gtest.h>

namespace cflrun::algo {
namespace {

/// `clients` participants that each receive all K models (or just their own) and train.
RoundFacts hard_round(int clients, int models, std::int64_t state_size, bool loss_vectors,
                      std::int64_t shared_size = 0) {
  RoundFacts facts;
  facts.num_models = models;
  facts.state_size = state_size;
  facts.shared_size = shared_size;
  facts.received_all_models = loss_vectors ? clients : 0;
  facts.received_one_model = loss_vectors ? 0 : clients;
  facts.assignments = clients;
  facts.answer_floats = loss_vectors ? static_cast<std::int64_t>(clients) * models : 0;
  facts.states = clients;
  return facts;
}

TEST(RoundTraffic, CountsModelsLossVectorsAndUpdatesPerParticipant) {
  // CLoVE, 25 clients, K = 5 models of P = 5142 floats: each client gets 5 models and its
  // assignment, and returns 5 float losses, its model and its sample count.
  const auto clove = round_traffic(hard_round(25, 5, 5142, true));
  EXPECT_EQ(clove.sent, 25 * (5 * 5142 * 4 + 4));
  EXPECT_EQ(clove.received, 25 * (5 * 4 + 5142 * 4 + 8));
  // FedAvg: one model each way, no loss vectors.
  const auto fedavg = round_traffic(hard_round(25, 1, 5142, false));
  EXPECT_EQ(fedavg.sent, 25 * (5142 * 4 + 4));
  EXPECT_EQ(fedavg.received, 25 * (5142 * 4 + 8));
  EXPECT_EQ(round_traffic(hard_round(0, 5, 5142, true)).sent, 0);
}

TEST(RoundTraffic, WeightSharingSendsOneSharedCopyAndKHeads) {
  // IFCA Sec. 4.1 with the CNN: 2 572 shared floats, heads of 2 570; K = 5 heads + 1 shared copy.
  const auto shared = round_traffic(hard_round(10, 5, 5142, true, 2572));
  EXPECT_EQ(shared.sent, 10 * ((2572 + 5 * 2570) * 4 + 4));
  EXPECT_EQ(shared.received,
            round_traffic(hard_round(10, 5, 5142, true)).received);  // one model back each
}

TEST(RoundTraffic, WarmUpSendsTheInitialModelAndReturnsAnUpdate) {
  // FlexCFL's cold start: 4 clients get the initial model (P floats) and send a P-float update,
  // then train their group's model as usual.
  auto facts = hard_round(4, 3, 100, false);
  facts.received_initial_model = 4;
  facts.answer_floats = 4 * 100;
  const auto traffic = round_traffic(facts);
  EXPECT_EQ(traffic.sent, 4 * (100 * 4 + 4) + 4 * 100 * 4);
  EXPECT_EQ(traffic.received, 4 * (100 * 4 + 8) + 4 * 100 * 4);
}

TEST(RoundTraffic, FedSoftSendsAllCentersInImportanceRoundsOnly) {
  // 100 clients, K = 2 centers of P = 20 floats, 15 clients trained this round.
  const auto estimation = soft_round_traffic(100, 15, 2, 20);
  EXPECT_EQ(estimation.sent, 100 * 2 * 20 * 4);
  EXPECT_EQ(estimation.received, 15 * 20 * 4 + 100 * (2 * 4 + 8));
  const auto plain = soft_round_traffic(0, 15, 2, 20);
  EXPECT_EQ(plain.sent, 15 * 2 * 20 * 4);
  EXPECT_EQ(plain.received, 15 * 20 * 4);
}

}  // namespace
}  // namespace cflrun::algo
