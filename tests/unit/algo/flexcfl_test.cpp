#include <cflrun/algo/flexcfl.hpp>

#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

using testing::assigned;
using testing::context_for;
using testing::everyone;

/// Pre-training updates of 4 clients in 3-D: clients 0, 1 along e1, clients 2, 3 along e2.
torch::Tensor two_directions() {
  return torch::tensor({{2.0, 0.0, 0.1}, {3.0, 0.1, 0.0}, {0.0, 1.0, 0.1}, {0.1, 2.0, 0.0}},
                       torch::kFloat64);
}

RoundInput warm_up_input(int round, const std::vector<int>& participants, const ClientQuery& query,
                         const torch::Tensor& updates) {
  RoundInput input;
  input.round = round;
  input.participants = participants;
  input.answers.push_back({query, updates});
  input.client_initial_model = torch::zeros({3});
  return input;
}

TEST(FlexCfl, DecomposedCosineSimilarityPointsAlongTheUpdateDirections) {
  // Updates along e1 (norms 2, 3) and e2 (norms 1, 2): the two leading right singular vectors are
  // e1 and e2 (singular values sqrt(13) and sqrt(5)), up to sign, so the EDC rows are (+-1, 0) and
  // (0, +-1).
  const auto updates = torch::tensor(
      {{2.0, 0.0, 0.0}, {3.0, 0.0, 0.0}, {0.0, 1.0, 0.0}, {0.0, 2.0, 0.0}}, torch::kFloat64);
  const auto edc = FlexCfl::decomposed_cosine_similarity(updates, 2).abs();
  const auto expected =
      torch::tensor({{1.0, 0.0}, {1.0, 0.0}, {0.0, 1.0}, {0.0, 1.0}}, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(edc, expected, 1e-9, 1e-9)) << edc;
}

TEST(FlexCfl, ColdStartGroupsByDirectionAndStartsGroupsFromTheMeanPretrainedModel) {
  FlexCfl flexcfl(FlexCflOptions{}, context_for(4, 2));
  const auto queries = flexcfl.queries(0, everyone(4));
  ASSERT_EQ(queries.size(), 1U);
  EXPECT_EQ(queries[0].kind, QueryKind::kClientStatistics);
  EXPECT_EQ(flexcfl.client_side().statistic->length(3, 1234),
            1234);                             // [P] warm-up update per client
  EXPECT_EQ(queries[0].clients, everyone(4));  // min(alpha K, M) = all 4 clients
  const auto plan = flexcfl.plan(warm_up_input(0, everyone(4), queries[0], two_directions()));
  const auto groups = assigned(plan, everyone(4));
  EXPECT_EQ(groups[0], groups[1]);
  EXPECT_EQ(groups[2], groups[3]);
  EXPECT_NE(groups[0], groups[2]);
  // Initial model 0 plus the members' mean update: (2.5, 0.05, 0.05) and (0.05, 1.5, 0.05).
  ASSERT_TRUE(plan.models.defined());
  EXPECT_TRUE(torch::allclose(plan.models[groups[0]], torch::tensor({2.5F, 0.05F, 0.05F})));
  EXPECT_TRUE(torch::allclose(plan.models[groups[2]], torch::tensor({0.05F, 1.5F, 0.05F})));
  EXPECT_DOUBLE_EQ(plan.weights.sum().item<double>(), 400.0);  // sample-weighted groups
  EXPECT_TRUE(flexcfl.queries(1, everyone(4)).empty());        // everyone has a group now
  EXPECT_FALSE(flexcfl.plan(testing::input_for(1, everyone(4))).models.defined());
}

TEST(FlexCfl, ALateClientJoinsTheGroupOfMostSimilarDirectionAndTheStateRestoresIt) {
  FlexCfl flexcfl(FlexCflOptions{}, context_for(5, 2));
  const std::vector<int> present{0, 1, 2, 3};  // client 4 joins in round 2
  const auto cold = flexcfl.queries(0, present);
  ASSERT_EQ(cold[0].clients, present);
  const auto first = flexcfl.plan(warm_up_input(0, present, cold[0], two_directions()));
  EXPECT_EQ(first.assignment[4], kNotParticipating);
  const auto late = flexcfl.queries(1, everyone(5));
  ASSERT_EQ(late.size(), 1U);
  EXPECT_EQ(late[0].clients, std::vector<int>{4});  // only the client without a group pre-trains
  // Its update points along e1: it joins clients 0 and 1's group, whose cold-start direction is e1.
  const auto joined = flexcfl.plan(
      warm_up_input(1, everyone(5), late[0], torch::tensor({{0.3, 0.0, 0.0}}, torch::kFloat64)));
  EXPECT_EQ(joined.assignment[4], joined.assignment[0]);
  // The whole state (groups, directions) restores a fresh FlexCFL that plans the same.
  FlexCfl restored(FlexCflOptions{}, context_for(5, 2));
  restored.restore(flexcfl.state());
  EXPECT_TRUE(restored.queries(2, everyone(5)).empty());
  EXPECT_EQ(restored.plan(testing::input_for(2, everyone(5))).assignment, joined.assignment);
  EXPECT_THROW(FlexCfl(FlexCflOptions{}, context_for(5, 2)).queries(0, {3}),
               ConfigError);  // 1 client, 2 groups
}

TEST(FlexCfl, InterGroupAggregationPullsTrainedGroupsTogether) {
  FlexCflOptions options;
  options.group_lr = 1.0;
  FlexCfl flexcfl(options, context_for(4, 3));
  // Norms 1 and 2: w0 = (w0 + 1/2 w1) / 1.5 = (2/3, 2/3); w1 = (w1 + 1/1 w0) / 2 = (1/2, 1); the
  // untrained group 2 keeps its model.
  auto models = torch::tensor({{1.0F, 0.0F}, {0.0F, 2.0F}, {5.0F, 5.0F}});
  flexcfl.after_aggregation(3, {true, true, false}, models);
  EXPECT_TRUE(
      torch::allclose(models, torch::tensor({{2.0F / 3, 2.0F / 3}, {0.5F, 1.0F}, {5.0F, 5.0F}})));
  FlexCfl off(FlexCflOptions{}, context_for(4, 3));
  auto unchanged = torch::tensor({{1.0F, 0.0F}, {0.0F, 2.0F}, {5.0F, 5.0F}});
  off.after_aggregation(3, {true, true, false}, unchanged);
  EXPECT_TRUE(torch::equal(unchanged, torch::tensor({{1.0F, 0.0F}, {0.0F, 2.0F}, {5.0F, 5.0F}})));
}

TEST(FlexCfl, RejectsImpossibleSettings) {
  EXPECT_THROW(FlexCfl(FlexCflOptions{}, context_for(4, 5)), ConfigError);
  auto context = context_for(4, 2);
  context.gradient_averaging = true;
  EXPECT_THROW(check_run_options("flexcfl", FlexCfl(FlexCflOptions{}, context).traits(), context),
               ConfigError);
}

}  // namespace
}  // namespace cflrun::algo
