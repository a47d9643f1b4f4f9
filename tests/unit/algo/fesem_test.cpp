#include <cflrun/algo/fesem.hpp>

#include "round_for_tests.hpp"

#include <cmath>
#include <set>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

using testing::context_for;
using testing::everyone;
using testing::input_for;

/// Distances of 4 clients' local models to 2 centers: nearest centers 0, 1, 1, 0.
torch::Tensor distances() {
  return torch::tensor({{1.0, 2.0}, {3.0, 0.5}, {0.2, 0.1}, {4.0, 4.0}}, torch::kFloat64);
}

TEST(FeSem, EStepJoinsTheNearestCenterAndMStepAveragesItsMembers) {
  FeSem fesem(FeSemOptions{}, context_for(4, 2));
  EXPECT_TRUE(fesem.traits().keeps_local_models);
  ASSERT_EQ(fesem.queries(0, everyone(4)).size(), 1U);
  EXPECT_EQ(fesem.queries(0, everyone(4))[0].kind, QueryKind::kClientStatistics);
  const auto plan =
      fesem.plan(input_for(0, everyone(4), QueryKind::kClientStatistics, distances()));
  EXPECT_EQ(plan.assignment, (std::vector<int>{0, 1, 1, 0}));  // a tie (client 3) goes to center 0
  EXPECT_EQ(plan.start, plan.assignment);                      // members train their center's model
  // The paper's M-step: the plain mean of the members' trained models.
  EXPECT_TRUE(torch::equal(
      plan.weights, torch::tensor({{1.0, 0.0, 0.0, 1.0}, {0.0, 1.0, 1.0, 0.0}}, torch::kFloat64)));
  const auto recorded = fesem.record(0).at("/algorithm/fesem_distance");
  EXPECT_FLOAT_EQ(recorded[1 * 2 + 1], 0.5F);
}

TEST(FeSem, OfficialAggregationKeepsOneRandomMemberPerCenter) {
  FeSemOptions options;
  options.aggregation = CenterAggregation::kFirstMember;
  FeSem fesem(options, context_for(4, 2));
  std::set<int> firsts_of_center0;
  for (int round = 0; round < 40; ++round) {
    const auto plan =
        fesem.plan(input_for(round, everyone(4), QueryKind::kClientStatistics, distances()));
    EXPECT_EQ(plan.start,
              (std::vector<int>{0, 1, 1, 0}));  // every member still trains and keeps its model
    EXPECT_DOUBLE_EQ(plan.weights[0].sum().item<double>(), 1.0);  // one member per center counts
    EXPECT_DOUBLE_EQ(plan.weights[1].sum().item<double>(), 1.0);
    EXPECT_DOUBLE_EQ(plan.weights[0][1].item<double>() + plan.weights[0][2].item<double>(),
                     0.0);  // members only
    firsts_of_center0.insert(plan.weights[0][0].item<double>() > 0.0 ? 0 : 3);
  }
  EXPECT_EQ(firsts_of_center0, (std::set<int>{0, 3}));  // the member drawn changes with the round
}

TEST(FeSem, PartialRoundsRecordOnlyTheParticipantsAndTheStateIsEmpty) {
  FeSem fesem(FeSemOptions{}, context_for(4, 2));
  const auto plan = fesem.plan(input_for(1, {1, 2}, QueryKind::kClientStatistics,
                                         torch::tensor({{3.0, 0.5}, {0.2, 0.1}}, torch::kFloat64)));
  EXPECT_EQ(plan.assignment, (std::vector<int>{kNotParticipating, 1, 1, kNotParticipating}));
  EXPECT_TRUE(std::isnan(fesem.record(1).at("/algorithm/fesem_distance")[0]));
  EXPECT_TRUE(fesem.state().empty());  // centers are the models, local models live with the clients
  EXPECT_THROW(fesem.restore({{"cluster", torch::zeros({4})}}), DataError);
  EXPECT_THROW(fesem.plan(input_for(1, {1, 2}, QueryKind::kClientStatistics, distances())),
               ShapeError);
}

TEST(FeSem, RejectsImpossibleSettings) {
  EXPECT_THROW(FeSem(FeSemOptions{}, context_for(4, 5)), ConfigError);
  auto context = context_for(4, 2);
  context.gradient_averaging = true;
  EXPECT_THROW(check_run_options("fesem", FeSem(FeSemOptions{}, context).traits(), context),
               ConfigError);
}

}  // namespace
}  // namespace cflrun::algo
