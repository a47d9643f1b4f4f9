#include <cflrun/run/stability.hpp>

namespace cflrun::run {

StabilityMonitor::StabilityMonitor(const comm::Communicator& comm, int first, int end, int window, double fraction)
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

}  // namespace cflrun::run
