#include <cflrun/run/clients/stacked_samples.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::run {
namespace {

/// Five clients; client c has c + 1 training and 1 test sample of shape {2}, every input entry
/// 100 c + its row (10 + c in the test split), label c.
data::ClientData five_clients() {
  data::ClientData data;
  data.sample_shape = {2};
  data.num_classes = 5;
  data.true_clusters = {0, 0, 1, 1, 1};
  data.samples = [](int c, bool train) {
    const std::int64_t n = train ? c + 1 : 1;
    const auto rows = torch::arange(n, torch::kFloat32).unsqueeze(1).expand({n, 2});
    return data::ClientSamples{(train ? rows : rows + 10) + 100.0 * c,
                               torch::full({n}, c, torch::kLong)};
  };
  return data;
}

std::vector<std::int64_t> values(const torch::Tensor& t) {
  const auto flat = t.to(torch::kLong).contiguous();
  return {flat.data_ptr<std::int64_t>(), flat.data_ptr<std::int64_t>() + flat.numel()};
}

TEST(StackedSamples, StacksClientsWithOwnersOffsetsAndViews) {
  const StackedSamples train(five_clients(), 1, 4, /*train=*/true, torch::kCPU);  // clients 1-3
  EXPECT_EQ(train.counts(), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(train.offset(2), 5);
  EXPECT_EQ(train.inputs().sizes(), (std::vector<std::int64_t>{9, 2}));
  EXPECT_EQ(values(train.owner()), (std::vector<std::int64_t>{0, 0, 1, 1, 1, 2, 2, 2, 2}));
  EXPECT_EQ(values(train.targets_of(1)), (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(values(train.inputs_of(2).select(1, 0)),
            (std::vector<std::int64_t>{300, 301, 302, 303}));
  EXPECT_EQ(train.inputs_of(2).data_ptr(), train.inputs()[5].data_ptr());  // a view, not a copy
  const StackedSamples test(five_clients(), 1, 4, /*train=*/false, torch::kCPU);
  EXPECT_EQ(values(test.inputs().select(1, 1)), (std::vector<std::int64_t>{110, 210, 310}));
}

TEST(StackedSamples, RowsOfSomeOrAllClients) {
  const StackedSamples train(five_clients(), 1, 4, /*train=*/true, torch::kCPU);
  EXPECT_EQ(values(train.rows({0, 2})), (std::vector<std::int64_t>{0, 1, 5, 6, 7, 8}));
  EXPECT_EQ(values(train.rows({1})), (std::vector<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(values(train.rows({0, 1, 2})), (std::vector<std::int64_t>{0, 1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(train.rows({}).numel(), 0);
}

TEST(StackedSamples, NoClientsGiveEmptyTensorsOfTheSampleShape) {
  const StackedSamples none(five_clients(), 2, 2, /*train=*/true, torch::kCPU);
  EXPECT_TRUE(none.counts().empty());
  EXPECT_EQ(none.inputs().sizes(), (std::vector<std::int64_t>{0, 2}));
  EXPECT_EQ(none.targets().scalar_type(), torch::kLong);
  EXPECT_EQ(none.owner().numel(), 0);
  EXPECT_EQ(none.rows({}).numel(), 0);
}

}  // namespace
}  // namespace cflrun::run
