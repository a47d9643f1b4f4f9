#include <cflrun/local/stacked_optimizer.hpp>

#include <cmath>

#include <torch/types.h>

namespace cflrun::local {
namespace {

// torch::optim::AdamOptions' defaults, which make_local_optimizer keeps.
constexpr double kBeta1 = 0.9;
constexpr double kBeta2 = 0.999;
constexpr double kEpsilon = 1e-8;

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
}

void StackedOptimizer::step(std::int64_t g, std::int64_t step) {
  torch::NoGradGuard no_grad;
  const double lr = settings_.learning_rate;
  const double bias_correction1 = 1.0 - std::pow(kBeta1, static_cast<double>(step));
  const double bias_correction2 = 1.0 - std::pow(kBeta2, static_cast<double>(step));
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
        grad = step == 1 ? first.copy_(grad) : first.mul_(settings_.momentum).add_(grad);
      }
      p.add_(grad, -lr);
      continue;
    }
    auto second = second_[i].narrow(0, 0, g);  // torch::optim::Adam, no AMSGrad
    first.mul_(kBeta1).add_(grad, 1.0 - kBeta1);
    second.mul_(kBeta2).addcmul_(grad, grad, 1.0 - kBeta2);
    const auto denominator = (second.sqrt() / std::sqrt(bias_correction2)).add_(kEpsilon);
    p.addcdiv_(first, denominator, -lr / bias_correction1);
  }
}

}  // namespace cflrun::local
