#include <cflrun/data/linear_regression.hpp>

#include <cmath>
#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::data {
namespace {

constexpr int kMaxDraws = 10000;
constexpr double kMaxSeparation =
    1.5;  // unit vectors are at most 2 apart; [Delta, 5 Delta] needs slack

void require_at_least_one(std::int64_t value, const char* flag) {
  if (value < 1) {
    throw ConfigError(std::string(flag) + " must be at least 1 for --dataset linreg, but got " +
                      std::to_string(value));
  }
}

void check_spec(const LinearRegressionSpec& spec) {
  require_at_least_one(spec.clusters, "--clusters");
  require_at_least_one(spec.clients_per_cluster, "--clients-per-cluster");
  require_at_least_one(spec.train_samples, "--train-samples");
  require_at_least_one(spec.test_samples, "--test-samples");
  require_at_least_one(spec.dimension, "--dimension");
  if (!(spec.separation > 0.0 && spec.separation <= kMaxSeparation)) {
    throw ConfigError(
        "--separation (Delta) must be in (0, 1.5] (optimal models lie on the unit sphere), but "
        "got " +
        std::to_string(spec.separation));
  }
  if (!(spec.model_std >= 0.0)) {
    throw ConfigError("--model-std must be >= 0 (0 = optimal models on the unit sphere), but got " +
                      std::to_string(spec.model_std));
  }
  if (!(spec.noise >= 0.0)) {
    throw ConfigError("--noise (sigma) must be >= 0, but got " + std::to_string(spec.noise));
  }
}

torch::Tensor unit_rows(const torch::Tensor& rows) {
  return rows / rows.norm(2, /*dim=*/1, /*keepdim=*/true);
}

/// One candidate set of K unit vectors, [K, d] float64.
torch::Tensor draw_candidates(const LinearRegressionSpec& spec, at::Generator& generator) {
  const auto options = torch::TensorOptions().dtype(torch::kFloat64);
  const double spread = 3.0 * spec.separation / std::sqrt(2.0);
  if (spread >= std::sqrt(2.0)) {
    return unit_rows(torch::randn({spec.clusters, spec.dimension}, generator, options));
  }
  const auto centre = unit_rows(torch::randn({1, spec.dimension}, generator, options));
  const auto offsets = torch::randn({spec.clusters, spec.dimension}, generator, options) /
                       std::sqrt(static_cast<double>(spec.dimension));
  return unit_rows(centre + spread * offsets);
}

bool distances_fit(const torch::Tensor& models, double separation) {
  if (models.size(0) < 2) {
    return true;
  }
  const auto distances = torch::pdist(models);
  const double lowest = distances.min().item<double>();
  const double highest = distances.max().item<double>();
  return lowest >= separation && highest <= std::min(5.0 * separation, 2.0);
}

}  // namespace

torch::Tensor optimal_models(const LinearRegressionSpec& spec) {
  check_spec(spec);
  auto generator = core::make_torch_generator(spec.data_seed, core::Purpose::kSyntheticData, 0);
  if (spec.model_std > 0.0) {
    return (spec.model_std *
            torch::randn({spec.clusters, spec.dimension}, generator, torch::kFloat64))
        .to(torch::kFloat32);
  }
  for (int draw = 0; draw < kMaxDraws; ++draw) {
    const auto models = draw_candidates(spec, generator);
    if (distances_fit(models, spec.separation)) {
      return models.to(torch::kFloat32);
    }
  }
  throw DataError("linreg: no " + std::to_string(spec.clusters) + " unit vectors in " +
                  std::to_string(spec.dimension) +
                  " dimensions with pairwise distances in [Delta, 5 Delta] for " + "--separation " +
                  std::to_string(spec.separation) + " after " + std::to_string(kMaxDraws) +
                  " draws; lower --separation or --clusters, or raise --dimension");
}

ClientSamples linear_samples(const torch::Tensor& theta, std::int64_t n, double noise,
                             at::Generator& generator) {
  auto inputs = torch::randn({n, theta.size(0)}, generator, torch::kFloat32);
  auto eps = torch::randn({n}, generator, torch::kFloat32) * noise;
  auto targets = inputs.matmul(theta) + eps;
  return ClientSamples{inputs.contiguous(), targets.contiguous()};
}

ClientData linear_regression_data(const LinearRegressionSpec& spec) {
  const auto models = optimal_models(spec);
  ClientData data;
  data.sample_shape = {spec.dimension};
  data.num_classes = 0;
  for (int k = 0; k < spec.clusters; ++k) {
    data.true_clusters.insert(data.true_clusters.end(),
                              static_cast<std::size_t>(spec.clients_per_cluster), k);
  }
  const auto clusters = data.true_clusters;
  data.samples = [spec, models, clusters](int client, bool train) {
    auto generator =
        core::make_torch_generator(spec.data_seed, core::Purpose::kSyntheticData,
                                   static_cast<std::uint64_t>(client) + 1, train ? 0 : 1);
    const auto n = train ? spec.train_samples : spec.test_samples;
    return linear_samples(models[clusters.at(static_cast<std::size_t>(client))], n, spec.noise,
                          generator);
  };
  return data;
}

}  // namespace cflrun::data
