#include <cflrun/algo/fedsoft.hpp>

#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

using testing::context_for;
using testing::everyone;
using testing::input_for;

FedSoftOptions with_selection(int selection) {
  FedSoftOptions options;
  options.selection = selection;
  return options;
}

// Four clients: two mostly on center 0, two mostly on center 1 (a 10:90 mixture).
torch::Tensor mixed_importance() {
  return torch::tensor({{0.9, 0.1}, {0.9, 0.1}, {0.1, 0.9}, {0.1, 0.9}}, torch::kFloat64);
}

TEST(FedSoft, AsksForImportanceEveryIntervalAndTrainsLocalModelsWithTheProximalTerm) {
  FedSoft fedsoft(with_selection(0), context_for(4, 2));
  EXPECT_EQ(fedsoft.num_models(), 2);
  EXPECT_TRUE(fedsoft.traits().keeps_local_models);
  EXPECT_TRUE(fedsoft.traits().evaluates_local_models);
  EXPECT_DOUBLE_EQ(fedsoft.traits().proximal_mu, 0.1);
  ASSERT_EQ(fedsoft.queries(0, everyone(4)).size(), 1U);
  EXPECT_EQ(fedsoft.queries(0, everyone(4))[0].kind, QueryKind::kClientStatistics);
  EXPECT_EQ(fedsoft.client_side().statistic->length(2, 1000),
            2);                                          // [K] importance weights per client
  EXPECT_TRUE(fedsoft.queries(1, everyone(4)).empty());  // tau = 2
  EXPECT_THROW(fedsoft.plan(input_for(1, everyone(4))), ConfigError);  // no estimate yet
  const auto plan =
      fedsoft.plan(input_for(0, everyone(4), QueryKind::kClientStatistics, mixed_importance()));
  EXPECT_EQ(plan.start,
            std::vector<int>(4, kLocalModel));  // everyone contributes without selection
  EXPECT_TRUE(torch::equal(plan.proximal_weights, mixed_importance()));
  EXPECT_THROW(fedsoft.plan(input_for(0, everyone(4), QueryKind::kClientStatistics,
                                      torch::ones({3, 2}, torch::kFloat64))),
               ShapeError);
}

TEST(FedSoft, WithoutSelectionEveryClientContributesByEquationSix) {
  auto context = context_for(4, 2);
  context.train_samples = {100, 300, 100, 100};
  FedSoft fedsoft(with_selection(0), context);
  const auto v = fedsoft.contributions(0, mixed_importance());
  // Center 0: 90, 270, 10, 10 over 380.
  EXPECT_NEAR(v[0][1].item<double>(), 270.0 / 380.0, 1e-15);
  EXPECT_NEAR(v[0][2].item<double>(), 10.0 / 380.0, 1e-15);
  EXPECT_NEAR(v.sum(1)[1].item<double>(), 1.0, 1e-15);
}

TEST(FedSoft, SelectionAveragesTheDrawnClientsEquallyAndFavoursImportantOnes) {
  FedSoft fedsoft(with_selection(1), context_for(4, 2));
  int center0_from_first_pair = 0;
  for (int round = 0; round < 400; ++round) {
    const auto chosen = fedsoft.contributions(round, mixed_importance());
    EXPECT_DOUBLE_EQ(chosen.sum().item<double>(), 2.0);  // one client at weight 1 per center
    center0_from_first_pair +=
        (chosen[0][0].item<double>() + chosen[0][1].item<double>()) > 0.0 ? 1 : 0;
  }
  EXPECT_NEAR(center0_from_first_pair / 400.0, 0.9, 0.05);
  // Deterministic per (seed, round).
  EXPECT_TRUE(torch::equal(
      fedsoft.contributions(7, mixed_importance()),
      FedSoft(with_selection(1), context_for(4, 2)).contributions(7, mixed_importance())));
}

TEST(FedSoft, HardViewIsTheDominantCenterAndTheStateRestoresIt) {
  FedSoft fedsoft(with_selection(0), context_for(4, 2));
  const auto plan =
      fedsoft.plan(input_for(0, everyone(4), QueryKind::kClientStatistics, mixed_importance()));
  EXPECT_EQ(plan.assignment, (std::vector<int>{0, 0, 1, 1}));
  FedSoft restored(with_selection(0), context_for(4, 2));
  restored.restore(fedsoft.state());
  EXPECT_EQ(restored.plan(input_for(1, everyone(4))).assignment, (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(fedsoft.record(0).at("/clients/importance").size(), 8U);
}

TEST(FedSoft, RejectsImpossibleSettings) {
  EXPECT_THROW(FedSoft(with_selection(5), context_for(4, 2)), ConfigError);
  EXPECT_THROW(FedSoft(with_selection(2), context_for(4, 5)), ConfigError);
}

// The run options FedSoft refuses, checked once for every algorithm (check_run_options), each
// named with its reason and fix; the same options pass with an algorithm that takes them.
TEST(FedSoft, RefusedRunOptionsNameTheOptionReasonAndFix) {
  const auto refusal = [](void (*set)(AlgorithmContext&)) -> std::string {
    auto context = context_for(4, 2);
    set(context);
    try {
      check_run_options("fedsoft", FedSoft(with_selection(2), context_for(4, 2)).traits(), context);
    } catch (const ConfigError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_EQ(refusal([](AlgorithmContext& c) { c.participation = 0.5; }),
            "--participation 0.5 does not apply to fedsoft (it draws clients per cluster: "
            "--fedsoft-selection); use "
            "--participation 1");
  EXPECT_EQ(refusal([](AlgorithmContext& c) { c.gradient_averaging = true; }),
            "--aggregation gradient does not apply to fedsoft (centers average local models); use "
            "--aggregation model");
  EXPECT_NE(
      refusal([](AlgorithmContext& c) { c.newcomers = 1; }).find("--newcomers 1 does not apply"),
      std::string::npos);
  EXPECT_NE(
      refusal([](AlgorithmContext& c) { c.cluster_layers = 2; }).find("use --cluster-layers 0"),
      std::string::npos);
  EXPECT_NE(
      refusal([](AlgorithmContext& c) { c.stable_rounds = 3; }).find("remove --stable-rounds"),
      std::string::npos);
  EXPECT_EQ(refusal([](AlgorithmContext& /*c*/) {}), "");
  auto context = context_for(4, 2);
  context.participation = 0.5;
  context.gradient_averaging = true;
  context.stable_rounds = 3;
  context.cluster_layers = 2;
  EXPECT_NO_THROW(check_run_options(
      "ifca", Traits{.clusters_clients = true, .records_loss_vectors = true}, context));
  // Weight sharing needs clusters even where no trait refuses it.
  context = context_for(4, 2);
  context.cluster_layers = 2;
  try {
    check_run_options("fedavg", Traits{.clusters_clients = false}, context);
    ADD_FAILURE() << "--cluster-layers passed with an algorithm that clusters no clients";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()),
              "--cluster-layers 2 does not apply to fedavg (weight sharing shares layers between "
              "the models of clusters, and it clusters no clients); use --cluster-layers 0");
  }
}

}  // namespace
}  // namespace cflrun::algo
