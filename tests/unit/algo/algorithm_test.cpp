#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/clove.hpp>
#include <cflrun/algo/pacfl.hpp>
#include <cflrun/core/error.hpp>

#include "batched_procedure_check.hpp"
#include "round_for_tests.hpp"

#include <algorithm>
#include <set>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::algo {
namespace {

using testing::assigned;
using testing::context_for;
using testing::everyone;
using testing::input_for;
using testing::make;

/// The assignment `name` (default options) plans for the participants from their loss vectors.
std::vector<int> assign_by(Algorithm& algorithm, int round, const std::vector<int>& participants,
                           const torch::Tensor& losses) {
  return assigned(algorithm.plan(input_for(round, participants, QueryKind::kLossVectors, losses)),
                  participants);
}

TEST(RandomFirstAssignment, UsesEveryModelAndNumbersGroupsBySmallestClient) {
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const auto a = random_first_assignment(12, 5, seed);
    ASSERT_EQ(a.size(), 12U);
    EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 5U);
    EXPECT_EQ(a[0], 0);
    int next_new = 1;  // the first appearance of each model id is in increasing order
    std::set<int> seen{0};
    for (int m : a) {
      if (seen.insert(m).second) {
        EXPECT_EQ(m, next_new++);
      }
    }
  }
}

TEST(RandomFirstAssignment, IsDeterministicPerSeed) {
  EXPECT_EQ(random_first_assignment(25, 5, 3), random_first_assignment(25, 5, 3));
  EXPECT_NE(random_first_assignment(25, 5, 3), random_first_assignment(25, 5, 4));
}

TEST(RandomFirstAssignment, RejectsMoreModelsThanClients) {
  EXPECT_THROW(random_first_assignment(3, 4, 1), ConfigError);
}

std::string error_making(const std::string& algorithm, const AlgorithmContext& context) {
  try {
    make(algorithm, context);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

// K larger than the clients names the option K came from; an algorithm that keeps no K models
// refuses --models instead of ignoring it.
TEST(Algorithm, ModelCountErrorsNameTheOptionGiven) {
  auto context = context_for(6, 7);
  EXPECT_EQ(error_making("clove", context),
            "--clusters (K = 7 models) must be between 1 and the number of clients (6); lower "
            "--clusters or add clients");
  context.models_given = true;
  EXPECT_EQ(error_making("ifca", context),
            "--models (K = 7 models) must be between 1 and the number of clients (6); lower "
            "--models or add clients");
  context = context_for(10, 100);
  context.models_given = true;
  EXPECT_EQ(error_making("cfl", context),
            "--models 100 does not apply to cfl (it splits clusters until they are congruent and "
            "so finds its own number of models); remove --models");
  auto classifier = testing::classifier_context(16);  // the personalised methods need a classifier
  classifier.num_models = 100;
  classifier.models_given = true;
  for (const char* algorithm :
       {"pacfl", "fedavg", "local", "perfedavg", "fedproto", "fedala", "fedpac"}) {
    const bool personalised =
        std::string(algorithm).rfind("fed", 0) == 0 && std::string(algorithm) != "fedavg";
    EXPECT_NE(error_making(algorithm, personalised ? classifier : context)
                  .find(std::string("--models 100 does not apply to ") + algorithm + " ("),
              std::string::npos)
        << algorithm;
  }
  context.models_given = false;  // --clusters 100 with 10 clients: these algorithms ignore K
  EXPECT_EQ(error_making("fedavg", context), "");
}

TEST(Ifca, PicksTheModelWithTheSmallestLoss) {
  auto ifca = make("ifca", context_for(3, 2));
  const auto losses = torch::tensor({0.5, 0.2, 0.1, 0.9, 0.3, 0.3}, torch::kFloat64).view({3, 2});
  EXPECT_EQ(assign_by(*ifca, 1, everyone(3), losses), (std::vector<int>{1, 0, 0}));
  EXPECT_EQ(ifca->queries(1, everyone(3)).at(0).kind, QueryKind::kLossVectors);
}

TEST(Algorithm, DefaultAggregationAveragesTheTrainedClientsWithinTheirModelsBySampleCount) {
  auto ifca = make("ifca", context_for(4, 2));
  RoundPlan plan;
  plan.assignment = {1, 0, 1, kNotParticipating};
  auto input = input_for(0, {0, 1, 2});
  input.train_samples = {10, 20, 30, 40};
  const auto aggregation =
      ifca->aggregate(input, plan, {0, 2}, torch::zeros({2, 5}, torch::kFloat64));
  // Clients 0 and 2 trained, both on model 1: n_0 = 10 and n_2 = 30 in its row; client 1 did not
  // train.
  EXPECT_TRUE(torch::equal(
      aggregation.weights,
      torch::tensor({0.0, 0.0, 0.0, 0.0, 10.0, 0.0, 30.0, 0.0}, torch::kFloat64).view({2, 4})));
  EXPECT_TRUE(aggregation.assignment.empty());  // the plan's assignment stands
  EXPECT_EQ(aggregation.live_models, 0);        // all K models are live
  // Reports an algorithm does not use are ignored: no evaluation payload comes back.
  EXPECT_TRUE(ifca->receive_reports(0, {0}, torch::zeros({1, 3}, torch::kFloat64)).empty());
}

TEST(Clove, RecoversClustersThatIfcaWouldMerge) {
  // The CLoVE paper's Fig. 1: every client has its lowest loss on model 0, so IFCA puts all clients
  // on model 0, but the loss vectors form two clusters that matching sends to different models.
  std::vector<double> rows;
  for (int i = 0; i < 6; ++i) {
    if (i < 3) {
      rows.insert(rows.end(), {1.0 + 0.01 * i, 5.1 + 0.01 * i});
    } else {
      rows.insert(rows.end(), {2.1 + 0.01 * i, 3.5 + 0.01 * i});
    }
  }
  const auto losses = torch::tensor(rows, torch::kFloat64).view({6, 2});
  auto clove = make("clove", context_for(6, 2));
  auto ifca = make("ifca", context_for(6, 2));
  EXPECT_EQ(assign_by(*ifca, 1, everyone(6), losses), (std::vector<int>(6, 0)));
  // Cluster {0,1,2} costs 3.03 on model 0 and 15.33 on model 1; {3,4,5} costs 6.42 and 10.62:
  // the min-cost matching gives {0,1,2} -> 0 and {3,4,5} -> 1 (3.03 + 10.62 < 15.33 + 6.42).
  EXPECT_EQ(assign_by(*clove, 1, everyone(6), losses), (std::vector<int>{0, 0, 0, 1, 1, 1}));
}

TEST(Clove, RandomFirstRoundNeedsNoLossVectors) {
  auto context = context_for(10, 5);
  context.random_first_assignment = true;
  auto clove = make("clove", context);
  EXPECT_TRUE(clove->queries(0, everyone(10)).empty());
  EXPECT_EQ(clove->queries(1, everyone(10)).size(), 1U);
  const auto plan = clove->plan(input_for(0, everyone(10)));
  EXPECT_EQ(assigned(plan, everyone(10)), random_first_assignment(10, 5, context.seed));
  EXPECT_EQ(plan.start, plan.assignment);
}

TEST(Clove, ClustersOnlyTheParticipants) {
  // Participants 1, 4, 6 of 8 clients; rows are their loss vectors.
  const auto losses = torch::tensor({0.1, 2.0, 2.1, 0.2, 0.1, 1.9}, torch::kFloat64).view({3, 2});
  auto clove = make("clove", context_for(8, 2));
  const auto plan = clove->plan(input_for(2, {1, 4, 6}, QueryKind::kLossVectors, losses));
  EXPECT_EQ(plan.assignment, (std::vector<int>{-1, 0, -1, -1, 1, -1, 0, -1}));
  EXPECT_EQ(plan.start, plan.assignment);
  // Aggregation weights: each participant's sample count in its model's row, nothing elsewhere.
  EXPECT_DOUBLE_EQ(plan.weights[0][1].item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(plan.weights[1][4].item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(plan.weights.sum().item<double>(), 300.0);
  EXPECT_THROW(clove->plan(input_for(2, {1, 4}, QueryKind::kLossVectors, losses)), ShapeError);
}

TEST(Clove, SquareRootLossVectorsChangeTheClusters) {
  // Model 0 losses 0.01, 1, 4, 9 and a constant 5 on model 1. k-means on the raw losses splits
  // {0.01, 1, 4} | {9} (SSE 8.64 < 12.99 for {0.01, 1} | {4, 9}); on their square roots
  // 0.1, 1, 2, 3 it splits {0.1, 1} | {2, 3} (SSE 0.905 < 1.806). Matching then sends the cluster
  // of client 0 to model 0 in both cases.
  const auto losses =
      torch::tensor({0.01, 5.0, 1.0, 5.0, 4.0, 5.0, 9.0, 5.0}, torch::kFloat64).view({4, 2});
  auto raw = make("clove", context_for(4, 2));
  CloveOptions options;
  options.loss_transform = LossTransform::kSquareRoot;
  auto rooted = make("clove", context_for(4, 2), &options);
  EXPECT_EQ(assign_by(*raw, 1, everyone(4), losses), (std::vector<int>{0, 0, 0, 1}));
  EXPECT_EQ(assign_by(*rooted, 1, everyone(4), losses), (std::vector<int>{0, 0, 1, 1}));
}

TEST(Clove, NoMatchingGivesTheClusterOfClientZeroModelZero) {
  // Clients 0-2 fit model 1, clients 3-5 model 0: matching sends {0,1,2} to model 1; the ablation
  // without matching gives the cluster holding the smallest client id model 0 regardless.
  const auto losses =
      torch::tensor({5.0, 1.0, 5.1, 1.1, 5.2, 1.2, 1.0, 5.0, 1.1, 5.1, 1.2, 5.2}, torch::kFloat64)
          .view({6, 2});
  auto matched = make("clove", context_for(6, 2));
  CloveOptions options;
  options.matching = cluster::Matching::kNone;
  auto unmatched = make("clove", context_for(6, 2), &options);
  EXPECT_EQ(assign_by(*matched, 1, everyone(6), losses), (std::vector<int>{1, 1, 1, 0, 0, 0}));
  EXPECT_EQ(assign_by(*unmatched, 1, everyone(6), losses), (std::vector<int>{0, 0, 0, 1, 1, 1}));
}

TEST(Clove, RejectsLossVectorsOfTheWrongShapeOrNonFinite) {
  auto clove = make("clove", context_for(4, 2));
  EXPECT_THROW(assign_by(*clove, 1, everyone(4), torch::zeros({4, 3}, torch::kFloat64)),
               ShapeError);
  auto bad = torch::ones({4, 2}, torch::kFloat64);
  bad[1][1] = std::numeric_limits<double>::infinity();
  EXPECT_THROW(assign_by(*clove, 1, everyone(4), bad), Error);
}

TEST(Baselines, FedAvgSharesOneModelAndLocalOnlyKeepsOwnModels) {
  auto fedavg = make("fedavg", context_for(4, 2));
  auto local = make("local", context_for(4, 2));
  EXPECT_EQ(fedavg->num_models(), 1);
  EXPECT_EQ(local->num_models(), 4);
  EXPECT_EQ(assigned(fedavg->plan(input_for(0, everyone(4))), everyone(4)),
            (std::vector<int>{0, 0, 0, 0}));
  EXPECT_EQ(assigned(local->plan(input_for(3, everyone(4))), everyone(4)),
            (std::vector<int>{0, 1, 2, 3}));
  EXPECT_EQ(local->plan(input_for(3, {1, 3})).assignment, (std::vector<int>{-1, 1, -1, 3}));
  EXPECT_EQ(fedavg->plan(input_for(3, {1, 3})).start, (std::vector<int>{-1, 0, -1, 0}));
  EXPECT_FALSE(fedavg->traits().clusters_clients);
  EXPECT_TRUE(local->queries(0, everyone(4)).empty());
}

TEST(Registry, RejectsUnknownNamesAndTooManyModels) {
  EXPECT_THROW(make("no-such-algorithm", context_for(4, 2)), ConfigError);
  EXPECT_THROW(make("clove", context_for(4, 5)), ConfigError);
  EXPECT_THROW(make("ifca", context_for(4, 0)), ConfigError);
}

TEST(Registry, EveryAlgorithmHasOptionsThatCopyDeeply) {
  AlgorithmOptionSet options;
  options.get<CloveOptions>("clove").kmeans_restarts = 3;
  const AlgorithmOptionSet copy = options;
  options.get<CloveOptions>("clove").kmeans_restarts = 4;
  EXPECT_EQ(copy.get<CloveOptions>("clove").kmeans_restarts, 3);
  for (const auto& entry : registered_algorithms()) {
    EXPECT_NO_THROW(copy.of(entry.name)) << entry.name;
    EXPECT_FALSE(entry.summary.empty()) << entry.name;
  }
}

}  // namespace
}  // namespace cflrun::algo

namespace cflrun::algo {
namespace {

using testing::assigned;
using testing::context_for;
using testing::everyone;
using testing::input_for;
using testing::make;

TEST(Pacfl, ClustersInitialClientsOnceAndPlacesNewcomersWithoutMovingOldClients) {
  PacflOptions options;
  options.beta = 10.0;
  options.vectors = 1;
  auto context = context_for(6, 1);
  context.sample_size = 4;  // d: signatures in 4 dimensions
  auto pacfl = make("pacfl", context, &options);
  // The set-up round asks every client, newcomers too, for its signature; clients 0-3 are
  // clustered.
  const auto queries = pacfl->set_up_queries({0, 1, 2, 3});
  ASSERT_EQ(queries.size(), 1U);
  EXPECT_EQ(queries[0].kind, QueryKind::kClientStatistics);
  EXPECT_EQ(queries[0].clients, everyone(6));
  // Signatures in 4 dimensions: clients 0, 1, 4 span axis 0, clients 2, 3, 5 axis 3 (p = 1).
  auto signatures = torch::zeros({6, 4}, torch::kFloat64);
  for (int c : {0, 1, 4})
    signatures[c][0] = 1.0;
  for (int c : {2, 3, 5})
    signatures[c][3] = 1.0;
  EXPECT_THROW(pacfl->set_up({{queries[0], signatures.narrow(0, 0, 5)}}), ShapeError);
  pacfl->set_up({{queries[0], signatures}});
  EXPECT_EQ(pacfl->num_models(), 2);
  EXPECT_TRUE(pacfl->traits().same_initial_models);
  EXPECT_TRUE(pacfl->queries(0, everyone(4)).empty());
  EXPECT_EQ(assigned(pacfl->plan(input_for(0, {0, 1, 2, 3})), {0, 1, 2, 3}),
            (std::vector<int>{0, 0, 1, 1}));
  // Each client sends its signature (4 floats) with its first update only.
  algo::RoundFacts facts;
  EXPECT_EQ(pacfl->traffic(facts).received, 4 * 4 * 4);
  // The whole state (clusters, proximity matrix) restores a fresh PACFL that then decides alike.
  auto restored = make("pacfl", context, &options);
  restored->restore(pacfl->state());
  EXPECT_EQ(restored->num_models(), 2);
  // Newcomers 4 and 5 join the clusters of the old clients in their subspaces (PACFL Alg. 2).
  const std::vector<int> all{0, 1, 2, 3, 4, 5};
  EXPECT_EQ(assigned(pacfl->plan(input_for(3, all)), all), (std::vector<int>{0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(assigned(restored->plan(input_for(3, all)), all), (std::vector<int>{0, 0, 1, 1, 0, 1}));
  EXPECT_EQ(restored->traffic(facts).received,
            2 * 4 * 4);  // only the newcomers 4 and 5 send theirs
  EXPECT_THROW(restored->restore({}), DataError);
}

// --pacfl-evaluation after_local_update client-batched: the standard update, each client scored
// right after it, and that score reported again at evaluation, as one client at a time.
TEST(Pacfl, AfterUpdateScoresBatchedEqualOneAtATime) {
  const testing::BatchedCase cnn;  // the CNN, 60, 50 and 40 samples
  PacflOptions options;
  options.evaluation = PacflEvaluation::kAfterLocalUpdate;
  auto context = context_for(3, 1);
  context.sample_size = 784;
  const auto procedure = make("pacfl", context, &options)->client_side().procedure;
  ASSERT_NE(procedure, nullptr);
  local::LocalUpdateSettings settings;
  settings.batch_size = 16;
  settings.learning_rate = 1e-3;
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings, {}, false);
}

}  // namespace
}  // namespace cflrun::algo
