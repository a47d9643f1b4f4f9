#include <cflrun/algo/fedala.hpp>

#include "batched_procedure_check.hpp"
#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::algo {
namespace {

std::shared_ptr<model::Network> tiny_mlp(std::uint64_t seed) {
  torch::manual_seed(seed);
  return model::make_network(model::Architecture::kMlp, model::NetworkShape{{2}, 2});
}

TEST(FedAla, OnePassSetsLowerLayersGlobalAndLearnsClampedElementWiseWeights) {
  const auto global = model::flatten_state(*tiny_mlp(1));
  const auto local = model::flatten_state(*tiny_mlp(2));
  const auto inputs = torch::tensor({{1.0F, -2.0F}, {0.5F, 3.0F}});
  const auto targets = torch::tensor({0, 1}, torch::kInt64);
  // Expected by hand: W starts at 1, so the aggregated head is the global head; its loss gradient
  // g there gives W = clamp(1 - eta g (.) (head_g - head_l), 0, 1) and head = head_l + (head_g -
  // head_l) W.
  auto reference = tiny_mlp(3);
  model::load_flat_state(*reference, global);
  model::mean_loss(model::Objective::kClassification, reference->forward(inputs), inputs, targets)
      .backward();
  const double eta = 50.0;  // large enough that some weights clamp at 0 and others at 1
  const auto parameters = reference->parameters();
  const auto head_start = parameters[0].numel() + parameters[1].numel();
  std::vector<torch::Tensor> expected_weights;
  std::int64_t offset = head_start;
  for (std::size_t i = 2; i < 4; ++i) {
    const auto n = parameters[i].numel();
    const auto difference =
        (global.narrow(0, offset, n) - local.narrow(0, offset, n)).view(parameters[i].sizes());
    expected_weights.push_back((1.0 - eta * parameters[i].grad() * difference).clamp(0.0, 1.0));
    offset += n;
  }
  auto model = tiny_mlp(4);
  std::vector<torch::Tensor> weights;
  const int passes = adaptive_local_aggregation(
      *model, global, local, weights, inputs, targets, /*batch_size=*/2, eta,
      /*layers=*/2, /*until_stable=*/false, model::Objective::kClassification);
  EXPECT_EQ(passes, 1);
  ASSERT_EQ(weights.size(), 2U);
  for (std::size_t w = 0; w < 2; ++w) {
    EXPECT_TRUE(torch::allclose(weights[w], expected_weights[w], 1e-5, 1e-6)) << w;
  }
  EXPECT_TRUE(weights[0].eq(0.0).any().item<bool>() &&
              weights[0].eq(1.0).any().item<bool>());  // both bounds hit
  const auto result = model::flatten_state(*model);
  EXPECT_TRUE(torch::equal(result.narrow(0, 0, head_start),
                           global.narrow(0, 0, head_start)));  // lower layers global
  const auto head_w =
      local.narrow(0, head_start, parameters[2].numel()).view(parameters[2].sizes());
  const auto head_g =
      global.narrow(0, head_start, parameters[2].numel()).view(parameters[2].sizes());
  EXPECT_TRUE(torch::allclose(
      result.narrow(0, head_start, parameters[2].numel()).view(parameters[2].sizes()),
      head_w + (head_g - head_w) * expected_weights[0], 1e-5, 1e-6));
}

TEST(FedAla, SkipsAClientWhoseFirstTensorEqualsTheGlobalOne) {
  const auto global = model::flatten_state(*tiny_mlp(1));
  auto model = tiny_mlp(2);
  std::vector<torch::Tensor> weights;
  EXPECT_EQ(adaptive_local_aggregation(*model, global, global.clone(), weights, torch::ones({2, 2}),
                                       torch::tensor({0, 1}, torch::kInt64), 2, 1.0, 2, true,
                                       model::Objective::kClassification),
            0);
  EXPECT_TRUE(weights.empty());
  EXPECT_TRUE(torch::equal(model::flatten_state(*model), global));
}

TEST(FedAla, IsFedAvgOnTheServerWithPersonalModels) {
  auto context = testing::context_for(3, 1);
  context.num_classes = 10;
  FedAla fedala(FedAlaOptions{}, context);
  EXPECT_TRUE(fedala.traits().keeps_local_models && fedala.traits().evaluates_local_models &&
              fedala.traits().local_models_start_from_server_model);
  const auto plan = fedala.plan(testing::input_for(0, {0, 2}));
  EXPECT_EQ(plan.start, (std::vector<int>{kLocalModel, kNoUpdate, kLocalModel}));
  EXPECT_DOUBLE_EQ(plan.weights.sum().item<double>(), 200.0);
  context.num_classes = 0;
  EXPECT_THROW(FedAla(FedAlaOptions{}, context), ConfigError);
}

// The client-batched adaptive local aggregation leaves every client's model, W and scores as one
// client at a time does: the first ALA (until stable) of clients 0 and 1, client 2 untrained (its
// model is the global one: skipped), then a second ALA of one pass, on the CNN; a later ALA (one
// pass) of the CIFAR CNN (batch norm, dropout) scaled down.
TEST(FedAla, BatchedClientsEqualOneAtATime) {
  const testing::BatchedCase cnn;  // the CNN, 60, 50 and 40 samples
  auto context = testing::context_for(3, 1);
  context.num_classes = 10;
  context.batch_size = 16;  // ragged: ALA slices of 48, 40 and 32 samples
  FedAlaOptions options;
  options.eta = 0.5;
  const auto procedure = FedAla(options, context).client_side().procedure;
  local::LocalUpdateSettings settings;
  settings.batch_size = 16;
  settings.solver = local::Solver::kSgd;
  settings.learning_rate = 0.05;
  const auto client_2_untrained = [](testing::BatchedClients& clients) {
    clients.local_models[2].copy_(clients.server_models[0]);
  };
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings, {}, true, 2,
                                               client_2_untrained);
  context.batch_size = 2;
  settings.batch_size = 2;
  testing::expect_batched_equals_one_at_a_time(
      *FedAla(options, context).client_side().procedure, testing::cifar_case(), settings, {}, true,
      1, [](testing::BatchedClients& clients) {
        for (auto& memory : clients.memories) {
          memory["ala_started"] = torch::ones({1});  // one pass: W starts at ones
        }
      });
}

}  // namespace
}  // namespace cflrun::algo
