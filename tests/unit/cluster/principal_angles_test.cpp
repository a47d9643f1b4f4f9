#include <cflrun/cluster/principal_angles.hpp>

#include <cmath>

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>

namespace cflrun::cluster {
namespace {

/// n samples in d = 6 dimensions spanning only the coordinate axes `axes`.
torch::Tensor samples_on_axes(std::vector<std::int64_t> axes, std::int64_t n, std::uint64_t seed) {
  torch::manual_seed(seed);
  auto data = torch::zeros({n, 6}, torch::kFloat64);
  for (const auto axis : axes) {
    data.select(1, axis).copy_(torch::randn({n}, torch::kFloat64));
  }
  return data;
}

TEST(PrincipalAngles, SignatureIsAnOrthonormalBasisOfTheDataSubspace) {
  const auto u = data_signature(samples_on_axes({0, 1}, 50, 1), 2);
  ASSERT_EQ(u.sizes(), (std::vector<std::int64_t>{6, 2}));
  EXPECT_TRUE(
      torch::allclose(u.transpose(0, 1).matmul(u), torch::eye(2, torch::kFloat64), 0, 1e-10));
  EXPECT_LT(u.narrow(0, 2, 4).abs().max().item<double>(), 1e-10);  // nothing outside axes 0 and 1
  EXPECT_THROW(data_signature(samples_on_axes({0}, 5, 1), 6), ConfigError);
}

TEST(PrincipalAngles, ProximityIsZeroForTheSameSubspaceAndNinetyForOrthogonalOnes) {
  const auto a = data_signature(samples_on_axes({0, 1}, 40, 1), 2);
  const auto b = data_signature(samples_on_axes({0, 1}, 40, 2), 2);  // same span, other samples
  const auto c = data_signature(samples_on_axes({2, 3}, 40, 3), 2);
  const auto d = data_signature(samples_on_axes({1, 2}, 40, 4), 2);  // shares axis 1 with a
  const auto signatures = torch::stack({a, b, c, d});
  const auto smallest = proximity_matrix(signatures, Proximity::kSmallestAngle);
  EXPECT_NEAR(smallest[0][1].item<double>(), 0.0, 1e-5);
  EXPECT_NEAR(smallest[0][2].item<double>(), 90.0, 1e-6);
  EXPECT_NEAR(smallest[0][3].item<double>(), 0.0, 1e-5);  // Eq. 2 sees only the shared direction
  const auto sum = proximity_matrix(signatures, Proximity::kSumOfAngles);
  EXPECT_NEAR(sum[0][3].item<double>(), 90.0, 1e-5);  // Eq. 3: 0 + 90 degrees
  EXPECT_NEAR(sum[0][2].item<double>(), 180.0, 1e-6);
  EXPECT_TRUE(torch::allclose(smallest, smallest.transpose(0, 1)));
}

TEST(PrincipalAngles, HierarchicalClusteringMergesWhileWithinBeta) {
  // Clients 0, 1, 2 within 2 degrees of each other; 3 and 4 within 1; the groups 50 apart.
  const auto a = torch::tensor({{0.0, 1.0, 2.0, 50.0, 50.0},
                                {1.0, 0.0, 1.5, 50.0, 50.0},
                                {2.0, 1.5, 0.0, 50.0, 50.0},
                                {50.0, 50.0, 50.0, 0.0, 1.0},
                                {50.0, 50.0, 50.0, 1.0, 0.0}},
                               torch::kFloat64);
  EXPECT_EQ(hierarchical_clustering(a, 3.0), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(hierarchical_clustering(a, 0.5), (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(hierarchical_clustering(a, 60.0), (std::vector<int>{0, 0, 0, 0, 0}));
  // A fixed number of clusters ignores beta. The closest pairs (1.0) merge first, {0, 1} then
  // {3, 4}; the merged row of {0, 1} is the mean (2 + 1.5) / 2 = 1.75 to client 2, so three
  // clusters are {0, 1}, {2}, {3, 4} and two clusters {0, 1, 2}, {3, 4}.
  EXPECT_EQ(hierarchical_clustering(a, 0.0, 2), (std::vector<int>{0, 0, 0, 1, 1}));
  EXPECT_EQ(hierarchical_clustering(a, 0.0, 3), (std::vector<int>{0, 0, 1, 2, 2}));
  EXPECT_THROW(hierarchical_clustering(a, 1.0, 6), ConfigError);
}

}  // namespace
TEST(PrincipalAngles, PerLabelSignatureStacksEachLabelsVectorsAndLeavesAbsentLabelsZero) {
  // Label 0 on axes {0, 1}, label 2 on axes {3, 4}; label 1 absent (3 classes, p = 2).
  const auto inputs = torch::cat({samples_on_axes({0, 1}, 30, 1), samples_on_axes({3, 4}, 30, 2)});
  const auto labels =
      torch::cat({torch::zeros({30}, torch::kInt64), torch::full({30}, 2, torch::kInt64)});
  const auto u = per_label_data_signature(inputs, labels, 2, 3);
  ASSERT_EQ(u.sizes(), (std::vector<std::int64_t>{6, 6}));
  const auto label0 = u.narrow(1, 0, 2);
  const auto label2 = u.narrow(1, 4, 2);
  EXPECT_TRUE(torch::allclose(label0.transpose(0, 1).matmul(label0), torch::eye(2, torch::kFloat64),
                              0, 1e-10));
  EXPECT_LT(label0.narrow(0, 2, 4).abs().max().item<double>(),
            1e-10);  // label 0 spans axes 0, 1 only
  EXPECT_LT(label2.narrow(0, 0, 3).abs().max().item<double>(),
            1e-10);                                              // label 2 spans axes 3, 4 only
  EXPECT_EQ(u.narrow(1, 2, 2).abs().max().item<double>(), 0.0);  // label 1: zero columns
  EXPECT_THROW(per_label_data_signature(inputs, labels, 0, 3), ConfigError);
  EXPECT_THROW(per_label_data_signature(inputs, labels, 2, 2),
               ShapeError);  // label 2 outside [0, 2)
}

TEST(PrincipalAngles, EntrywiseProximityIsTheSmallestAngleBetweenSignatureColumns) {
  // The official PACFL code's A[i, j] = min over entries of arccos(U_i^T U_j), in degrees.
  const auto e = [](std::int64_t axis) { return torch::eye(6, torch::kFloat64).select(1, axis); };
  const auto a = torch::stack({e(0), e(1)}, 1);
  const auto b = torch::stack({e(1), e(2)}, 1);                            // shares e1 with a
  const auto c = torch::stack({(e(3) + e(4)) / std::sqrt(2.0), e(5)}, 1);  // orthogonal to a
  const auto d =
      torch::stack({(e(0) + e(3)) / std::sqrt(2.0), torch::zeros({6}, torch::kFloat64)}, 1);
  const auto entrywise =
      proximity_matrix(torch::stack({a, b, c, d}), Proximity::kSmallestEntrywiseAngle);
  EXPECT_NEAR(entrywise[0][1].item<double>(), 0.0, 1e-6);
  EXPECT_NEAR(entrywise[0][2].item<double>(), 90.0, 1e-6);
  EXPECT_NEAR(entrywise[0][3].item<double>(), 45.0,
              1e-6);  // e0 vs (e0 + e3)/sqrt 2; zero column: 90
  EXPECT_NEAR(entrywise[2][3].item<double>(), 60.0, 1e-6);  // (e3+e4)/sqrt 2 . (e0+e3)/sqrt 2 = 1/2
  EXPECT_TRUE(torch::allclose(entrywise, entrywise.transpose(0, 1)));
}

}  // namespace cflrun::cluster
