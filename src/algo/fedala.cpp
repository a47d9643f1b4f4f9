#include <cflrun/algo/fedala.hpp>

#include "fedala_parts.hpp"

#include <cmath>
#include <deque>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::algo {
namespace {

constexpr const char* kStarted = "ala_started";
constexpr const char* kWeight = "ala_weight_";

/// The parameters of `model` as views into a flat state of its layout (parameters come first).
std::vector<torch::Tensor> parameter_views(const model::Network& model, const torch::Tensor& flat) {
  std::vector<torch::Tensor> views;
  std::int64_t offset = 0;
  for (const auto& p : model.parameters()) {
    views.push_back(flat.narrow(0, offset, p.numel()).view(p.sizes()));
    offset += p.numel();
  }
  return views;
}

/// Population standard deviation of the last kStableLosses values.
double spread(const std::deque<double>& losses) {
  double mean = 0.0;
  for (double l : losses) {
    mean += l / static_cast<double>(losses.size());
  }
  double variance = 0.0;
  for (double l : losses) {
    variance += (l - mean) * (l - mean) / static_cast<double>(losses.size());
  }
  return std::sqrt(variance);
}

class FedAlaClient : public ClientProcedure {
 public:
  FedAlaClient(FedAlaOptions options, std::int64_t batch_size)
      : options_(options), batch_size_(batch_size) {}

  /// evaluate() changes only the client's own local model and memory, and reads the server
  /// models, which no client writes.
  bool runs_concurrently() const override { return true; }

  ClientScore evaluate(LocalClient& client, model::Network& model,
                       const AlgorithmState& payload) override {
    adapt(client, model);
    return ClientProcedure::evaluate(client, model, payload);
  }

  std::string not_batched() const override { return ""; }

  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& /*payload*/) override {
    return standard_train_batched(batch, network, settings);
  }

  std::vector<ClientScore> evaluate_batched(ClientBatch& batch,
                                            model::ClientBatchedNetwork& network,
                                            const AlgorithmState& payload) override {
    detail::batched_adaptive_aggregation(batch, network, options_, batch_size_);
    return ClientProcedure::evaluate_batched(batch, network, payload);
  }

 private:
  /// ALA of the round's global model into the client's model, which becomes the result.
  void adapt(LocalClient& client, model::Network& model) {
    const auto slice = detail::ala_slice(client, options_.sample_percent);
    auto weights = detail::kept_weights(client);
    const int passes = adaptive_local_aggregation(
        model, (*client.server_models)[0], *client.local_model, weights,
        client.train_inputs.narrow(0, slice.start, slice.count),
        client.train_targets.narrow(0, slice.start, slice.count), batch_size_, options_.eta,
        options_.layers, !detail::ala_started(client), client.objective);
    if (passes > 0) {
      detail::keep_weights(client, weights);
    }
    client.local_model->copy_(model::flatten_state(model, client.local_model->scalar_type()));
  }

  FedAlaOptions options_;
  std::int64_t batch_size_;
};

/// One pass of ALA over the sample; returns the last batch's loss.
double ala_pass(model::Network& model, const std::vector<torch::Tensor>& global,
                const std::vector<torch::Tensor>& local, std::vector<torch::Tensor>& weights,
                std::size_t first_higher, const torch::Tensor& inputs, const torch::Tensor& targets,
                std::int64_t batch_size, double eta, model::Objective objective) {
  auto parameters = model.parameters();
  double loss_value = 0.0;
  for (std::int64_t begin = 0; begin < inputs.size(0); begin += batch_size) {
    const auto length = std::min(batch_size, inputs.size(0) - begin);
    model.zero_grad();
    const auto batch = inputs.narrow(0, begin, length);
    auto loss =
        model::mean_loss(objective, model.forward(batch), batch, targets.narrow(0, begin, length));
    loss.backward();
    loss_value = loss.item<double>();
    torch::NoGradGuard no_grad;
    for (std::size_t i = first_higher, w = 0; i < parameters.size(); ++i, ++w) {
      const auto difference = global[i] - local[i];
      weights[w] = (weights[w] - eta * parameters[i].grad() * difference).clamp(0.0, 1.0);
      parameters[i].copy_(local[i] + difference * weights[w]);
    }
  }
  return loss_value;
}

}  // namespace

void FedAlaOptions::visit(core::OptionVisitor& v) {
  v.option("fedala-eta", eta, "fedala: eta, step size of the aggregation weights (PFLlib: 1.0)",
           core::Range::above(0.0));
  v.option("fedala-sample-percent", sample_percent,
           "fedala: s, percent of a client's training data ALA learns on (PFLlib: 80)",
           core::Range{0.0, 100.0, true});
  v.option("fedala-layers", layers,
           "fedala: p, trailing parameter tensors adapted element-wise, the others take the global "
           "values (PFLlib's layer_idx: 2, the last Linear's weight and bias)",
           core::Range::at_least(1));
}

int adaptive_local_aggregation(model::Network& model, const torch::Tensor& global,
                               const torch::Tensor& local, std::vector<torch::Tensor>& weights,
                               const torch::Tensor& inputs, const torch::Tensor& targets,
                               std::int64_t batch_size, double eta, int layers, bool until_stable,
                               model::Objective objective) {
  const auto device = model.parameters().front().device();
  const auto global_views = parameter_views(model, global.to(device));
  const auto local_views = parameter_views(model, local.to(device));
  model::load_flat_state(model, local);
  if (detail::untrained(global, local, model.parameters().front().numel())) {
    return 0;  // PFLlib: an untrained client (its first tensor sums to the global one's)
  }
  const auto count = global_views.size();
  if (layers >= static_cast<int>(count)) {
    throw ConfigError("--fedala-layers must be below the model's " + std::to_string(count) +
                      " parameter tensors");
  }
  const auto first_higher = count - static_cast<std::size_t>(layers);
  auto parameters = model.parameters();
  {
    torch::NoGradGuard no_grad;
    for (std::size_t i = 0; i < count; ++i) {  // lower tensors: the global values
      parameters[i].requires_grad_(i >= first_higher);
      if (i < first_higher) {
        parameters[i].copy_(global_views[i]);
      }
    }
  }
  if (weights.empty()) {
    for (std::size_t i = first_higher; i < count; ++i) {
      weights.push_back(torch::ones_like(global_views[i]));
    }
  }
  for (std::size_t i = first_higher, w = 0; i < count; ++i, ++w) {  // start from the current W
    torch::NoGradGuard no_grad;
    weights[w] = weights[w].to(device);
    parameters[i].copy_(local_views[i] + (global_views[i] - local_views[i]) * weights[w]);
  }
  model.train();
  std::deque<double> losses;
  int passes = 0;
  do {
    losses.push_back(ala_pass(model, global_views, local_views, weights, first_higher, inputs,
                              targets, batch_size, eta, objective));
    if (losses.size() > static_cast<std::size_t>(detail::kStableLosses)) {
      losses.pop_front();
    }
    ++passes;
  } while (detail::another_pass(until_stable, passes, losses));
  for (auto& p : parameters) {
    p.requires_grad_(true);
  }
  for (auto& w : weights) {
    w = w.to(torch::kCPU);
  }
  return passes;
}

FedAla::FedAla(const FedAlaOptions& options, const AlgorithmContext& context)
    : options_(options), context_(context) {
  if (context.num_classes == 0) {
    throw ConfigError("fedala needs labels: its aggregation weights learn on the cross-entropy");
  }
}

ClientSide FedAla::client_side() const {
  return {std::make_shared<FedAlaClient>(options_, context_.batch_size), nullptr};
}

RoundPlan FedAla::plan(const RoundInput& input) {
  auto plan = hard_plan(input.participants, std::vector<int>(input.participants.size(), 0), 1,
                        context_.train_samples);
  for (int client : input.participants) {
    plan.start[static_cast<std::size_t>(client)] = kLocalModel;
  }
  return plan;
}

namespace detail {

AlaSlice ala_slice(const LocalClient& client, double sample_percent) {
  const auto n = client.train_inputs.size(0);
  const auto m = std::max<std::int64_t>(
      1, static_cast<std::int64_t>(sample_percent / 100.0 * static_cast<double>(n)));
  auto engine = core::make_engine(client.seed, core::Purpose::kAdaptiveAggregation,
                                  static_cast<std::uint64_t>(client.id),
                                  static_cast<std::uint64_t>(client.round));
  return {
      static_cast<std::int64_t>(core::uniform_index(engine, static_cast<std::uint64_t>(n - m + 1))),
      m};
}

std::vector<torch::Tensor> kept_weights(const LocalClient& client) {
  std::vector<torch::Tensor> weights;
  for (int i = 0;; ++i) {
    const auto found = client.memory->find(kWeight + std::to_string(i));
    if (found == client.memory->end()) {
      return weights;
    }
    weights.push_back(found->second);
  }
}

void keep_weights(LocalClient& client, const std::vector<torch::Tensor>& weights) {
  for (std::size_t i = 0; i < weights.size(); ++i) {
    (*client.memory)[kWeight + std::to_string(i)] = weights[i];
  }
  (*client.memory)[kStarted] = torch::ones({1});
}

bool ala_started(const LocalClient& client) { return client.memory->count(kStarted) != 0; }

bool another_pass(bool until_stable, int passes, const std::deque<double>& losses) {
  return until_stable && passes < kMaxStartPasses &&
         (passes <= kStableLosses || spread(losses) >= kStableStd);
}

bool untrained(const torch::Tensor& global, const torch::Tensor& local, std::int64_t floats) {
  return torch::equal(global.narrow(0, 0, floats).to(local.device()).sum(),
                      local.narrow(0, 0, floats).sum());
}

}  // namespace detail

}  // namespace cflrun::algo
