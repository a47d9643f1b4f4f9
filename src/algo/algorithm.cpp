#include <cflrun/algo/algorithm.hpp>

#include <algorithm>
#include <cmath>
#include <map>

#include <torch/torch.h>

#include <cflrun/algo/clove.hpp>
#include <cflrun/algo/fedavg.hpp>
#include <cflrun/algo/fedsoft.hpp>
#include <cflrun/algo/ifca.hpp>
#include <cflrun/algo/local_only.hpp>
#include <cflrun/algo/pacfl.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {
namespace {

/// Renumbers groups so that the group holding the smallest client id gets 0, the next 1, ...
std::vector<int> renumber_by_smallest_client(const std::vector<int>& groups) {
  std::map<int, int> new_id;
  std::vector<int> renumbered(groups.size());
  for (std::size_t i = 0; i < groups.size(); ++i) {
    const auto found = new_id.emplace(groups[i], static_cast<int>(new_id.size())).first;
    renumbered[i] = found->second;
  }
  return renumbered;
}

}  // namespace

void check_model_count(int num_clients, int num_models) {
  if (num_models < 1 || num_models > num_clients) {
    throw ConfigError("--clusters (K = " + std::to_string(num_models) +
                      " models) must be between 1 and the number of clients (" +
                      std::to_string(num_clients) + "); lower --clusters or add clients");
  }
}

std::vector<int> Algorithm::cluster_signatures(const torch::Tensor& /*signatures*/, const std::vector<int>& /*initial*/) {
  throw ConfigError(name() + " does not cluster client signatures");
}

void Algorithm::adopt_clusters(const std::vector<int>& /*clusters*/) {
  throw ConfigError(name() + " does not cluster client signatures");
}

torch::Tensor Algorithm::contributions(int /*round*/, const torch::Tensor& /*importance*/,
                                       const torch::Tensor& /*sample_counts*/) {
  throw ConfigError(name() + " is not a soft-clustering algorithm");
}

std::unique_ptr<Algorithm> make_algorithm(const AlgorithmSettings& settings) {
  if (settings.name == "fedsoft") {
    return std::make_unique<FedSoft>(settings);
  }
  if (settings.name == "pacfl") {
    return std::make_unique<Pacfl>(settings);
  }
  if (settings.name == "clove") {
    return std::make_unique<Clove>(settings);
  }
  if (settings.name == "ifca") {
    return std::make_unique<Ifca>(settings);
  }
  if (settings.name == "fedavg") {
    return std::make_unique<FedAvg>(settings);
  }
  if (settings.name == "local") {
    return std::make_unique<LocalOnly>(settings);
  }
  throw ConfigError("--algorithm must be one of clove, ifca, fedavg, local, pacfl, fedsoft, but got '" + settings.name + "'");
}

std::vector<int> random_first_assignment(int num_clients, int num_models, std::uint64_t seed) {
  check_model_count(num_clients, num_models);
  auto engine = core::make_engine(seed, core::Purpose::kFirstAssignment);
  std::vector<int> model(static_cast<std::size_t>(num_clients));
  std::vector<int> count(static_cast<std::size_t>(num_models), 0);
  for (auto& m : model) {
    m = static_cast<int>(core::uniform_index(engine, static_cast<std::uint64_t>(num_models)));
    ++count[static_cast<std::size_t>(m)];
  }
  for (int empty = 0; empty < num_models; ++empty) {
    while (count[static_cast<std::size_t>(empty)] == 0) {
      const auto client = core::uniform_index(engine, static_cast<std::uint64_t>(num_clients));
      int& from = model[client];
      if (count[static_cast<std::size_t>(from)] > 1) {
        --count[static_cast<std::size_t>(from)];
        from = empty;
        ++count[static_cast<std::size_t>(empty)];
      }
    }
  }
  return renumber_by_smallest_client(model);
}

void check_loss_vectors(const torch::Tensor& loss_vectors, int num_clients, int num_models) {
  if (!loss_vectors.defined() || loss_vectors.dim() != 2 || loss_vectors.size(0) != num_clients ||
      loss_vectors.size(1) != num_models || loss_vectors.scalar_type() != torch::kFloat64) {
    throw ShapeError("loss vectors: expected [" + std::to_string(num_clients) + ", " +
                     std::to_string(num_models) + "] float64, but got " +
                     (loss_vectors.defined() ? c10::str(loss_vectors.sizes(), " ", loss_vectors.scalar_type())
                                             : std::string("none")));
  }
  if (!torch::isfinite(loss_vectors).all().item<bool>()) {
    throw Error("loss vectors hold a non-finite loss: a model diverged; lower --lr");
  }
}

}  // namespace cflrun::algo
