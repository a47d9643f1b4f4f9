#include <cflrun/algo/fedproto.hpp>

#include "batched_procedure_check.hpp"
#include "round_for_tests.hpp"

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

AlgorithmContext classifier_context() {
  auto context = testing::context_for(2, 1);
  context.num_classes = 3;
  context.feature_size = 2;
  context.classifier_with_head = true;
  return context;
}

TEST(FedProto, PrototypesAreClassMeansOfTheFeatures) {
  // Features of 4 samples with labels 0, 2, 0, 2; class 1 has none.
  const auto features =
      torch::tensor({{1.0, 2.0}, {4.0, 0.0}, {3.0, 4.0}, {2.0, 2.0}}, torch::kFloat64);
  const auto [means, counts] = class_means(features, torch::tensor({0, 2, 0, 2}, torch::kInt64), 3);
  EXPECT_TRUE(
      torch::equal(means, torch::tensor({{2.0, 3.0}, {0.0, 0.0}, {3.0, 1.0}}, torch::kFloat64)));
  EXPECT_TRUE(torch::equal(counts, torch::tensor({2.0, 0.0, 2.0}, torch::kFloat64)));
}

TEST(FedProto, ServerAveragesEachClassOverTheClientsThatHaveIt) {
  // Client 0 has classes 0 and 1, client 1 classes 1 and... none of class 2: P_0 = client 0's,
  // P_1 = the plain mean (not weighted by the counts 1 and 9), class 2 absent.
  const auto prototypes =
      torch::tensor({{{2.0, 0.0}, {0.0, 2.0}, {0.0, 0.0}}, {{0.0, 0.0}, {4.0, 4.0}, {0.0, 0.0}}},
                    torch::kFloat64);
  const auto counts = torch::tensor({{5.0, 1.0, 0.0}, {0.0, 9.0, 0.0}}, torch::kFloat64);
  const auto [global, present] = average_prototypes(prototypes, counts);
  EXPECT_TRUE(
      torch::equal(global, torch::tensor({{2.0, 0.0}, {2.0, 3.0}, {0.0, 0.0}}, torch::kFloat64)));
  EXPECT_TRUE(torch::equal(present, torch::tensor({1.0, 1.0, 0.0}, torch::kFloat64)));
}

TEST(FedProto, InferenceIsTheNearestPresentPrototype) {
  const auto prototypes = torch::tensor({{0.0, 0.0}, {10.0, 10.0}, {1.0, 1.0}}, torch::kFloat64);
  const auto features = torch::tensor({{0.9, 1.2}, {9.0, 9.5}, {-1.0, 0.0}}, torch::kFloat64);
  EXPECT_TRUE(torch::equal(
      nearest_prototype(features, prototypes, torch::tensor({1.0, 1.0, 1.0}, torch::kFloat64)),
      torch::tensor({2, 1, 0}, torch::kInt64)));
  // Without class 2's prototype the first sample is nearest class 0.
  EXPECT_TRUE(torch::equal(
      nearest_prototype(features, prototypes, torch::tensor({1.0, 1.0, 0.0}, torch::kFloat64)),
      torch::tensor({0, 1, 0}, torch::kInt64)));
  EXPECT_TRUE(
      torch::equal(nearest_prototype(features, prototypes, torch::zeros({3}, torch::kFloat64)),
                   torch::full({3}, -1, torch::kInt64)));
}

TEST(FedProto, SharesPrototypesNotModelsAndTheStateRestoresThem) {
  FedProto fedproto(FedProtoOptions{}, classifier_context());
  const auto first = fedproto.plan(testing::input_for(0, {0, 1}));
  EXPECT_EQ(first.start, (std::vector<int>{kLocalModel, kLocalModel}));
  EXPECT_DOUBLE_EQ(first.weights.abs().sum().item<double>(), 0.0);  // nothing is averaged
  EXPECT_TRUE(first.payload.empty());  // no prototypes before round 1's reports
  // Reports: 3 x 2 prototypes then 3 counts, per client.
  const auto payload =
      fedproto.receive_reports(0, {0, 1},
                               torch::tensor({{2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, 1.0, 0.0},
                                              {0.0, 0.0, 4.0, 4.0, 0.0, 0.0, 0.0, 9.0, 0.0}},
                                             torch::kFloat64));
  EXPECT_TRUE(torch::equal(payload.at("prototypes"),
                           torch::tensor({{2.0, 0.0}, {2.0, 3.0}, {0.0, 0.0}}, torch::kFloat64)));
  FedProto restored(FedProtoOptions{}, classifier_context());
  restored.restore(fedproto.state());
  EXPECT_TRUE(torch::equal(restored.plan(testing::input_for(1, {0, 1})).payload.at("present"),
                           torch::tensor({1.0, 1.0, 0.0}, torch::kFloat64)));
  auto regression = classifier_context();
  regression.classifier_with_head = false;
  EXPECT_THROW(FedProto(FedProtoOptions{}, regression), ConfigError);
}

// The client-batched regularised update, its prototypes and the prototype inference compute what
// one client at a time does: the CNN (d = 256), before the first prototypes and with some classes
// present; and the CIFAR CNN (batch norm, dropout) scaled down.
TEST(FedProto, BatchedClientsEqualOneAtATime) {
  const testing::BatchedCase cnn;  // the CNN, 60, 50 and 40 samples
  FedProtoOptions options;
  options.lambda = 0.5;
  const auto procedure =
      FedProto(options, testing::classifier_context(256)).client_side().procedure;
  auto settings = testing::sgd_settings();
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings, {}, true);
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings,
                                               testing::some_prototypes(256), true);
  AlgorithmState all_present = testing::some_prototypes(512);
  all_present["present"] = torch::ones({10}, torch::kFloat64);
  settings.batch_size = 2;
  testing::expect_batched_equals_one_at_a_time(
      *FedProto(options, testing::classifier_context(512)).client_side().procedure,
      testing::cifar_case(), settings, all_present, true);
}

}  // namespace
}  // namespace cflrun::algo
