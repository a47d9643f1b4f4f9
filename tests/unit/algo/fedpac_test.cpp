#include <cflrun/algo/fedpac.hpp>
#include <cflrun/algo/simplex_qp.hpp>

#include "batched_procedure_check.hpp"
#include "round_for_tests.hpp"

#include <algorithm>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

TEST(SimplexQp, ReachesTheKnownOptimaOfSmallPrograms) {
  // Diagonal P: minimise sum_j l_j a_j^2 on the simplex -> a_j proportional to 1 / l_j.
  const auto diagonal =
      minimise_on_simplex(torch::diag(torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64)));
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

TEST(SimplexQp, ActiveSetMatchesSlsqpOnRandomPrograms) {
  // P = diag(v) + B B^T (positive definite); the active-set minimiser equals SLSQP's to its
  // tolerance.
  torch::manual_seed(5);
  for (const std::int64_t m : {1, 2, 7, 30}) {
    const auto b = torch::randn({m, 4}, torch::kFloat64);
    const auto p = torch::diag(torch::rand({m}, torch::kFloat64) * 0.1 + 0.01) + b.matmul(b.t());
    const auto fast = torch::tensor(minimise_on_simplex(p), torch::kFloat64);
    const auto reference = torch::tensor(minimise_on_simplex_slsqp(p), torch::kFloat64);
    EXPECT_TRUE(torch::allclose(fast, reference, 0.0, 1e-6)) << "m = " << m << "\n"
                                                             << fast - reference;
    EXPECT_TRUE(fast.ge(0.0).all().item<bool>());
    EXPECT_NEAR(fast.sum().item<double>(), 1.0, 1e-12);
  }
  // A singular P (a zero row): the active-set method stops at a non-definite block and SLSQP
  // answers.
  const auto singular =
      minimise_on_simplex(torch::tensor({{0.0, 0.0}, {0.0, 1.0}}, torch::kFloat64));
  EXPECT_NEAR(singular[0], 1.0, 1e-7);
  EXPECT_NEAR(singular[1], 0.0, 1e-7);
}

/// Client i's weights as PFLlib builds them: P_i = diag(V) + A_i A_i^T from the rows h_i - h_j,
/// solved by SLSQP, weights <= 1e-3 set to 0 (the fast path skips A_i and the eigenvalue test).
torch::Tensor straightforward_weights(std::int64_t i, const torch::Tensor& v,
                                      const torch::Tensor& references) {
  const auto m = references.size(0);
  const auto a = (references[i].unsqueeze(0) - references).reshape({m, -1});
  const auto p = torch::diag(v) + a.matmul(a.t());
  EXPECT_GE(torch::linalg_eigvalsh(p).min().item<double>(), 0.0);  // PFLlib's repair does not apply
  auto weights = torch::tensor(minimise_on_simplex_slsqp(p), torch::kFloat64);
  return weights.masked_fill(weights.le(1e-3), 0.0);
}

TEST(FedPac, FastCombinationWeightsEqualTheStraightforwardConstruction) {
  // m = 30 clients in 3 groups of similar references (C = 4, d = 8), as FedPAC's statistics are.
  torch::manual_seed(11);
  const std::int64_t m = 30;
  const auto centres = torch::rand({3, 4, 8}, torch::kFloat64);
  const auto references = centres.index_select(0, torch::arange(m) % 3) +
                          0.05 * torch::randn({m, 4, 8}, torch::kFloat64);
  const auto v = torch::rand({m}, torch::kFloat64) * 0.05 + 0.01;
  const auto all = all_combination_weights(v, references);
  ASSERT_EQ(all.sizes(), (std::vector<std::int64_t>{m, m}));
  EXPECT_GT(all.gt(0.0).sum(/*dim=*/1).gt(1).sum().item<std::int64_t>(),
            m / 2);  // most combine several heads
  for (std::int64_t i = 0; i < m; ++i) {
    const auto expected = straightforward_weights(i, v, references);
    EXPECT_TRUE(torch::allclose(all[i], expected, 0.0, 1e-6)) << "client " << i << "\n"
                                                              << all[i] - expected;
    EXPECT_TRUE(torch::equal(combination_weights(static_cast<int>(i), v, references), all[i]));
    EXPECT_TRUE(all[i].ge(0.0).all().item<bool>());
    EXPECT_LE(all[i].sum().item<double>(),
              1.0 + 1e-12);  // the weights <= 1e-3 are dropped, not renormalised
    EXPECT_GT(all[i].sum().item<double>(), 0.95);
  }
  // A client with V = 0 takes PFLlib's path (eigenvalue test and repair); its weights stay on the
  // simplex.
  auto degenerate = v.clone();
  degenerate[0] = 0.0;
  const auto weights = combination_weights(0, degenerate, references);
  EXPECT_TRUE(weights.ge(0.0).all().item<bool>());
  EXPECT_LE(weights.sum().item<double>(), 1.0 + 1e-9);
}

TEST(FedPac, CombinationWeightsFavourLowVarianceAndSimilarClients) {
  // Equal references (D = 0): the weights are 1 / V normalised.
  const auto same = torch::zeros({3, 2, 2}, torch::kFloat64);
  const auto equal = combination_weights(0, torch::tensor({1.0, 2.0, 4.0}, torch::kFloat64), same);
  EXPECT_TRUE(torch::allclose(equal, torch::tensor({4.0 / 7, 2.0 / 7, 1.0 / 7}, torch::kFloat64),
                              0.0, 1e-7))
      << equal;
  // Client 1's reference is at squared distance 3 from client 0's: P_0 = diag(V_0, V_1 + 3) =
  // diag(1, 4), so client 0's weights are (4/5, 1/5); client 1 sees the same distance the other
  // way.
  auto references = torch::zeros({2, 2, 2}, torch::kFloat64);
  references[1][0][0] = 1.0;
  references[1][1][1] = std::sqrt(2.0);
  const auto v = torch::tensor({1.0, 1.0}, torch::kFloat64);
  EXPECT_TRUE(torch::allclose(combination_weights(0, v, references),
                              torch::tensor({0.8, 0.2}, torch::kFloat64), 0.0, 1e-7));
  EXPECT_TRUE(torch::allclose(combination_weights(1, v, references),
                              torch::tensor({0.2, 0.8}, torch::kFloat64), 0.0, 1e-7));
  // A far-away client gets a weight below 1e-3, which is set to 0.
  references[1][0][0] = 100.0;
  EXPECT_EQ(combination_weights(0, v, references)[1].item<double>(), 0.0);
}

TEST(FedPac, FeatureStatisticsAsByHand) {
  // Features (1, 0), (3, 0) of class 0 and (0, 2) of class 1: p = (2/3, 1/3), mu_0 = (2, 0),
  // mu_1 = (0, 2); h = p_k mu_k; V = [2/3 (1 + 9)/2 - 4/9 4 + 1/3 4/1 - 1/9 4] / 3 = 22/27.
  const auto [v, h] =
      feature_statistics(torch::tensor({{1.0, 0.0}, {3.0, 0.0}, {0.0, 2.0}}, torch::kFloat64),
                         torch::tensor({0, 0, 1}, torch::kInt64), 3);
  EXPECT_NEAR(v.item<double>(), 22.0 / 27.0, 1e-12);
  EXPECT_TRUE(torch::allclose(
      h, torch::tensor({{4.0 / 3, 0.0}, {0.0, 2.0 / 3}, {0.0, 0.0}}, torch::kFloat64)));
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
  const auto statistics =
      torch::tensor({{1.0, 0.0, 0.0, 0.0, 0.0}, {3.0, 0.0, 0.0, 0.0, 0.0}}, torch::kFloat64);
  const auto plan =
      fedpac.plan(testing::input_for(0, {0, 2}, QueryKind::kClientStatistics, statistics));
  EXPECT_EQ(plan.start, (std::vector<int>{0, kNoUpdate, 2}));  // each trains its own slot
  EXPECT_TRUE(torch::equal(
      plan.weights, torch::tensor({{100.0, 0.0, 100.0}, {100.0, 0.0, 100.0}, {100.0, 0.0, 100.0}},
                                  torch::kFloat64)));
  EXPECT_TRUE(torch::allclose(
      plan.head_weights,
      torch::tensor({{0.75, 0.0, 0.25}, {0.0, 0.0, 0.0}, {0.75, 0.0, 0.25}}, torch::kFloat64), 0.0,
      1e-7))
      << plan.head_weights;
  auto without_head = context;
  without_head.classifier_with_head = false;
  EXPECT_THROW(FedPac(FedPacOptions{}, without_head), ConfigError);
}

TEST(FedPac, PflibHeadPairingMatchesAHandComputedCase) {
  // Correct weights W (row i: participant i's weights on the heads of 0, 1, 2), selection order
  // S = (2, 0, 1), upload order U = (1, 2, 0). PFLlib's i-th program is S_i's, and its weights go,
  // on the heads in U's order, to client U_i: result[U_i, U_j] = W[S_i, S_j].
  //   i = 0: client 1 takes W[2]: result[1][1] = W22 = 0.3, result[1][2] = W20 = 0.6, result[1][0]
  //   = W21 = 0.1 i = 1: client 2 takes W[0]: result[2][1] = W02 = 0.2, result[2][2] = W00 = 0.5,
  //   result[2][0] = W01 = 0.3 i = 2: client 0 takes W[1]: result[0][1] = W12 = 0.05, result[0][2]
  //   = W10 = 0.25, result[0][0] = W11 = 0.7
  // Each client's own head gets another client's self-weight (0.7, 0.3, 0.5 instead of 0.5, 0.7,
  // 0.3).
  const auto weights =
      torch::tensor({{0.5, 0.3, 0.2}, {0.25, 0.7, 0.05}, {0.6, 0.1, 0.3}}, torch::kFloat64);
  const auto paired = pflib_head_pairing(weights, torch::tensor({2, 0, 1}, torch::kInt64),
                                         torch::tensor({1, 2, 0}, torch::kInt64));
  const auto expected =
      torch::tensor({{0.7, 0.05, 0.25}, {0.1, 0.3, 0.6}, {0.3, 0.2, 0.5}}, torch::kFloat64);
  EXPECT_TRUE(torch::equal(paired, expected)) << paired;
  // Equal orders pair correctly.
  const auto same = torch::tensor({2, 0, 1}, torch::kInt64);
  EXPECT_TRUE(torch::equal(pflib_head_pairing(weights, same, same), weights));
  EXPECT_THROW(pflib_head_pairing(weights, same, torch::tensor({0, 1}, torch::kInt64)), ShapeError);
}

/// The plan under --fedpac-head-pairing pflib: the paper's head weights with rows and columns
/// permuted alike (result[r, h] = paper[pi(r), pi(h)], pi = S U^-1), the same in every call of a
/// round.
TEST(FedPac, PflibPairingPlanPermutesThePapersHeadWeights) {
  auto context = testing::context_for(3, 1);
  context.num_classes = 2;
  context.feature_size = 2;
  context.classifier_with_head = true;
  // V = 1, 2, 4 and distinct references: three different rows of weights.
  const auto statistics = torch::tensor(
      {{1.0, 1.0, 0.0, 0.0, 0.0}, {2.0, 0.0, 1.0, 0.0, 0.0}, {4.0, 0.0, 0.0, 1.0, 0.5}},
      torch::kFloat64);
  const auto input = testing::input_for(3, {0, 1, 2}, QueryKind::kClientStatistics, statistics);
  const auto paper = FedPac(FedPacOptions{}, context).plan(input).head_weights;
  FedPacOptions options;
  options.head_pairing = HeadPairing::kPflib;
  FedPac fedpac(options, context);
  const auto pflib = fedpac.plan(input).head_weights;
  EXPECT_TRUE(torch::equal(fedpac.plan(input).head_weights, pflib));
  int conjugates = 0;
  std::vector<std::int64_t> pi{0, 1, 2};
  do {
    const auto p = torch::tensor(pi, torch::kInt64);
    conjugates += torch::equal(paper.index({p.unsqueeze(1), p.unsqueeze(0)}), pflib) ? 1 : 0;
  } while (std::next_permutation(pi.begin(), pi.end()));
  EXPECT_GE(conjugates, 1) << paper << "\n" << pflib;
}

// The client-batched head and body phases and the reported class means compute what one client at
// a time does: the CNN (d = 256) with the global prototypes aligning some classes, and the CIFAR
// CNN (batch norm, dropout) scaled down.
TEST(FedPac, BatchedClientsEqualOneAtATime) {
  const testing::BatchedCase cnn;  // the CNN, 60, 50 and 40 samples
  auto context = testing::classifier_context(256);
  const auto procedure = FedPac(FedPacOptions{}, context).client_side().procedure;
  auto settings = testing::sgd_settings();
  settings.local_epochs = 2;
  settings.weight_decay = 1e-3;
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings,
                                               testing::some_prototypes(256), false);
  settings.solver = local::Solver::kAdam;
  settings.learning_rate = 1e-3;
  testing::expect_batched_equals_one_at_a_time(*procedure, cnn, settings, {}, false);
  context.feature_size = 512;
  settings.batch_size = 2;
  testing::expect_batched_equals_one_at_a_time(
      *FedPac(FedPacOptions{}, context).client_side().procedure, testing::cifar_case(), settings,
      {}, false);
}

}  // namespace
}  // namespace cflrun::algo
