#pragma once
/// @file
/// Synthetic mixed linear regression (CLoVE Sec. 4 and App. C.1.1; IFCA Sec. 6.1): cluster k's
/// clients draw x ~ N(0, I_d) and y = <theta*_k, x> + sigma * eps, eps ~ N(0, 1).

#include <cstdint>

#include <ATen/core/Generator.h>
#include <torch/types.h>

#include <cflrun/data/client_data.hpp>

namespace cflrun::data {

/// What to generate (`--dataset linreg`).
struct LinearRegressionSpec {
  int clusters = 5;                   ///< K optimal models.
  int clients_per_cluster = 5;        ///< m; clients are numbered cluster by cluster.
  std::int64_t train_samples = 1000;  ///< n training samples per client (App. C.1.1: 1 000).
  std::int64_t test_samples = 1000;   ///< test samples per client.
  std::int64_t dimension = 20;        ///< d (the official code's d = 20).
  double separation =
      1.0;  ///< Delta: every pairwise distance of optimal models is in [Delta, 5 Delta].
  double noise = 0.001;  ///< sigma, standard deviation of the label noise (IFCA's synthetic value).
  double model_std = 0.0;  ///< > 0: theta*_k ~ N(0, model_std^2 I_d) instead of the unit sphere
                           ///< (FedSoft's synthetic data: sqrt(10)).
  std::uint64_t data_seed = 1;  ///< seed of the optimal models and every client's samples.
};

/// The K optimal models theta*_k, [K, d] float32, each of unit norm, every pairwise Euclidean
/// distance in [Delta, min(5 Delta, 2)] (App. C.1.1). Drawn from the (data_seed, kSyntheticData, 0)
/// stream: for 3 Delta >= sqrt(2) uniformly on the sphere, otherwise around a uniform centre u as
/// normalize(u + s g_k), g_k ~ N(0, I_d / d), s = 3 Delta / sqrt(2); redrawn until every distance
/// fits. With model_std > 0 instead theta*_k ~ N(0, model_std^2 I_d) from the same stream,
/// separation unused (FedSoft's synthetic data, Sec. 5: its code draws weights with variance 10 in
/// d = 10).
/// @throws ConfigError if clusters, clients_per_cluster, sample counts or dimension are < 1,
///         separation is not in (0, 1.5], noise < 0 or model_std < 0 (naming the flag).
/// @throws DataError if 10 000 draws do not give a valid set (e.g. many clusters in few dimensions;
///         lower --separation or --clusters).
torch::Tensor optimal_models(const LinearRegressionSpec& spec);

/// n samples of one linear model: x ~ N(0, I_d) drawn first as one [n, d] block, then the noise
/// eps ~ N(0, 1) as one [n] block, both from `generator`; y = <theta, x> + noise * eps.
/// @param theta  [d] float32 optimal model.
/// @return       inputs [n, d] float32, targets [n] float32, contiguous.
ClientSamples linear_samples(const torch::Tensor& theta, std::int64_t n, double noise,
                             at::Generator& generator);

/// The clients' data: client c of cluster k = c / m draws its train and test samples from the
/// (data_seed, kSyntheticData, c + 1, split) stream; inputs [n, d] float32, targets [n] float32.
/// @throws as optimal_models.
ClientData linear_regression_data(const LinearRegressionSpec& spec);

}  // namespace cflrun::data
