// Lockstep forward passes of many clients (include/cflrun/local/client_schedule.hpp). The rows of
// every pass are laid out once on the CPU, copied to the device in one piece, and every pass then
// gathers its [g_p, width] block with one index_select.
#include <cflrun/local/client_schedule.hpp>

#include <algorithm>
#include <string>

#include <torch/nn/utils/rnn.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/dropout.hpp>

namespace cflrun::local {
namespace {

void check_passes(const ClientPasses& passes, const model::ClientBatchedNetwork& network) {
  if (passes.size() > static_cast<std::size_t>(network.capacity())) {
    throw ShapeError("client-batched passes: " + std::to_string(passes.size()) +
                     " clients for a network of capacity " + std::to_string(network.capacity()));
  }
  for (std::size_t c = 0; c < passes.size(); ++c) {
    if (c > 0 && passes[c].size() > passes[c - 1].size()) {
      throw ShapeError(
          "client-batched passes: clients must come in non-increasing order of their passes");
    }
    for (const auto& rows : passes[c]) {
      if (rows.empty()) {
        throw ShapeError("client-batched passes: a pass without rows");
      }
    }
  }
}

}  // namespace

DropoutStream::DropoutStream(const model::ClientBatchedNetwork& network, std::uint64_t seed,
                             torch::Device device)
    : dropouts_(network.dropout_layers()),
      options_(torch::TensorOptions(device).dtype(network.dtype())) {
  if (!dropouts_.empty()) {
    generator_ = model::dropout_generator(seed, device);
  }
}

std::vector<torch::Tensor> DropoutStream::draw(std::int64_t rows) {
  std::vector<torch::Tensor> masks;
  for (const auto& layer : dropouts_) {
    masks.push_back(model::dropout(torch::ones({rows, layer.features}, options_), layer.probability,
                                   generator_));
  }
  return masks;
}

ClientMasks draw_dropout_masks(const model::ClientBatchedNetwork& network,
                               const ClientPasses& passes,
                               const std::vector<std::uint64_t>& dropout_seeds,
                               torch::Device device) {
  ClientMasks masks(passes.size());
  if (network.dropout_layers().empty()) {
    return masks;
  }
  for (std::size_t c = 0; c < passes.size(); ++c) {
    DropoutStream stream(network, dropout_seeds.at(c), device);
    for (const auto& rows : passes[c]) {
      masks[c].push_back(stream.draw(static_cast<std::int64_t>(rows.size())));
    }
  }
  return masks;
}

ClientSchedule::ClientSchedule(const ClientPasses& passes, ClientMasks masks,
                               const model::ClientBatchedNetwork& network,
                               const torch::Tensor& inputs, const torch::Tensor& targets)
    : inputs_(inputs), targets_(targets), dtype_(network.dtype()) {
  check_passes(passes, network);
  std::vector<std::int64_t> rows;
  std::vector<float> valid;
  for (std::size_t p = 0; !passes.empty() && p < passes[0].size(); ++p) {
    std::size_t g = 0;
    std::size_t width = 0;
    bool even = true;
    while (g < passes.size() && passes[g].size() > p) {
      width = std::max(width, passes[g][p].size());
      even = even && passes[g][p].size() == passes[0][p].size();
      ++g;
    }
    starts_.push_back(static_cast<std::int64_t>(rows.size()));
    clients_.push_back(static_cast<std::int64_t>(g));
    widths_.push_back(static_cast<std::int64_t>(width));
    even_.push_back(even);
    std::vector<std::vector<torch::Tensor>> by_layer;
    for (std::size_t c = 0; c < g; ++c) {
      const auto& batch = passes[c][p];
      for (std::size_t r = 0; r < width; ++r) {
        rows.push_back(r < batch.size() ? batch[r] : batch[0]);
        valid.push_back(r < batch.size() ? 1.0F : 0.0F);
      }
      const bool masked = c < masks.size() && !masks[c].empty();
      for (std::size_t d = 0; masked && d < masks[c].at(p).size(); ++d) {
        by_layer.resize(std::max(by_layer.size(), d + 1));
        by_layer[d].push_back(std::move(masks[c][p][d]));
      }
    }
    std::vector<torch::Tensor> padded;
    for (const auto& layer : by_layer) {
      padded.push_back(torch::nn::utils::rnn::pad_sequence(layer, /*batch_first=*/true));
    }
    masks_.push_back(std::move(padded));
  }
  const auto device = inputs.device();
  rows_ = torch::tensor(rows, torch::kLong).to(device);
  valid_ = torch::tensor(valid, torch::kFloat32).to(device, dtype_);
}

GatheredPass ClientSchedule::gather(std::size_t p) const {
  GatheredPass gathered;
  gathered.clients = clients_[p];
  gathered.width = widths_[p];
  const auto entries = gathered.clients * gathered.width;
  gathered.rows = rows_.narrow(0, starts_[p], entries);
  const auto inputs = inputs_.index_select(0, gathered.rows);
  std::vector<std::int64_t> shape{gathered.clients, gathered.width};
  shape.insert(shape.end(), inputs.sizes().begin() + 1, inputs.sizes().end());
  gathered.inputs = inputs.view(shape);
  gathered.targets = targets_.index_select(0, gathered.rows);
  gathered.valid = valid_.narrow(0, starts_[p], entries).view({gathered.clients, gathered.width});
  gathered.pass.training = true;
  if (!even_[p]) {
    gathered.pass.valid = gathered.valid;
  }
  gathered.pass.dropout_masks = masks_[p];
  return gathered;
}

torch::Tensor GatheredPass::mean(const torch::Tensor& per_row) const {
  const auto values = per_row.view({clients, width});
  if (!pass.valid.defined()) {
    return values.mean(1);
  }
  // 1/|batch| per real row, divided in the values' precision.
  return (values * (valid / valid.sum(1, /*keepdim=*/true))).sum(1);
}

torch::Tensor GatheredPass::sum(const torch::Tensor& per_row) const {
  const auto values = per_row.view({clients, width});
  return pass.valid.defined() ? (values * valid).sum(1) : values.sum(1);
}

std::vector<double> last_epoch_means(const std::vector<torch::Tensor>& values,
                                     const std::vector<std::size_t>& steps,
                                     const std::vector<std::size_t>& last_epoch) {
  std::vector<std::int64_t> starts;  // where values[s] begins in the concatenation
  std::int64_t total = 0;
  for (const auto& step : values) {
    starts.push_back(total);
    total += step.numel();
  }
  const auto all = values.empty()
                       ? torch::empty({0}, torch::kFloat64)
                       : torch::cat(values).to(torch::kCPU, torch::kFloat64).contiguous();
  const auto* flat = all.data_ptr<double>();
  std::vector<double> means;
  for (std::size_t c = 0; c < steps.size(); ++c) {
    double sum = 0.0;
    for (auto s = last_epoch[c]; s < steps[c]; ++s) {
      sum += flat[starts[s] + static_cast<std::int64_t>(c)];
    }
    means.push_back(sum / static_cast<double>(steps[c] - last_epoch[c]));
  }
  return means;
}

std::vector<std::vector<std::int64_t>> shuffled_batches(std::int64_t offset, std::int64_t n,
                                                        std::int64_t batch_size, std::int64_t steps,
                                                        at::Generator& generator,
                                                        std::vector<std::size_t>& epoch_starts) {
  std::vector<std::vector<std::int64_t>> batches;
  while (static_cast<std::int64_t>(batches.size()) < steps) {
    epoch_starts.push_back(batches.size());
    const auto order = torch::randperm(n, generator, torch::kLong);
    const auto* values = order.data_ptr<std::int64_t>();
    for (std::int64_t start = 0; start < n && static_cast<std::int64_t>(batches.size()) < steps;
         start += batch_size) {
      std::vector<std::int64_t> batch;
      for (std::int64_t r = start; r < std::min(n, start + batch_size); ++r) {
        batch.push_back(offset + values[r]);
      }
      batches.push_back(std::move(batch));
    }
  }
  return batches;
}

}  // namespace cflrun::local
