#include <cflrun/model/objective.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::model {
namespace {

TEST(Objective, ClassificationIsPerSampleCrossEntropy) {
  const auto logits = torch::tensor({{0.0, 0.0}, {std::log(3.0), 0.0}}, torch::kFloat32);
  const auto targets = torch::tensor({0, 0}, torch::kLong);
  const auto losses = per_sample_loss(Objective::kClassification, logits, torch::Tensor(), targets);
  // -log(1/2) and -log(3/4).
  EXPECT_NEAR(losses[0].item<double>(), std::log(2.0), 1e-6);
  EXPECT_NEAR(losses[1].item<double>(), -std::log(0.75), 1e-6);
  EXPECT_NEAR(
      mean_loss(Objective::kClassification, logits, torch::Tensor(), targets).item<double>(),
      (std::log(2.0) - std::log(0.75)) / 2, 1e-6);
  EXPECT_TRUE(has_accuracy(Objective::kClassification));
}

TEST(Objective, RegressionIsSquaredError) {
  const auto predictions = torch::tensor({{1.0F}, {-2.0F}});
  const auto targets = torch::tensor({0.5F, 1.0F});
  const auto losses =
      per_sample_loss(Objective::kRegression, predictions, torch::Tensor(), targets);
  EXPECT_FLOAT_EQ(losses[0].item<float>(), 0.25F);
  EXPECT_FLOAT_EQ(losses[1].item<float>(), 9.0F);
  EXPECT_FALSE(has_accuracy(Objective::kRegression));
}

TEST(Objective, ReconstructionIsMeanSquaredErrorPerSampleOverFlattenedInputs) {
  const auto inputs = torch::zeros({2, 1, 2, 2});
  auto outputs = torch::zeros({2, 4});
  outputs[1] = torch::tensor({1.0F, 1.0F, 0.0F, 2.0F});
  const auto losses = per_sample_loss(Objective::kReconstruction, outputs, inputs, torch::Tensor());
  EXPECT_FLOAT_EQ(losses[0].item<float>(), 0.0F);
  EXPECT_FLOAT_EQ(losses[1].item<float>(), 1.5F);  // (1 + 1 + 0 + 4) / 4
  EXPECT_THROW(
      per_sample_loss(Objective::kReconstruction, torch::zeros({2, 3}), inputs, torch::Tensor()),
      ShapeError);
  EXPECT_EQ(objective_name(Objective::kReconstruction), "reconstruction");
}

TEST(Objective, MismatchedBatchSizesThrowShapeError) {
  EXPECT_THROW(per_sample_loss(Objective::kClassification, torch::zeros({3, 10}), torch::Tensor(),
                               torch::zeros({2}, torch::kLong)),
               ShapeError);
}

}  // namespace
}  // namespace cflrun::model
