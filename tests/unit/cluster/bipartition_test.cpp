#include <cflrun/cluster/bipartition.hpp>
#include <cflrun/core/error.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::cluster {
namespace {

/// |x_i - x_j| for points on a line.
torch::Tensor line_distances(const std::vector<double>& x) {
  const auto points = torch::tensor(x, torch::kFloat64);
  return (points.unsqueeze(1) - points.unsqueeze(0)).abs();
}

TEST(CompleteLinkageBipartition, MergesByTheLargestPairwiseDistance) {
  // 0, 1, 5, 6, 20: {0,1} and {5,6} merge at 1; their complete-linkage distance is 6 < 15 (to 20),
  // so the last merge joins 20: the two groups are {0, 1, 5, 6} and {20}.
  EXPECT_EQ(complete_linkage_bipartition(line_distances({0, 1, 5, 6, 20})),
            (std::vector<int>{0, 0, 0, 0, 1}));
  // 0, 3, 6, 7, 12: {6,7} at 1, {0,3} at 3; then complete linkage joins {6,7} with 12 (largest
  // distance 6) rather than with {0,3} (largest distance 7), where single linkage (3 < 5) would
  // not.
  EXPECT_EQ(complete_linkage_bipartition(line_distances({0, 3, 6, 7, 12})),
            (std::vector<int>{0, 0, 1, 1, 1}));
  EXPECT_EQ(complete_linkage_bipartition(line_distances({4, 2})), (std::vector<int>{0, 1}));
}

TEST(CompleteLinkageBipartition, SplitsOpposedCosineGroups) {
  // CFL: -cosine similarity of updates; clients 0, 2, 4 point one way, 1, 3 the opposite way.
  const auto updates = torch::tensor(
      {{1.0, 0.1}, {-1.0, 0.0}, {0.9, -0.1}, {-1.1, 0.2}, {1.0, 0.0}}, torch::kFloat64);
  const auto unit = updates / updates.norm(2, 1, true);
  EXPECT_EQ(complete_linkage_bipartition(-unit.matmul(unit.t())),
            (std::vector<int>{0, 1, 0, 1, 0}));
}

TEST(CompleteLinkageBipartition, RejectsBadInput) {
  EXPECT_THROW(complete_linkage_bipartition(torch::zeros({1, 1}, torch::kFloat64)), ShapeError);
  EXPECT_THROW(complete_linkage_bipartition(torch::zeros({2, 3}, torch::kFloat64)), ShapeError);
  auto bad = torch::zeros({3, 3}, torch::kFloat64);
  bad[0][1] = std::numeric_limits<double>::quiet_NaN();
  EXPECT_THROW(complete_linkage_bipartition(bad), DataError);
}

}  // namespace
}  // namespace cflrun::cluster
