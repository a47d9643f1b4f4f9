#include <cflrun/local/stacked_optimizer.hpp>

#include <cmath>
#include <string>

#include <torch/types.h>

#include <cflrun/core/error.hpp>

namespace cflrun::local {
namespace {

// torch::optim::AdamOptions' defaults, which make_local_optimizer keeps.
constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr double kEpsilon = 1e-8;

/// Floats of one client's share of the stacked parameters.
std::int64_t client_floats(const std::vector<torch::Tensor>& parameters) {
  std::int64_t floats = 0;
  for (const auto& p : parameters) {
    floats += p.numel() / p.size(0);
  }
  return floats;
}

}  // namespace

StackedOptimizer::StackedOptimizer(const std::vector<torch::Tensor>& parameters,
                                   const LocalUpdateSettings& settings)
    : parameters_(parameters), settings_(settings) {
  torch::NoGradGuard no_grad;
  for (const auto& parameter : parameters_) {
    first_.push_back(torch::zeros_like(parameter));
    if (settings_.solver == Solver::kAdam) {
      second_.push_back(torch::zeros_like(parameter));
    }
  }
  const auto capacity = parameters_.empty() ? 0 : parameters_.front().size(0);
  resumed_.assign(static_cast<std::size_t>(capacity), 0);
  taken_.assign(static_cast<std::size_t>(capacity), 0);
  learning_rates_.assign(static_cast<std::size_t>(capacity), settings_.learning_rate);
}

void StackedOptimizer::resume(std::int64_t c, const OptimizerState& state) {
  const auto floats = client_floats(parameters_);
  for (const auto* moment : {&state.first, &state.second}) {
    if (moment->defined() && (moment->dim() != 1 || moment->numel() != floats)) {
      throw ShapeError("StackedOptimizer::resume: expected moments of " + std::to_string(floats) +
                       " floats, but got " + c10::str(moment->sizes()));
    }
  }
  torch::NoGradGuard no_grad;
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    const auto row_floats = parameters_[i].numel() / parameters_[i].size(0);
    const auto take = [&](const torch::Tensor& moment, torch::Tensor& stack) {
      auto row = stack[c];
      if (moment.defined()) {
        row.copy_(moment.narrow(0, offset, row_floats).view(row.sizes()));
      } else {
        row.zero_();
      }
    };
    take(state.first, first_[i]);
    if (!second_.empty()) {
      take(state.second, second_[i]);
    }
    offset += row_floats;
  }
  resumed_[static_cast<std::size_t>(c)] = state.steps;
  learning_rates_[static_cast<std::size_t>(c)] = state.learning_rate;
}

OptimizerState StackedOptimizer::state(std::int64_t c) const {
  torch::NoGradGuard no_grad;
  const auto flat = [&](const std::vector<torch::Tensor>& stacks) {
    std::vector<torch::Tensor> pieces;
    for (const auto& stack : stacks) {
      pieces.push_back(stack[c].reshape({-1}));
    }
    return torch::cat(pieces).to(torch::kCPU);
  };
  OptimizerState state;
  state.steps = resumed_[static_cast<std::size_t>(c)] + taken_[static_cast<std::size_t>(c)];
  state.first = flat(first_);
  state.second = second_.empty() ? torch::Tensor() : flat(second_);
  state.learning_rate = learning_rates_[static_cast<std::size_t>(c)];
  return state;
}

bool StackedOptimizer::uniform(std::int64_t g) const {
  for (std::int64_t c = 1; c < g; ++c) {
    if (resumed_[static_cast<std::size_t>(c)] != resumed_[0] ||
        learning_rates_[static_cast<std::size_t>(c)] != learning_rates_[0]) {
      return false;
    }
  }
  return true;
}

torch::Tensor StackedOptimizer::per_client(const std::vector<double>& values, std::int64_t g,
                                           std::size_t i) const {
  std::vector<std::int64_t> shape(static_cast<std::size_t>(parameters_[i].dim()), 1);
  shape[0] = g;
  return torch::tensor(std::vector<double>(values.begin(), values.begin() + g), torch::kFloat64)
      .to(parameters_[i].device(), parameters_[i].scalar_type())
      .view(shape);
}

void StackedOptimizer::step(std::int64_t g, std::int64_t step) {
  torch::NoGradGuard no_grad;
  const bool same = uniform(g);
  std::vector<double> steps;  // each client's absolute step
  for (std::int64_t c = 0; c < g; ++c) {
    steps.push_back(static_cast<double>(resumed_[static_cast<std::size_t>(c)] + step));
    taken_[static_cast<std::size_t>(c)] = step;
  }
  for (std::size_t i = 0; i < parameters_.size(); ++i) {
    if (!parameters_[i].grad().defined()) {
      continue;
    }
    auto p = parameters_[i].narrow(0, 0, g);
    auto grad = parameters_[i].grad().narrow(0, 0, g);
    if (settings_.weight_decay != 0.0) {
      grad = grad.add(p, settings_.weight_decay);
    }
    auto first = first_[i].narrow(0, 0, g);
    if (settings_.solver == Solver::kSgd) {  // torch::optim::SGD, dampening 0, no Nesterov
      if (settings_.momentum != 0.0) {
        if (same) {
          grad = steps[0] == 1.0 ? first.copy_(grad) : first.mul_(settings_.momentum).add_(grad);
        } else {  // a client's first step copies the gradient: its buffer times 0
          std::vector<double> factors;
          for (const double s : steps) {
            factors.push_back(s == 1.0 ? 0.0 : settings_.momentum);
          }
          grad = first.mul_(per_client(factors, g, i)).add_(grad);
        }
      }
      if (same) {
        p.add_(grad, -learning_rates_[0]);
      } else {
        p.sub_(grad * per_client(learning_rates_, g, i));
      }
      continue;
    }
    auto second = second_[i].narrow(0, 0, g);  // torch::optim::Adam, no AMSGrad
    first.mul_(kBeta1).add_(grad, 1.0 - kBeta1);
    second.mul_(kBeta2).addcmul_(grad, grad, 1.0 - kBeta2);
    if (same) {
      const double bias_correction1 = 1.0 - std::pow(kBeta1, steps[0]);
      const double bias_correction2 = 1.0 - std::pow(kBeta2, steps[0]);
      const auto denominator = (second.sqrt() / std::sqrt(bias_correction2)).add_(kEpsilon);
      p.addcdiv_(first, denominator, -learning_rates_[0] / bias_correction1);
      continue;
    }
    std::vector<double> root_correction2;
    std::vector<double> step_sizes;
    for (std::int64_t c = 0; c < g; ++c) {
      const double s = steps[static_cast<std::size_t>(c)];
      root_correction2.push_back(std::sqrt(1.0 - std::pow(kBeta2, s)));
      step_sizes.push_back(learning_rates_[static_cast<std::size_t>(c)] /
                           (1.0 - std::pow(kBeta1, s)));
    }
    const auto denominator = (second.sqrt() / per_client(root_correction2, g, i)).add_(kEpsilon);
    p.sub_(first / denominator * per_client(step_sizes, g, i));
  }
}

}  // namespace cflrun::local
