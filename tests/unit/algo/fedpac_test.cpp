#include <cflrun/algo/fedpac.hpp>
#include <cflrun/algo/simplex_qp.hpp>

#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

TEST(SimplexQp, ReachesTheKnownOptimaOfSmallPrograms) {
  // Diagonal P: minimise sum_j l_j a_j^2 on the simplex -> a_j proportional to 1 / l_j.
  const auto diagonal = minimise_on_simplex(torch::diag(torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64)));
  EXPECT_NEAR(diagonal[0], 4.0 / 7.0, 1e-7);
  EXPECT_NEAR(diagonal[1], 2.0 / 7.0, 1e-7);
  EXPECT_NEAR(diagonal[2], 1.0 / 7.0, 1e-7);
  // P = [[1, 2], [2, 5]]: on a = (t, 1 - t) the objective is 2 t^2 - 6 t + 5, decreasing on [0, 1],
  // so the bound is active: a = (1, 0).
  const auto bound = minimise_on_simplex(torch::tensor({{1.0, 2.0}, {2.0, 5.0}}, torch::kFloat64));
  EXPECT_NEAR(bound[0], 1.0, 1e-7);
  EXPECT_NEAR(bound[1], 0.0, 1e-7);
  EXPECT_THROW(minimise_on_simplex(torch::zeros({2, 3}, torch::kFloat64)), ShapeError);
}

TEST(FedPac, CombinationWeightsFavourLowVarianceAndSimilarClients) {
  // Equal references (D = 0): the weights are 1 / V normalised.
  const auto same = torch::zeros({3, 2, 2}, torch::kFloat64);
  const auto equal = combination_weights(0, torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64), same);
  EXPECT_TRUE(torch::allclose(equal, torch::tensor({4.0 / 7, 2.0 / 7, 1.0 / 7}, torch::kFloat64), 0.0, 1e-7)) << equal;
  // Client 1's reference is at squared distance 3 from client 0's: P_0 = diag(V_0, V_1 + 3) =
  // diag(1, 4), so client 0's weights are (4/5, 1/5); client 1 sees the same distance the other way.
  auto references = torch::zeros({2, 2, 2}, torch::kFloat64);
  references[1][0][0] = 1.0;
  references[1][1][1] = std::sqrt(2.0);
  const auto v = torch::tensor({1.0, 1.0}, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(combination_weights(0, v, references), torch::tensor({0.8, 0.2}, torch::kFloat64), 0.0, 1e-7));
  EXPECT_TRUE(torch::allclose(combination_weights(1, v, references), torch::tensor({0.2, 0.8}, torch::kFloat64), 0.0, 1e-7));
  // A far-away client gets a weight below 1e-3, which is set to 0.
  references[1][0][0] = 100.0;
  EXPECT_EQ(combination_weights(0, v, references)[1].item<double>(), 0.0);
}

TEST(FedPac, FeatureStatisticsAsByHand) {
  // Features (1, 0), (3, 0) of class 0 and (0, 2) of class 1: p = (2/3, 1/3), mu_0 = (2, 0),
  // mu_1 = (0, 2); h = p_k mu_k; V = [2/3 (1 + 9)/2 - 4/9 4 + 1/3 4/1 - 1/9 4] / 3 = 22/27.
  const auto [v, h] = feature_statistics(torch::tensor({{1.0, 0.0}, {3.0, 0.0}, {0.0, 2.0}}, torch::kFloat64),
                                         torch::tensor({0, 0, 1}, torch::kInt64), 3);
  EXPECT_NEAR(v.item<double>(), 22.0 / 27.0, 1e-12);
  EXPECT_TRUE(torch::allclose(h, torch::tensor({{4.0 / 3, 0.0}, {0.0, 2.0 / 3}, {0.0, 0.0}}, torch::kFloat64)));
}

TEST(FedPac, PlanAveragesBodiesOverParticipantsAndCombinesTheirHeads) {
  auto context = testing::context_for(3, 1);
  context.num_classes = 2;
  context.feature_size = 2;
  context.classifier_with_head = true;
  FedPac fedpac(FedPacOptions{}, context);
  EXPECT_EQ(fedpac.num_models(), 3);
  ASSERT_EQ(fedpac.queries(0, {0, 2}).at(0).kind, QueryKind::kClientStatistics);
  // Statistics of participants 0 and 2: V then h [2, 2]; equal references, V = 1 and 3.
  const auto statistics = torch::tensor({{1.0, 0.0, 0.0, 0.0, 0.0}, {3.0, 0.0, 0.0, 0.0, 0.0}}, torch::kFloat64);
  const auto plan = fedpac.plan(testing::input_for(0, {0, 2}, QueryKind::kClientStatistics, statistics));
  EXPECT_EQ(plan.start, (std::vector<int>{0, kNoUpdate, 2}));  // each trains its own slot
  EXPECT_TRUE(torch::equal(plan.weights, torch::tensor({{100.0, 0.0, 100.0}, {100.0, 0.0, 100.0}, {100.0, 0.0, 100.0}},
                                                       torch::kFloat64)));
  EXPECT_TRUE(torch::allclose(plan.head_weights, torch::tensor({{0.75, 0.0, 0.25}, {0.0, 0.0, 0.0}, {0.75, 0.0, 0.25}},
                                                               torch::kFloat64), 0.0, 1e-7))
      << plan.head_weights;
  auto without_head = context;
  without_head.classifier_with_head = false;
  EXPECT_THROW(FedPac(FedPacOptions{}, without_head), ConfigError);
}

}  // namespace
}  // namespace cflrun::algo
