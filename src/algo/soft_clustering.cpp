#include <cflrun/algo/soft_clustering.hpp>

#include <algorithm>
#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

namespace cflrun::algo {

torch::Tensor importance_weights(const torch::Tensor& per_sample_losses, double smoother) {
  if (per_sample_losses.dim() != 2 || per_sample_losses.size(0) < 1 ||
      per_sample_losses.size(1) < 1) {
    throw ShapeError("importance_weights: expected [n, S] losses with n, S >= 1, but got " +
                     c10::str(per_sample_losses.sizes()));
  }
  if (!(smoother > 0.0)) {
    throw ConfigError("FedSoft counter smoother sigma must be > 0, but got " +
                      std::to_string(smoother));
  }
  const auto n = static_cast<double>(per_sample_losses.size(0));
  const auto centres = per_sample_losses.size(1);
  auto counts = torch::bincount(per_sample_losses.argmin(/*dim=*/1).to(torch::kCPU), {}, centres)
                    .to(torch::kFloat64);
  counts = torch::where(counts.eq(0), torch::full_like(counts, smoother * n), counts);
  return counts / n;
}

torch::Tensor aggregation_weights(const torch::Tensor& importance,
                                  const torch::Tensor& sample_counts) {
  if (importance.dim() != 2 || sample_counts.dim() != 1 ||
      importance.size(0) != sample_counts.size(0)) {
    throw ShapeError(
        "aggregation_weights: expected [M, S] importance weights and [M] sample counts, but got " +
        c10::str(importance.sizes()) + " and " + c10::str(sample_counts.sizes()));
  }
  const auto mass =
      (importance.to(torch::kFloat64) * sample_counts.to(torch::kFloat64).unsqueeze(1))
          .transpose(0, 1);
  const auto totals = mass.sum(/*dim=*/1, /*keepdim=*/true);
  if (!totals.gt(0).all().item<bool>()) {
    throw DataError(
        "aggregation_weights: a centre has zero total importance; use a positive counter smoother");
  }
  return mass / totals;
}

std::vector<std::vector<int>> select_clients(const torch::Tensor& weights, int count,
                                             std::mt19937_64& engine) {
  const auto clients = weights.size(1);
  if (count < 1 || count > clients) {
    throw ConfigError("FedSoft selection size must be between 1 and the " +
                      std::to_string(clients) + " clients, but got " + std::to_string(count));
  }
  std::vector<std::vector<int>> selected(static_cast<std::size_t>(weights.size(0)));
  for (std::int64_t s = 0; s < weights.size(0); ++s) {
    auto remaining = weights[s].to(torch::kFloat64).contiguous().clone();
    auto* p = remaining.data_ptr<double>();
    for (int draw = 0; draw < count; ++draw) {
      double total = 0.0;  // over the clients not drawn yet (drawn ones are marked -1)
      for (std::int64_t k = 0; k < clients; ++k) {
        total += std::max(p[k], 0.0);
      }
      double target = core::uniform01(engine) * total;
      std::int64_t chosen = -1;
      for (std::int64_t k = 0; k < clients; ++k) {
        if (p[k] <= 0.0) {
          continue;
        }
        chosen = k;  // the last positive client absorbs rounding at the top end
        if ((target -= p[k]) < 0.0)
          break;
      }
      if (chosen < 0) {  // every remaining weight is zero: take the lowest undrawn client
        for (chosen = 0; p[chosen] < 0.0; ++chosen) {
        }
      }
      selected[static_cast<std::size_t>(s)].push_back(static_cast<int>(chosen));
      p[chosen] = -1.0;  // drawn
    }
  }
  return selected;
}

}  // namespace cflrun::algo
