#include <cflrun/run/stability.hpp>

#include <torch/types.h>

namespace cflrun::run {

StabilityMonitor::StabilityMonitor(const comm::Communicator& comm, int first, int end, int window,
                                   double fraction)
    : comm_(comm),
      first_(first),
      end_(end),
      window_(window),
      fraction_(fraction),
      last_model_(static_cast<std::size_t>(end - first), -1),
      streak_(static_cast<std::size_t>(end - first), 0) {}

bool StabilityMonitor::check(int round, const std::vector<int>& participants) {
  if (!enabled() || switched()) {
    return switched();
  }
  std::vector<double> counts{0.0, 0.0};  // stable hosted participants, hosted participants
  for (int client : participants) {
    if (hosts(client)) {
      counts[0] += streak_[static_cast<std::size_t>(client - first_)] > window_ ? 1.0 : 0.0;
      counts[1] += 1.0;
    }
  }
  const auto totals = comm_.reduce_sum(counts);
  int now = 0;
  if (comm_.is_root()) {
    now = totals[1] > 0.0 && totals[0] >= fraction_ * totals[1] ? 1 : 0;
  }
  comm_.broadcast(&now, 1);
  if (now != 0) {
    switch_round_ = round;
  }
  return switched();
}

std::vector<int> StabilityMonitor::last_models(const std::vector<int>& participants) const {
  std::vector<double> local;
  for (int client : participants) {
    if (hosts(client)) {
      local.push_back(last_model_[static_cast<std::size_t>(client - first_)]);
    }
  }
  const auto gathered = comm_.gather(local);
  return std::vector<int>(gathered.begin(), gathered.end());
}

void StabilityMonitor::record(const std::vector<int>& assignment) {
  for (int client = first_; client < end_; ++client) {
    const int model = assignment.at(static_cast<std::size_t>(client));
    if (model < 0) {
      continue;
    }
    const auto at = static_cast<std::size_t>(client - first_);
    streak_[at] = model == last_model_[at] ? streak_[at] + 1 : 1;
    last_model_[at] = model;
  }
}

namespace {

torch::Tensor as_tensor(const std::vector<int>& values) {
  return torch::tensor(std::vector<std::int64_t>(values.begin(), values.end()), torch::kInt64);
}

std::vector<int> as_ints(const torch::Tensor& tensor) {
  const auto values = tensor.contiguous();
  return std::vector<int>(values.data_ptr<std::int64_t>(),
                          values.data_ptr<std::int64_t>() + values.numel());
}

}  // namespace

algo::AlgorithmState StabilityMonitor::state() const {
  return {{"stability_last_model", as_tensor(last_model_)},
          {"stability_streak", as_tensor(streak_)},
          {"stability_switch_round",
           torch::tensor({static_cast<std::int64_t>(switch_round_)}, torch::kInt64)}};
}

void StabilityMonitor::restore(const algo::AlgorithmState& state) {
  const auto hosted = static_cast<std::int64_t>(last_model_.size());
  last_model_ = as_ints(algo::state_tensor(state, "stability", "stability_last_model", {hosted}));
  streak_ = as_ints(algo::state_tensor(state, "stability", "stability_streak", {hosted}));
  switch_round_ = static_cast<int>(
      algo::state_tensor(state, "stability", "stability_switch_round", {1}).item<std::int64_t>());
}

}  // namespace cflrun::run
