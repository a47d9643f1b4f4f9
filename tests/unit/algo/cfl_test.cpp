#include <cflrun/algo/cfl.hpp>

#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

using testing::context_for;
using testing::everyone;
using testing::input_for;

CflOptions no_warmup() {
  CflOptions options;
  options.eps1 = 0.5;
  options.eps2 = 1.0;
  options.warmup_rounds = 0;
  return options;
}

/// Six updates in 2-D: clients 0-2 point along +x, clients 3-5 along -x (norm about 2).
torch::Tensor opposed_updates() {
  return torch::tensor(
      {{2.0, 0.1}, {2.1, 0.0}, {1.9, -0.1}, {-2.0, 0.1}, {-2.0, 0.0}, {-2.1, -0.1}},
      torch::kFloat64);
}

Aggregation round_of(Cfl& cfl, int round, const torch::Tensor& updates) {
  const auto input = input_for(round, everyone(6));
  const auto plan = cfl.plan(input);
  EXPECT_FALSE(plan.weights.defined());  // decided after the updates
  EXPECT_EQ(plan.start, plan.assignment);
  return cfl.aggregate(input, plan, everyone(6), updates);
}

TEST(Cfl, SplitsTwoOpposedUpdateGroupsWhoseMeanIsSmall) {
  Cfl cfl(no_warmup(), context_for(6, 6));
  EXPECT_EQ(cfl.num_models(), 6);  // capacity: one slot per client
  const auto aggregation = round_of(cfl, 0, opposed_updates());
  // Mean update about 0 < eps1 while every update is about 2 > eps2: the cluster splits, the half
  // holding client 0 keeps model 0 and the other half takes model 1.
  EXPECT_EQ(aggregation.assignment, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(aggregation.live_models, 2);
  EXPECT_DOUBLE_EQ(aggregation.weights[0][2].item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(aggregation.weights[1][3].item<double>(), 100.0);
  EXPECT_DOUBLE_EQ(aggregation.weights.sum().item<double>(), 600.0);
  const auto recorded = cfl.record(0);
  EXPECT_NEAR(recorded.at("/algorithm/cfl_mean_update_norm")[0], 0.0167, 1e-3);  // |(0.1, 0)| / 6
  EXPECT_NEAR(recorded.at("/algorithm/cfl_max_update_norm")[0], 2.1024, 1e-3);
  EXPECT_EQ(recorded.at("/algorithm/cfl_split")[0], 1.0F);
  // The next round trains each half from its own model; aligned updates inside each half do not
  // split.
  EXPECT_EQ(testing::assigned(cfl.plan(input_for(1, everyone(6))), everyone(6)),
            (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(round_of(cfl, 1, opposed_updates()).live_models, 2);
}

TEST(Cfl, DoesNotSplitAlignedUpdatesOrDuringWarmUpOrSmallClusters) {
  Cfl aligned(no_warmup(), context_for(6, 6));
  EXPECT_EQ(round_of(aligned, 0, opposed_updates().abs()).live_models,
            1);  // all along +x: mean norm about 2 > eps1
  auto options = no_warmup();
  options.warmup_rounds = 3;
  Cfl warming(options, context_for(6, 6));
  EXPECT_EQ(round_of(warming, 2, opposed_updates()).live_models, 1);  // round 3 is still warm-up
  EXPECT_EQ(round_of(warming, 3, opposed_updates()).live_models, 2);
  options = no_warmup();
  options.min_split_size = 7;
  Cfl small(options, context_for(6, 6));
  EXPECT_EQ(round_of(small, 0, opposed_updates()).live_models, 1);
  options = no_warmup();
  options.max_clusters = 1;  // no free model slot
  Cfl full(options, context_for(6, 6));
  EXPECT_EQ(round_of(full, 0, opposed_updates()).live_models, 1);
}

TEST(Cfl, StateRestoresTheClusters) {
  Cfl cfl(no_warmup(), context_for(6, 6));
  round_of(cfl, 0, opposed_updates());
  Cfl restored(no_warmup(), context_for(6, 6));
  restored.restore(cfl.state());
  EXPECT_EQ(restored.plan(input_for(1, everyone(6))).assignment,
            cfl.plan(input_for(1, everyone(6))).assignment);
  // Both live clusters are restored: aligned updates within each keep them at 2.
  EXPECT_EQ(round_of(restored, 1, opposed_updates().abs()).live_models, 2);
  EXPECT_THROW(restored.restore({}), DataError);
}

TEST(Cfl, RejectsImpossibleSettings) {
  auto options = no_warmup();
  options.max_clusters = 7;
  EXPECT_THROW(Cfl(options, context_for(6, 6)), ConfigError);
  auto context = context_for(6, 6);
  context.gradient_averaging = true;
  EXPECT_THROW(check_run_options("cfl", Cfl(no_warmup(), context).traits(), context), ConfigError);
  Cfl cfl(no_warmup(), context_for(6, 6));
  const auto input = input_for(0, everyone(6));
  EXPECT_THROW(
      cfl.aggregate(input, cfl.plan(input), everyone(6), torch::zeros({5, 2}, torch::kFloat64)),
      ShapeError);
}

TEST(Cfl, NotebookSolverKeepsDecayingSgdAndRefusesAnotherOptimizer) {
  auto options = no_warmup();
  const auto fresh = Cfl(options, context_for(6, 6)).traits();
  EXPECT_FALSE(fresh.keeps_optimizers);
  EXPECT_EQ(fresh.local_lr_decay, 1.0);
  options.solver = CflSolver::kNotebook;
  auto context = context_for(6, 6);  // --optimizer adam, the default
  try {
    Cfl cfl(options, context);
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("add --optimizer sgd --lr 0.1 --momentum 0.9"),
              std::string::npos)
        << e.what();
  }
  context.optimizer = local::Solver::kSgd;
  const auto notebook = Cfl(options, context).traits();
  EXPECT_TRUE(notebook.keeps_optimizers);
  EXPECT_EQ(notebook.local_lr_decay, 0.99);  // the notebook: lr *= 0.99 per local training call
}

/// The notebook's client-index bug on 5 clients (--cfl-split-ids positions). Round 1 splits the
/// root {0..4} into {0, 1} and {2, 3, 4} (positions = ids: still right). Round 2 splits {2, 3, 4}
/// into {2} and {3, 4}, stored as positions {0} and {1, 2}: the lists become [0, 1], [0], [1, 2].
class CflSplitPositions : public ::testing::Test {
 protected:
  static CflOptions options(SplitIds split_ids) {
    auto options = no_warmup();
    options.split_ids = split_ids;
    return options;
  }
  /// Round 1: clients 0-1 along +x, 2-4 along -x; mean update 0, every norm above eps2 = 1.
  static torch::Tensor first_updates() {
    return torch::tensor({{2.0, 0.1}, {2.0, -0.1}, {-1.3, 0.1}, {-1.4, 0.0}, {-1.3, -0.1}},
                         torch::kFloat64);
  }
  /// Round 2: {0, 1} (too small to split) any; in {2, 3, 4} client 2 along +y, 3-4 along -y.
  static torch::Tensor second_updates() {
    return torch::tensor({{1.0, 0.0}, {3.0, 0.0}, {0.0, 2.0}, {0.1, -1.0}, {-0.1, -1.0}},
                         torch::kFloat64);
  }
  static Aggregation round_of(Cfl& cfl, int round, const torch::Tensor& models,
                              const torch::Tensor& updates) {
    auto input = input_for(round, everyone(5));
    input.models = models;
    return cfl.aggregate(input, cfl.plan(input), everyone(5), updates);
  }
};

TEST_F(CflSplitPositions, StoresPositionsAsClientIdsAndUpdatesEachListedClient) {
  Cfl cfl(options(SplitIds::kPositions), context_for(5, 5));
  EXPECT_EQ(cfl.num_models(), 5);  // one model per client
  const auto plan = cfl.plan(input_for(0, everyone(5)));
  EXPECT_EQ(plan.assignment, everyone(5));  // each client trains and is scored on its own model
  const auto first = round_of(cfl, 0, torch::zeros({5, 2}), first_updates());
  EXPECT_EQ(first.clustering, (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_FALSE(first.weights.defined());  // the models come in update form
  // W_i += the mean update of its list: (2, 0) for {0, 1}, (-4/3, 0) for {2, 3, 4}.
  EXPECT_TRUE(torch::allclose(
      first.models,
      torch::tensor(
          {{2.0F, 0.0F}, {2.0F, 0.0F}, {-4.0F / 3, 0.0F}, {-4.0F / 3, 0.0F}, {-4.0F / 3, 0.0F}})));
  // Round 2 from models W_i = (i, 0): lists [0, 1] (mean (2, 0)), [0] ((1, 0)), [1, 2] ((1.5, 1)).
  const auto models = torch::stack({torch::arange(5.0), torch::zeros({5})}, 1);
  const auto second = round_of(cfl, 1, models, second_updates());
  EXPECT_EQ(second.live_models, 3);
  // The CLoVE notebook's clustering: the last list naming a client; 3 and 4 are in none.
  EXPECT_EQ(second.clustering, (std::vector<int>{1, 2, 2, kNotParticipating, kNotParticipating}));
  EXPECT_TRUE(torch::allclose(second.models, torch::tensor({{3.0F, 0.0F},  // 0 + (2,0) + (1,0)
                                                            {4.5F, 1.0F},  // 1 + (2,0) + (1.5,1)
                                                            {3.5F, 1.0F},  // 2 + (1.5,1)
                                                            {3.0F, 0.0F},  // frozen
                                                            {4.0F, 0.0F}})));  // frozen
  EXPECT_EQ(cfl.record(1).at("/algorithm/cfl_listings"),
            (std::vector<float>{2.0F, 2.0F, 1.0F, 0.0F, 0.0F}));
  EXPECT_EQ(cfl.record(1).at("/algorithm/cfl_split"), (std::vector<float>{0, 1, 0, 0, 0}));
}

TEST_F(CflSplitPositions, ClientIdsGiveThePapersClustersOnTheSameUpdates) {
  Cfl cfl(options(SplitIds::kClients), context_for(5, 5));
  auto input = input_for(0, everyone(5));
  cfl.aggregate(input, cfl.plan(input), everyone(5), first_updates());
  input = input_for(1, everyone(5));
  const auto second = cfl.aggregate(input, cfl.plan(input), everyone(5), second_updates());
  EXPECT_EQ(second.assignment, (std::vector<int>{0, 0, 1, 2, 2}));  // {0, 1}, {2}, {3, 4}
  EXPECT_FALSE(second.models.defined());
  EXPECT_TRUE(second.clustering.empty());
  EXPECT_EQ(cfl.record(1).count("/algorithm/cfl_listings"), 0U);
}

TEST_F(CflSplitPositions, StateRestoresTheLists) {
  Cfl cfl(options(SplitIds::kPositions), context_for(5, 5));
  round_of(cfl, 0, torch::zeros({5, 2}), first_updates());
  round_of(cfl, 1, torch::zeros({5, 2}), second_updates());
  Cfl restored(options(SplitIds::kPositions), context_for(5, 5));
  restored.restore(cfl.state());
  EXPECT_TRUE(torch::equal(restored.state().at("lists"), cfl.state().at("lists")));
  // The same next round from the same state: the same models and clustering.
  const auto models = torch::rand({5, 2});
  const auto a = round_of(cfl, 2, models, second_updates());
  const auto b = round_of(restored, 2, models, second_updates());
  EXPECT_TRUE(torch::equal(a.models, b.models));
  EXPECT_EQ(a.clustering, b.clustering);
  Cfl clients(options(SplitIds::kClients), context_for(5, 5));
  EXPECT_THROW(restored.restore(clients.state()), DataError);  // no "lists"
}

}  // namespace
}  // namespace cflrun::algo
