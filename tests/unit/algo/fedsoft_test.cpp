#include <cflrun/algo/fedsoft.hpp>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

AlgorithmSettings fedsoft_settings(int clients, int clusters, int selection) {
  AlgorithmSettings s;
  s.name = "fedsoft";
  s.num_clients = clients;
  s.num_clusters = clusters;
  s.fedsoft_selection = selection;
  return s;
}

// Four clients: two mostly on center 0, two mostly on center 1 (a 10:90 mixture).
torch::Tensor mixed_importance() {
  return torch::tensor({{0.9, 0.1}, {0.9, 0.1}, {0.1, 0.9}, {0.1, 0.9}}, torch::kFloat64);
}

TEST(FedSoft, IsASoftClusteringAlgorithmThroughTheFactory) {
  const auto fedsoft = make_algorithm(fedsoft_settings(4, 2, 2));
  EXPECT_EQ(fedsoft->name(), "fedsoft");
  EXPECT_EQ(fedsoft->num_models(), 2);
  EXPECT_EQ(fedsoft->importance_interval(), 2);
  EXPECT_DOUBLE_EQ(fedsoft->proximal_weight(), 0.1);
  EXPECT_DOUBLE_EQ(fedsoft->importance_smoother(), 1e-4);
  EXPECT_FALSE(fedsoft->needs_loss_vectors(0));
  EXPECT_EQ(make_algorithm(fedsoft_settings(4, 2, 0))->importance_interval(), 2);
  EXPECT_EQ(make_algorithm(fedsoft_settings(4, 2, 0))->name(), "fedsoft");
  EXPECT_EQ(make_algorithm(fedsoft_settings(4, 2, 0))->contributions(0, mixed_importance(),
                                                                      torch::full({4}, 10.0, torch::kFloat64))
                .size(0), 2);
  EXPECT_THROW(make_algorithm(fedsoft_settings(4, 2, 0))->contributions(0, torch::ones({3, 2}, torch::kFloat64),
                                                                         torch::ones({3}, torch::kFloat64)),
               ShapeError);
  auto clove = fedsoft_settings(4, 2, 0);
  clove.name = "clove";
  EXPECT_THROW(make_algorithm(clove)->contributions(0, mixed_importance(), torch::ones({4})), ConfigError);
}

TEST(FedSoft, WithoutSelectionEveryClientContributesByEquationSix) {
  FedSoft fedsoft(fedsoft_settings(4, 2, 0));
  const auto v = fedsoft.contributions(0, mixed_importance(), torch::tensor({100.0, 300.0, 100.0, 100.0}, torch::kFloat64));
  // Center 0: 90, 270, 10, 10 over 380.
  EXPECT_NEAR(v[0][1].item<double>(), 270.0 / 380.0, 1e-15);
  EXPECT_NEAR(v[0][2].item<double>(), 10.0 / 380.0, 1e-15);
  EXPECT_NEAR(v.sum(1)[1].item<double>(), 1.0, 1e-15);
}

TEST(FedSoft, SelectionAveragesTheDrawnClientsEquallyAndFavoursImportantOnes) {
  FedSoft fedsoft(fedsoft_settings(4, 2, 1));
  const auto counts = torch::full({4}, 100.0, torch::kFloat64);
  int center0_from_first_pair = 0;
  for (int round = 0; round < 400; ++round) {
    const auto chosen = fedsoft.contributions(round, mixed_importance(), counts);
    EXPECT_DOUBLE_EQ(chosen.sum().item<double>(), 2.0);  // one client at weight 1 per center
    center0_from_first_pair += (chosen[0][0].item<double>() + chosen[0][1].item<double>()) > 0.0 ? 1 : 0;
  }
  EXPECT_NEAR(center0_from_first_pair / 400.0, 0.9, 0.05);
  // Deterministic per (seed, round).
  EXPECT_TRUE(torch::equal(fedsoft.contributions(7, mixed_importance(), counts),
                           FedSoft(fedsoft_settings(4, 2, 1)).contributions(7, mixed_importance(), counts)));
}

TEST(FedSoft, HardViewIsTheDominantCenter) {
  FedSoft fedsoft(fedsoft_settings(4, 2, 0));
  EXPECT_THROW(fedsoft.assign(0, {0, 1}, torch::Tensor()), ConfigError);
  fedsoft.contributions(0, mixed_importance(), torch::full({4}, 100.0, torch::kFloat64));
  EXPECT_EQ(fedsoft.assign(0, {0, 1, 2, 3}, torch::Tensor()), (std::vector<int>{0, 0, 1, 1}));
}

TEST(FedSoft, RejectsImpossibleSettings) {
  EXPECT_THROW(FedSoft(fedsoft_settings(4, 2, 5)), ConfigError);
  EXPECT_THROW(FedSoft(fedsoft_settings(4, 5, 2)), ConfigError);
  auto s = fedsoft_settings(4, 2, 2);
  s.fedsoft_interval = 0;
  EXPECT_THROW(FedSoft{s}, ConfigError);
  s = fedsoft_settings(4, 2, 2);
  s.fedsoft_smoother = 0.0;
  EXPECT_THROW(FedSoft{s}, ConfigError);
}

}  // namespace
}  // namespace cflrun::algo
