// The clients' answers to the server's queries (algo::QueryKind): loss vectors, importance
// weights, distances of the local models to the server models, and warm-up updates.
#include <cflrun/run/client_group.hpp>

#include <cflrun/local/scoring.hpp>
#include "stopwatch.hpp"

#include <torch/types.h>

#include <cflrun/algo/soft_clustering.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/inference_forward.hpp>

namespace cflrun::run {
namespace {

std::vector<double> to_vector(const torch::Tensor& tensor) {
  const auto flat = tensor.to(torch::kCPU).to(torch::kFloat64).contiguous();
  return std::vector<double>(flat.data_ptr<double>(), flat.data_ptr<double>() + flat.numel());
}

}  // namespace

torch::Tensor ClientGroup::per_sample_training_losses(ModelSet& models, const torch::Tensor& rows) {
  auto losses = torch::empty({rows.size(0), models.size()}, torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto chunks = [&](const auto& fill_chunk) {
    const auto rows_per_pass = local::eval_chunk(device_);
    for (std::int64_t start = 0; start < rows.size(0); start += rows_per_pass) {
      const auto length = std::min(rows_per_pass, rows.size(0) - start);
      const auto chunk = rows.narrow(0, start, length);
      fill_chunk(train_.inputs.index_select(0, chunk), train_.targets.index_select(0, chunk),
                 losses.narrow(0, start, length));
    }
  };
  for (int j = 0; j < models.size(); ++j) {
    model::InferenceForward forward(models.load(j));
    torch::InferenceMode inference;
    chunks([&](const torch::Tensor& inputs, const torch::Tensor& targets, torch::Tensor out) {
      out.select(/*dim=*/1, j).copy_(model::per_sample_loss(objective_, forward(inputs), inputs, targets));
    });
  }
  return losses;
}

std::vector<double> ClientGroup::loss_vectors(ModelSet& models, const std::vector<int>& clients) {
  Stopwatch watch(compute_seconds_);
  const auto hosted = hosted_among(clients);
  auto sums = torch::zeros({static_cast<std::int64_t>(size()), models.size()},
                           torch::TensorOptions(device_).dtype(torch::kFloat64));
  const auto rows = training_rows(hosted);
  sums.index_add_(0, train_.owner.index_select(0, rows), per_sample_training_losses(models, rows));
  const auto counts = torch::tensor(train_counts_, torch::kFloat64).to(device_).unsqueeze(1);
  const auto index = torch::tensor(hosted, torch::kLong).to(device_);
  return to_vector((sums / counts).index_select(0, index));
}

std::vector<double> ClientGroup::importance_weights(ModelSet& models, double smoother, const std::vector<int>& clients) {
  Stopwatch watch(compute_seconds_);
  const auto hosted = hosted_among(clients);
  const auto losses = per_sample_training_losses(models, training_rows(hosted)).to(torch::kCPU);
  auto importance = torch::empty({static_cast<std::int64_t>(hosted.size()), models.size()}, torch::kFloat64);
  std::int64_t row = 0;
  for (std::size_t h = 0; h < hosted.size(); ++h) {
    const auto n = train_counts_[static_cast<std::size_t>(hosted[h])];
    importance[static_cast<std::int64_t>(h)].copy_(algo::importance_weights(losses.narrow(0, row, n), smoother));
    row += n;
  }
  return to_vector(importance);
}

std::vector<double> ClientGroup::model_distances(const ModelSet& models, const std::vector<int>& clients) const {
  if (!local_states_.defined()) {
    throw ConfigError("ClientGroup::model_distances: the clients keep no local models (init_local_models)");
  }
  const auto centers = models.states().to(torch::kFloat64);
  std::vector<double> distances;
  for (const auto i : hosted_among(clients)) {
    const auto row = (centers - local_states_[i].to(torch::kFloat64)).pow(2).sum(/*dim=*/1).sqrt();
    const auto values = to_vector(row);
    distances.insert(distances.end(), values.begin(), values.end());
  }
  return distances;
}

std::vector<double> ClientGroup::warm_up_updates(model::Network& model, const torch::Tensor& initial, int steps,
                                                 int round, std::uint64_t seed, const local::LocalUpdateSettings& settings,
                                                 const std::vector<int>& clients) {
  Stopwatch watch(compute_seconds_);
  auto warm_up = settings;
  warm_up.max_steps = steps;
  warm_up.gradient_averaging = false;
  const auto start = initial.to(torch::kFloat64);
  std::vector<double> updates;
  for (const auto i : hosted_among(clients)) {
    model::load_flat_state(model, initial);
    train_client(model, static_cast<int>(i), round, seed, warm_up, core::Purpose::kWarmUp);
    const auto update = to_vector(model::flatten_state(model).to(torch::kFloat64) - start);
    updates.insert(updates.end(), update.begin(), update.end());
  }
  return updates;
}

}  // namespace cflrun::run
