#include <cflrun/data/mixture.hpp>

#include <memory>
#include <set>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

MixtureSpec spec_of(MixturePattern pattern, int sources, int clients_per_source) {
  MixtureSpec spec;
  spec.pattern = pattern;
  spec.sources = sources;
  spec.clients_per_source = clients_per_source;
  spec.min_train_samples = 10;
  spec.max_train_samples = 20;
  spec.test_samples = 5;
  spec.holdout_samples = 8;
  return spec;
}

/// 250 train / 200 test 8x8 images; image i's pixel (0, 0) is i (its id) and the rest of its first
/// row is a ramp, so a rotation is visible; labels cycle 0..9.
std::shared_ptr<const ImageDataset> synthetic_images() {
  auto dataset = std::make_shared<ImageDataset>();
  const auto make = [](std::int64_t n) {
    auto images = torch::zeros({n, 1, 8, 8}, torch::kUInt8);
    images.select(2, 0).select(1, 0).copy_(
        torch::arange(8, torch::kUInt8).mul(20).unsqueeze(0).expand({n, 8}));
    images.select(2, 0).select(1, 0).select(1, 0).copy_(
        torch::arange(n).remainder(256).to(torch::kUInt8));
    return ImageSplit{images, torch::arange(n).remainder(10)};
  };
  dataset->train = make(250);
  dataset->test = make(200);
  dataset->num_classes = 10;
  return dataset;
}

TEST(MixturePartition, WeightsFollowThePatterns) {
  const auto w1090 = mixture_weights(spec_of(MixturePattern::k10To90, 2, 3));
  EXPECT_TRUE(torch::allclose(
      w1090, torch::tensor({{0.9, 0.1}, {0.9, 0.1}, {0.9, 0.1}, {0.1, 0.9}, {0.1, 0.9}, {0.1, 0.9}},
                           torch::kFloat64)));
  const auto w3070 = mixture_weights(spec_of(MixturePattern::k30To70, 2, 1));
  EXPECT_TRUE(torch::allclose(w3070, torch::tensor({{0.7, 0.3}, {0.3, 0.7}}, torch::kFloat64)));
  const auto linear = mixture_weights(spec_of(MixturePattern::kLinear, 2, 2));
  EXPECT_TRUE(
      torch::allclose(linear.select(1, 1), torch::tensor({0.0, 0.25, 0.5, 0.75}, torch::kFloat64)));
  auto spec = spec_of(MixturePattern::kRandom, 4, 5);
  const auto random = mixture_weights(spec);
  EXPECT_EQ(random.sizes(), (std::vector<std::int64_t>{20, 4}));
  EXPECT_TRUE(torch::allclose(random.sum(1), torch::ones({20}, torch::kFloat64)));
  EXPECT_TRUE(random.ge(0.0).all().item<bool>());
  EXPECT_TRUE(torch::equal(random, mixture_weights(spec)));
  spec.data_seed = 2;
  EXPECT_FALSE(torch::equal(random, mixture_weights(spec)));
  EXPECT_THROW(mixture_weights(spec_of(MixturePattern::k10To90, 3, 2)), ConfigError);
  EXPECT_THROW(parse_mixture_pattern("mixture_50_50"), ConfigError);
  EXPECT_TRUE(is_mixture_partition("mixture_random"));
  EXPECT_FALSE(is_mixture_partition("label_skew_1"));
}

TEST(MixturePartition, SourceCountsUseTheLargestRemainder) {
  EXPECT_EQ(source_counts(torch::tensor({0.1, 0.9}, torch::kFloat64), 15),
            (std::vector<std::int64_t>{2, 13}));
  EXPECT_EQ(source_counts(torch::tensor({1.0 / 3, 1.0 / 3, 1.0 / 3}, torch::kFloat64), 10),
            (std::vector<std::int64_t>{4, 3, 3}));
  EXPECT_EQ(source_counts(torch::tensor({0.3, 0.7}, torch::kFloat64), 100),
            (std::vector<std::int64_t>{30, 70}));
  const auto counts = train_sample_counts(spec_of(MixturePattern::kRandom, 3, 10));
  EXPECT_EQ(counts.size(), 30U);
  EXPECT_EQ(*std::min_element(counts.begin(), counts.end()) >= 10, true);
  EXPECT_EQ(*std::max_element(counts.begin(), counts.end()) <= 20, true);
  EXPECT_NE(*std::min_element(counts.begin(), counts.end()),
            *std::max_element(counts.begin(), counts.end()));
}

TEST(MixturePartition, RotationSourcesRotateTheirSamplesAndNeverReuseAPoint) {
  const auto dataset = synthetic_images();
  const auto spec = spec_of(MixturePattern::k10To90, 2, 3);
  const auto data = mixture_image_data(dataset, spec);
  EXPECT_EQ(data.true_clusters, (std::vector<int>{0, 0, 0, 1, 1, 1}));
  EXPECT_EQ(data.num_sources(), 2);
  const auto totals = train_sample_counts(spec);
  std::set<std::int64_t> seen[2];
  for (int c = 0; c < 6; ++c) {
    const auto train = data.samples(c, true);
    const auto counts = source_counts(data.mixture[c], totals[static_cast<std::size_t>(c)]);
    ASSERT_EQ(train.inputs.size(0), totals[static_cast<std::size_t>(c)]);
    // Unrotated images keep the ramp in row 0; a quarter turn moves it into column 0.
    const auto ramp = torch::arange(1, 8).mul(20).to(torch::kFloat32).div(255.0);
    for (std::int64_t i = 0; i < train.inputs.size(0); ++i) {
      const auto image = train.inputs[i][0];
      const bool source0 = i < counts[0];
      const auto row =
          source0 ? image[0].narrow(0, 1, 7) : image.select(1, 0).narrow(0, 0, 7).flip(0);
      EXPECT_TRUE(torch::allclose(row, ramp)) << "client " << c << " sample " << i;
      const auto id = std::lround(image[0][0].item<double>() * 255.0 * (source0 ? 1 : 0)) +
                      (source0 ? 0 : std::lround(image[7][0].item<double>() * 255.0));
      EXPECT_TRUE(seen[source0 ? 0 : 1].insert(id).second) << "point " << id << " reused";
    }
    EXPECT_EQ(data.samples(c, false).inputs.size(0), 5);
  }
  EXPECT_EQ(data.holdout(1).inputs.size(0), 8);
  EXPECT_TRUE(
      torch::equal(data.holdout(1).inputs, torch::rot90(data.holdout(1).inputs, 4, {2, 3})));
}

TEST(MixturePartition, LabelGroupSourcesHoldTheirGroupsClasses) {
  auto spec = spec_of(MixturePattern::k30To70, 2, 2);
  spec.source_kind = SourceKind::kLabelGroups;
  const auto data = mixture_image_data(synthetic_images(), spec);
  const auto totals = train_sample_counts(spec);
  for (int c = 0; c < 4; ++c) {
    const auto train = data.samples(c, true);
    const auto counts = source_counts(data.mixture[c], totals[static_cast<std::size_t>(c)]);
    const auto first = train.targets.narrow(0, 0, counts[0]);
    const auto second = train.targets.narrow(0, counts[0], counts[1]);
    EXPECT_TRUE(first.lt(5).all().item<bool>());
    EXPECT_TRUE(second.ge(5).all().item<bool>());
  }
  EXPECT_TRUE(data.holdout(0).targets.lt(5).all().item<bool>());
  EXPECT_TRUE(data.holdout(1).targets.ge(5).all().item<bool>());
}

TEST(MixturePartition, TooSmallPoolsAndTooManySourcesAreClearErrors) {
  auto spec = spec_of(MixturePattern::k10To90, 2, 50);
  spec.min_train_samples = spec.max_train_samples = 20;  // 100 clients x 20 > 250 images
  EXPECT_THROW(mixture_image_data(synthetic_images(), spec), DataError);
  auto many = spec_of(MixturePattern::kRandom, 5, 1);
  EXPECT_THROW(mixture_image_data(synthetic_images(), many), ConfigError);  // 5 rotations
  auto sizes = spec_of(MixturePattern::kRandom, 2, 1);
  sizes.min_train_samples = 30;
  EXPECT_THROW(train_sample_counts(sizes), ConfigError);
}

TEST(MixturePartition, LinearRegressionSamplesFollowTheirSourcesModel) {
  LinearRegressionSpec regression;
  regression.dimension = 5;
  regression.noise = 0.0;
  auto spec = spec_of(MixturePattern::k10To90, 2, 2);
  spec.min_train_samples = spec.max_train_samples = 50;
  const auto data = mixture_linear_regression_data(regression, spec);
  auto sources = regression;
  sources.clusters = 2;
  const auto models = optimal_models(sources);
  const auto train = data.samples(3, true);  // 10 % source 0, 90 % source 1
  const auto fits0 = (train.inputs.matmul(models[0]) - train.targets).abs().lt(1e-5);
  const auto fits1 = (train.inputs.matmul(models[1]) - train.targets).abs().lt(1e-5);
  EXPECT_EQ(fits0.sum().item<std::int64_t>(), 5);
  EXPECT_EQ(fits1.sum().item<std::int64_t>(), 45);
  const auto holdout = data.holdout(1);
  EXPECT_EQ(holdout.inputs.size(0), 8);
  EXPECT_TRUE(torch::allclose(holdout.inputs.matmul(models[1]), holdout.targets, 1e-5, 1e-5));
}

}  // namespace
}  // namespace cflrun::data
