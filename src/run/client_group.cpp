#include <cflrun/run/client_group.hpp>

#include <cflrun/local/scoring.hpp>
#include "stopwatch.hpp"

#include <limits>

#include <torch/types.h>

#include <cflrun/model/flat_state.hpp>

namespace cflrun::run {

ClientGroup::ClientGroup(const data::ClientData& data, int first, int end,
                         model::Objective objective, torch::Device device)
    : first_(first),
      objective_(objective),
      device_(device),
      train_(data, first, end, /*train=*/true, device),
      test_(data, first, end, /*train=*/false, device) {}

std::vector<std::int64_t> ClientGroup::hosted_among(const std::vector<int>& clients) const {
  std::vector<std::int64_t> hosted;
  for (int client : clients) {
    if (hosts(client)) {
      hosted.push_back(client - first_);
    }
  }
  return hosted;
}

ClientEvaluation ClientGroup::evaluate(const std::vector<int>& assignment, ModelSet& models) {
  Stopwatch watch(compute_seconds_);
  const auto m = static_cast<std::int64_t>(size());
  const auto options = torch::TensorOptions(device_).dtype(torch::kFloat64);
  auto loss_sums = torch::zeros({m}, options);
  auto correct_sums = torch::zeros({m}, options);
  std::vector<std::int64_t> local_model(assignment.begin() + first_,
                                        assignment.begin() + first_ + m);
  const auto model_of_sample =
      torch::tensor(local_model, torch::kLong).to(device_).index_select(0, test_.owner());
  for (int j = 0; j < models.size(); ++j) {
    const auto rows = model_of_sample.eq(j).nonzero().flatten();
    if (rows.numel() > 0) {
      local::add_scores(models.load(j), objective_, test_.inputs(), test_.targets(), test_.owner(),
                        rows, loss_sums, correct_sums);
    }
  }
  return per_client_means(loss_sums, correct_sums,
                          torch::tensor(local_model, torch::kLong).lt(0).to(device_));
}

ClientEvaluation ClientGroup::evaluate_local_models(ModelSet& models) {
  Stopwatch watch(compute_seconds_);
  const auto m = static_cast<std::int64_t>(size());
  const auto options = torch::TensorOptions(device_).dtype(torch::kFloat64);
  auto loss_sums = torch::zeros({m}, options);
  auto correct_sums = torch::zeros({m}, options);
  auto& model = models.working_model();
  for (std::int64_t i = 0; i < m; ++i) {
    model::load_flat_state(model, local_states_[i]);
    const auto rows = test_.owner().eq(i).nonzero().flatten();
    local::add_scores(model, objective_, test_.inputs(), test_.targets(), test_.owner(), rows,
                      loss_sums, correct_sums);
  }
  return per_client_means(loss_sums, correct_sums, torch::zeros({m}, options.dtype(torch::kBool)));
}

ClientEvaluation ClientGroup::per_client_means(const torch::Tensor& loss_sums,
                                               const torch::Tensor& correct_sums,
                                               const torch::Tensor& absent) const {
  const auto counts = torch::tensor(test_.counts(), torch::kFloat64).to(device_);
  const auto nan = std::numeric_limits<double>::quiet_NaN();
  const auto no_accuracy = model::has_accuracy(objective_) ? absent : torch::ones_like(absent);
  const auto accuracy =
      (correct_sums / counts).masked_fill(no_accuracy, nan).to(torch::kCPU).contiguous();
  const auto test_loss = (loss_sums / counts).masked_fill(absent, nan).to(torch::kCPU).contiguous();
  const auto m = static_cast<std::int64_t>(size());
  return {std::vector<double>(accuracy.data_ptr<double>(), accuracy.data_ptr<double>() + m),
          std::vector<double>(test_loss.data_ptr<double>(), test_loss.data_ptr<double>() + m)};
}

double ClientGroup::take_compute_seconds() {
  const double seconds = compute_seconds_;
  compute_seconds_ = 0.0;
  return seconds;
}

}  // namespace cflrun::run
