#include <cflrun/algo/per_fedavg.hpp>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/local/client_schedule.hpp>

namespace cflrun::algo {
namespace {

/// The gradient of the mean loss on one batch at the model's current parameters.
double gradient_at(model::Network& model, model::Objective objective, const torch::Tensor& inputs,
                   const torch::Tensor& targets) {
  model.zero_grad();
  auto loss = model::mean_loss(objective, model.forward(inputs), inputs, targets);
  loss.backward();
  return loss.item<double>();
}

/// parameters -= step x gradient (parameters without a gradient are left alone).
void descend(model::Network& model, double step) {
  torch::NoGradGuard no_grad;
  for (auto& parameter : model.parameters()) {
    if (parameter.grad().defined()) {
      parameter.sub_(step * parameter.grad());
    }
  }
}

[[noreturn]] void throw_too_few(int client, std::int64_t train_samples) {
  throw ConfigError(
      "perfedavg: client " + std::to_string(client) + " has " + std::to_string(train_samples) +
      " training samples, fewer than one meta-batch of 2 x --batch-size; lower --batch-size");
}

/// `rows` (client-local indices, CPU int64) shifted to the client's rows in the stacked samples.
std::vector<std::int64_t> offset_rows(const torch::Tensor& rows, std::int64_t offset) {
  const auto shifted = (rows + offset).contiguous();
  return {shifted.data_ptr<std::int64_t>(), shifted.data_ptr<std::int64_t>() + shifted.numel()};
}

/// [g] each client's mean loss on its rows of `step`, in training mode, with gradients recorded.
torch::Tensor batched_gradient(model::ClientBatchedNetwork& network,
                               const local::GatheredPass& step, model::Objective objective) {
  const auto outputs = network.forward(step.inputs, step.pass);
  return step.mean(model::per_sample_loss(objective,
                                          outputs.reshape({step.clients * step.width, -1}),
                                          step.inputs.flatten(0, 1), step.targets));
}

/// meta_step of clients [0, g) at once (g = the passes' clients): w~ = w - alpha grad f(w; first),
/// then w <- w - beta grad f(w~; second).
/// @return [g] f(w; first) of each client.
torch::Tensor batched_meta_step(model::ClientBatchedNetwork& network,
                                const local::GatheredPass& first, const local::GatheredPass& second,
                                model::Objective objective, double alpha, double beta) {
  const auto g = first.clients;
  std::vector<torch::Tensor> start;
  for (const auto& parameter : network.parameters()) {
    start.push_back(parameter.detach().narrow(0, 0, g).clone());
  }
  const auto losses = batched_gradient(network, first, objective);
  network.set_gradients(losses.sum());
  algo::descend(network, g, alpha);  // w~ = w - alpha grad f(w)
  network.set_gradients(batched_gradient(network, second, objective).sum());
  torch::NoGradGuard no_grad;
  const auto& parameters = network.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) {  // w <- w - beta grad f(w~)
    auto rows = parameters[i].narrow(0, 0, g);
    rows.copy_(start[i]);
    if (parameters[i].grad().defined()) {
      rows.add_(parameters[i].grad().narrow(0, 0, g), -beta);
    }
  }
  return losses.detach();
}

class PerFedAvgClient : public ClientProcedure {
 public:
  explicit PerFedAvgClient(PerFedAvgOptions options) : options_(options) {}

  void check_client(int client, std::int64_t train_samples,
                    const local::LocalUpdateSettings& settings) const override {
    if (train_samples < 2 * static_cast<std::int64_t>(settings.batch_size)) {
      throw_too_few(client, train_samples);
    }
  }

  double train(LocalClient& client, model::Network& model,
               const local::LocalUpdateSettings& settings,
               const AlgorithmState& /*payload*/) override {
    const auto n = client.train_inputs.size(0);
    const std::int64_t half = settings.batch_size;
    auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                                static_cast<std::uint64_t>(client.id),
                                                static_cast<std::uint64_t>(client.round));
    model.train();
    double epoch_loss = 0.0;
    for (int pass = 0; pass < 2 * settings.local_epochs;
         ++pass) {  // PFLlib: train() twice per round
      const auto order =
          torch::randperm(n, generator, torch::kLong).to(client.train_inputs.device());
      epoch_loss = 0.0;
      std::int64_t steps = 0;
      for (std::int64_t start = 0; start + 2 * half <= n;
           start += 2 * half, ++steps) {  // drop_last
        const auto first = order.narrow(0, start, half);
        const auto second = order.narrow(0, start + half, half);
        epoch_loss +=
            meta_step(model, client.objective, client.train_inputs.index_select(0, first),
                      client.train_targets.index_select(0, first),
                      client.train_inputs.index_select(0, second),
                      client.train_targets.index_select(0, second), options_.alpha, options_.beta);
      }
      if (steps == 0) {
        throw_too_few(client.id, n);
      }
      epoch_loss /= static_cast<double>(steps);
    }
    return epoch_loss;
  }

  ClientScore evaluate(LocalClient& client, model::Network& model,
                       const AlgorithmState& /*payload*/) override {
    // One personalisation step on the first batch of a fresh shuffle (PFLlib's evaluate_one_step).
    const auto n = client.train_inputs.size(0);
    auto generator = core::make_torch_generator(client.seed, core::Purpose::kFineTune,
                                                static_cast<std::uint64_t>(client.id),
                                                static_cast<std::uint64_t>(client.round));
    const auto batch = torch::randperm(n, generator, torch::kLong)
                           .narrow(0, 0, std::min<std::int64_t>(n, batch_size_))
                           .to(client.train_inputs.device());
    model.train();
    gradient_at(model, client.objective, client.train_inputs.index_select(0, batch),
                client.train_targets.index_select(0, batch));
    descend(model, options_.alpha);
    return local::score(model, client.objective, client.test_inputs, client.test_targets);
  }

  void set_batch_size(std::int64_t batch_size) { batch_size_ = batch_size; }

  /// train() and evaluate() touch only the client's view, its model and its own streams.
  bool runs_concurrently() const override { return true; }

  std::string not_batched() const override { return ""; }

  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& /*payload*/) override {
    std::vector<std::size_t> last_epoch;
    const auto passes = meta_batches(batch, settings, last_epoch);
    const auto schedule = training_schedule(batch, network, passes, core::Purpose::kLocalUpdate);
    std::vector<torch::Tensor> first_losses;  // [meta-steps] of [g_s]
    for (std::size_t p = 0; p < schedule.size(); p += 2) {
      first_losses.push_back(batched_meta_step(network, schedule.gather(p), schedule.gather(p + 1),
                                               batch.clients.front()->objective, options_.alpha,
                                               options_.beta));
    }
    std::vector<std::size_t> meta_steps;
    for (const auto& client : passes) {
      meta_steps.push_back(client.size() / 2);
    }
    return local::last_epoch_means(first_losses, meta_steps, last_epoch);
  }

  std::vector<ClientScore> evaluate_batched(ClientBatch& batch,
                                            model::ClientBatchedNetwork& network,
                                            const AlgorithmState& payload) override {
    local::ClientPasses passes;
    for (std::int64_t c = 0; c < batch.size(); ++c) {  // the first batch of a fresh shuffle
      const auto& client = *batch.clients[static_cast<std::size_t>(c)];
      const auto rows =
          fine_tune_order(client).narrow(0, 0, std::min(batch.train_count(c), batch_size_));
      passes.push_back({offset_rows(rows, batch.train_offsets[static_cast<std::size_t>(c)])});
    }
    const auto schedule = training_schedule(batch, network, passes, core::Purpose::kFineTune);
    const auto step = schedule.gather(0);
    network.set_gradients(batched_gradient(network, step, batch.clients.front()->objective).sum());
    algo::descend(network, step.clients, options_.alpha);
    return ClientProcedure::evaluate_batched(batch, network, payload);
  }

 private:
  /// The order of a fresh shuffle of the client's training data for its fine-tuning step.
  static torch::Tensor fine_tune_order(const LocalClient& client) {
    auto generator = core::make_torch_generator(client.seed, core::Purpose::kFineTune,
                                                static_cast<std::uint64_t>(client.id),
                                                static_cast<std::uint64_t>(client.round));
    return torch::randperm(client.train_inputs.size(0), generator, torch::kLong);
  }

  /// Every client's meta-steps as pairs of passes (first half, second half), in the order its
  /// train() draws them; last_epoch: each client's first meta-step of its last pass.
  local::ClientPasses meta_batches(const ClientBatch& batch,
                                   const local::LocalUpdateSettings& settings,
                                   std::vector<std::size_t>& last_epoch) const {
    local::ClientPasses passes;
    const std::int64_t half = settings.batch_size;
    for (std::int64_t c = 0; c < batch.size(); ++c) {
      const auto& client = *batch.clients[static_cast<std::size_t>(c)];
      const auto n = batch.train_count(c);
      const auto offset = batch.train_offsets[static_cast<std::size_t>(c)];
      auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                                  static_cast<std::uint64_t>(client.id),
                                                  static_cast<std::uint64_t>(client.round));
      std::vector<std::vector<std::int64_t>> rows;
      for (int pass = 0; pass < 2 * settings.local_epochs; ++pass) {
        if (n < 2 * half) {
          throw_too_few(client.id, n);
        }
        const auto order = torch::randperm(n, generator, torch::kLong);
        if (pass == 2 * settings.local_epochs - 1) {
          last_epoch.push_back(rows.size() / 2);
        }
        for (std::int64_t start = 0; start + 2 * half <= n; start += 2 * half) {  // drop_last
          rows.push_back(offset_rows(order.narrow(0, start, half), offset));
          rows.push_back(offset_rows(order.narrow(0, start + half, half), offset));
        }
      }
      passes.push_back(std::move(rows));
    }
    return passes;
  }

  PerFedAvgOptions options_;
  std::int64_t batch_size_ = 100;
};

}  // namespace

void PerFedAvgOptions::visit(core::OptionVisitor& v) {
  v.option("perfedavg-alpha", alpha,
           "perfedavg: alpha, the personalisation step size (PFLlib: the local lr 0.005)",
           core::Range::above(0.0));
  v.option("perfedavg-beta", beta,
           "perfedavg: beta, the meta step size (PFLlib: the local lr 0.005)",
           core::Range::above(0.0));
}

double meta_step(model::Network& model, model::Objective objective,
                 const torch::Tensor& first_inputs, const torch::Tensor& first_targets,
                 const torch::Tensor& second_inputs, const torch::Tensor& second_targets,
                 double alpha, double beta) {
  std::vector<torch::Tensor> start;
  for (const auto& parameter : model.parameters()) {
    start.push_back(parameter.detach().clone());
  }
  const double loss = gradient_at(model, objective, first_inputs, first_targets);
  descend(model, alpha);  // w~ = w - alpha grad f(w)
  gradient_at(model, objective, second_inputs, second_targets);
  torch::NoGradGuard no_grad;
  auto parameters = model.parameters();
  for (std::size_t i = 0; i < parameters.size(); ++i) {  // w <- w - beta grad f(w~)
    parameters[i].copy_(start[i]);
    if (parameters[i].grad().defined()) {
      parameters[i].sub_(beta * parameters[i].grad());
    }
  }
  return loss;
}

PerFedAvg::PerFedAvg(const PerFedAvgOptions& options, const AlgorithmContext& context)
    : options_(options), context_(context) {}

ClientSide PerFedAvg::client_side() const {
  auto procedure = std::make_shared<PerFedAvgClient>(options_);
  procedure->set_batch_size(context_.batch_size);
  return {procedure, nullptr};
}

RoundPlan PerFedAvg::plan(const RoundInput& input) {
  return hard_plan(input.participants, std::vector<int>(input.participants.size(), 0), 1,
                   context_.train_samples);
}

}  // namespace cflrun::algo
