#include <cflrun/local/scoring.hpp>

#include <algorithm>
#include <limits>
#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/inference_forward.hpp>

namespace cflrun::local {

void add_scores(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
                const torch::Tensor& targets, const torch::Tensor& owner, const torch::Tensor& rows,
                torch::Tensor& loss_sums, torch::Tensor& correct_sums) {
  model::InferenceForward forward(model);
  torch::InferenceMode inference;
  const auto rows_per_pass = eval_chunk(inputs.device());
  for (std::int64_t start = 0; start < rows.size(0); start += rows_per_pass) {
    const auto chunk = rows.narrow(0, start, std::min(rows_per_pass, rows.size(0) - start));
    const auto chunk_inputs = inputs.index_select(0, chunk);
    const auto outputs = forward(chunk_inputs);
    const auto chunk_targets = targets.index_select(0, chunk);
    const auto chunk_owner = owner.index_select(0, chunk);
    loss_sums.index_add_(0, chunk_owner,
                         model::per_sample_loss(objective, outputs, chunk_inputs, chunk_targets)
                             .to(torch::kFloat64));
    if (model::has_accuracy(objective)) {
      correct_sums.index_add_(0, chunk_owner,
                              outputs.argmax(/*dim=*/1).eq(chunk_targets).to(torch::kFloat64));
    }
  }
}

Score score(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
            const torch::Tensor& targets) {
  const auto n = inputs.size(0);
  if (n == 0 || targets.size(0) != n) {
    throw ShapeError("score: expected n > 0 inputs with n targets, but got " + std::to_string(n) +
                     " and " + std::to_string(targets.size(0)));
  }
  const auto options = torch::TensorOptions(inputs.device()).dtype(torch::kFloat64);
  auto loss = torch::zeros({1}, options);
  auto correct = torch::zeros({1}, options);
  const auto longs = torch::TensorOptions(inputs.device()).dtype(torch::kLong);
  add_scores(model, objective, inputs, targets, torch::zeros({n}, longs), torch::arange(n, longs),
             loss, correct);
  model.train();
  const double count = static_cast<double>(n);
  return {model::has_accuracy(objective) ? correct.item<double>() / count
                                         : std::numeric_limits<double>::quiet_NaN(),
          loss.item<double>() / count};
}

namespace {

/// Rows [start, start + width) of every client, padded with the client's first row: [g * width]
/// row indices and their [g, width] validity (1 for a real row).
std::pair<torch::Tensor, torch::Tensor> padded_rows(const std::vector<std::int64_t>& offsets,
                                                    const std::vector<std::int64_t>& counts,
                                                    std::int64_t start, std::int64_t width) {
  std::vector<std::int64_t> rows;
  std::vector<float> valid;
  for (std::size_t c = 0; c < offsets.size(); ++c) {
    for (std::int64_t r = start; r < start + width; ++r) {
      const bool real = r < counts[c];
      rows.push_back(offsets[c] + (real ? r : 0));
      valid.push_back(real ? 1.0F : 0.0F);
    }
  }
  const auto g = static_cast<std::int64_t>(offsets.size());
  return {torch::tensor(rows, torch::kLong), torch::tensor(valid).view({g, width})};
}

}  // namespace

void for_each_padded_chunk(const torch::Tensor& inputs, const torch::Tensor& targets,
                           const std::vector<std::int64_t>& offsets,
                           const std::vector<std::int64_t>& counts, std::int64_t width,
                           const std::function<void(const torch::Tensor&, const torch::Tensor&,
                                                    const torch::Tensor&)>& visit) {
  const auto g = static_cast<std::int64_t>(offsets.size());
  const auto longest = counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
  const auto device = inputs.device();
  for (std::int64_t start = 0; start < longest; start += width) {
    const auto chunk_width = std::min(width, longest - start);
    const auto [rows_cpu, valid_cpu] = padded_rows(offsets, counts, start, chunk_width);
    const auto rows = rows_cpu.to(device);
    const auto chunk = inputs.index_select(0, rows);
    std::vector<std::int64_t> shape{g, chunk_width};
    shape.insert(shape.end(), chunk.sizes().begin() + 1, chunk.sizes().end());
    visit(chunk.view(shape), targets.index_select(0, rows), valid_cpu.to(device));
  }
}

std::vector<Score> batched_scores(model::ClientBatchedNetwork& network, model::Objective objective,
                                  const torch::Tensor& inputs, const torch::Tensor& targets,
                                  const std::vector<std::int64_t>& offsets,
                                  const std::vector<std::int64_t>& counts) {
  const auto g = static_cast<std::int64_t>(offsets.size());
  if (counts.size() != offsets.size() || g == 0 || g > network.capacity() ||
      *std::min_element(counts.begin(), counts.end()) < 1) {
    throw ShapeError("batched_scores: expected 1 to " + std::to_string(network.capacity()) +
                     " clients with offsets and rows each, but got " +
                     std::to_string(offsets.size()) + " offsets and " +
                     std::to_string(counts.size()) + " counts (or a client without rows)");
  }
  torch::NoGradGuard no_grad;
  const auto doubles = torch::TensorOptions(inputs.device()).dtype(torch::kFloat64);
  auto loss = torch::zeros({g}, doubles);
  auto correct = torch::zeros({g}, doubles);
  const auto width = std::max<std::int64_t>(1, eval_chunk(inputs.device()) / g);
  for_each_padded_chunk(inputs, targets, offsets, counts, width,
                        [&](const torch::Tensor& chunk, const torch::Tensor& chunk_targets,
                            const torch::Tensor& valid) {
                          const auto rows = chunk.size(0) * chunk.size(1);
                          const auto outputs = network.forward(chunk).reshape({rows, -1});
                          const auto real = valid.to(torch::kFloat64);
                          const auto losses = model::per_sample_loss(
                              objective, outputs, chunk.flatten(0, 1), chunk_targets);
                          loss.add_((losses.to(torch::kFloat64).view_as(real) * real).sum(1));
                          if (model::has_accuracy(objective)) {
                            const auto hits =
                                outputs.argmax(/*dim=*/1).eq(chunk_targets).to(torch::kFloat64);
                            correct.add_((hits.view_as(real) * real).sum(1));
                          }
                        });
  const auto loss_cpu = loss.cpu();
  const auto correct_cpu = correct.cpu();
  std::vector<Score> scores;
  for (std::int64_t c = 0; c < g; ++c) {
    const auto n = static_cast<double>(counts[static_cast<std::size_t>(c)]);
    scores.push_back({model::has_accuracy(objective) ? correct_cpu[c].item<double>() / n
                                                     : std::numeric_limits<double>::quiet_NaN(),
                      loss_cpu[c].item<double>() / n});
  }
  return scores;
}

}  // namespace cflrun::local
