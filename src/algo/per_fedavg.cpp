#include <cflrun/algo/per_fedavg.hpp>

#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

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

 private:
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
