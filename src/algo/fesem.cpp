#include <cflrun/algo/fesem.hpp>

#include <limits>

#include <torch/torch.h>

#include <cflrun/core/error.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kDistance = "/algorithm/fesem_distance";

}  // namespace

void FeSemOptions::visit(core::OptionVisitor& v) {
  v.option("fesem-aggregation", aggregation,
           "fesem: mean (each center = mean of its members' trained models, the paper) | first_member (only "
           "its first member's, as the official code's Group.train)",
           {"mean", "first_member"});
}

FeSem::FeSem(const FeSemOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      distances_(static_cast<std::size_t>(context.num_clients * context.num_models),
                 std::numeric_limits<float>::quiet_NaN()) {
  check_model_count(context.num_clients, context.num_models);
  if (context.gradient_averaging) {
    throw ConfigError("--aggregation must be model with fesem (clients keep their trained models)");
  }
}

std::vector<ExtraDataset> FeSem::extra_datasets() const {
  return {{kDistance, {context_.num_clients, context_.num_models}}};
}

std::vector<ClientQuery> FeSem::queries(int /*round*/, const std::vector<int>& participants) {
  return {ClientQuery{QueryKind::kModelDistances, participants}};
}

RoundPlan FeSem::plan(const RoundInput& input) {
  const auto& distances = answer_of(input, QueryKind::kModelDistances).values;
  const auto m = static_cast<std::int64_t>(input.participants.size());
  const auto k = static_cast<std::int64_t>(context_.num_models);
  if (distances.dim() != 2 || distances.size(0) != m || distances.size(1) != k) {
    throw ShapeError("fesem: expected distances [" + std::to_string(m) + ", " + std::to_string(k) + "], but got " +
                     c10::str(distances.sizes()));
  }
  distances_.assign(distances_.size(), std::numeric_limits<float>::quiet_NaN());
  const auto nearest = distances.argmin(/*dim=*/1).contiguous();  // E-step, ties to the lowest center
  std::vector<int> centers(nearest.data_ptr<std::int64_t>(), nearest.data_ptr<std::int64_t>() + m);
  auto plan = hard_plan(input.participants, centers, context_.num_models, context_.train_samples);
  std::vector<bool> has_first(static_cast<std::size_t>(k), false);
  for (std::int64_t i = 0; i < m; ++i) {
    const int client = input.participants[static_cast<std::size_t>(i)];
    const int center = centers[static_cast<std::size_t>(i)];
    const bool counts = options_.aggregation == "mean" || !has_first[static_cast<std::size_t>(center)];
    plan.weights[center][client] = counts ? 1.0 : 0.0;  // the M-step's plain mean (or first member)
    has_first[static_cast<std::size_t>(center)] = true;
    for (std::int64_t g = 0; g < k; ++g) {
      distances_[static_cast<std::size_t>(client * k + g)] = static_cast<float>(distances[i][g].item<double>());
    }
  }
  return plan;
}

ExtraValues FeSem::record(int /*round*/) const { return {{kDistance, distances_}}; }

}  // namespace cflrun::algo
