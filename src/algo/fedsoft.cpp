#include <cflrun/algo/fedsoft.hpp>

#include <torch/torch.h>

#include <cflrun/algo/soft_clustering.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

FedSoft::FedSoft(const AlgorithmSettings& settings) : settings_(settings) {
  check_model_count(settings.num_clients, settings.num_clusters);
  if (settings.fedsoft_interval < 1) {
    throw ConfigError("--fedsoft-interval must be at least 1 round, but got " + std::to_string(settings.fedsoft_interval));
  }
  if (settings.fedsoft_selection < 0 || settings.fedsoft_selection > settings.num_clients) {
    throw ConfigError("--fedsoft-selection must be between 0 (every client) and the " +
                      std::to_string(settings.num_clients) + " clients, but got " +
                      std::to_string(settings.fedsoft_selection) + "; lower it or add clients");
  }
  if (settings.fedsoft_mu < 0.0) {
    throw ConfigError("--fedsoft-mu must be >= 0, but got " + std::to_string(settings.fedsoft_mu));
  }
  if (settings.fedsoft_smoother <= 0.0) {
    throw ConfigError("--fedsoft-smoother must be > 0 (FedSoft: 1e-4), but got " +
                      std::to_string(settings.fedsoft_smoother));
  }
}

torch::Tensor FedSoft::contributions(int round, const torch::Tensor& importance, const torch::Tensor& sample_counts) {
  const auto m = static_cast<std::int64_t>(settings_.num_clients);
  if (importance.dim() != 2 || importance.size(0) != m || importance.size(1) != num_models()) {
    throw ShapeError("fedsoft: expected importance weights [" + std::to_string(m) + ", " +
                     std::to_string(num_models()) + "], but got " + c10::str(importance.sizes()));
  }
  importance_ = importance.to(torch::kFloat64).clone();
  const auto weights = aggregation_weights(importance_, sample_counts.to(torch::kFloat64));  // [K, M], Eq. 6
  if (settings_.fedsoft_selection == 0) {
    return weights;
  }
  auto engine = core::make_engine(settings_.seed, core::Purpose::kClientSelection, 0, static_cast<std::uint64_t>(round));
  const auto selected = select_clients(weights, settings_.fedsoft_selection, engine);
  auto chosen = torch::zeros_like(weights);
  for (std::size_t s = 0; s < selected.size(); ++s) {
    for (int k : selected[s]) {
      chosen[static_cast<std::int64_t>(s)][k] = 1.0 / static_cast<double>(selected[s].size());
    }
  }
  return chosen;
}

std::vector<int> FedSoft::assign(int /*round*/, const std::vector<int>& participants, const torch::Tensor& /*loss_vectors*/) {
  if (!importance_.defined()) {
    throw ConfigError("fedsoft: assign() needs the importance weights of a contributions() call first");
  }
  const auto dominant = importance_.argmax(/*dim=*/1);
  std::vector<int> models;
  for (int client : participants) {
    models.push_back(static_cast<int>(dominant[client].item<std::int64_t>()));
  }
  return models;
}

}  // namespace cflrun::algo
