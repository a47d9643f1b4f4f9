// One FedSoft round on every rank (FedSoft Alg. 1): importance weights every tau rounds, the
// server's per-center client selection, proximal local updates of the clients' persistent local
// models, and centers averaged from them.
#include "experiment_state.hpp"

#include <numeric>

namespace cflrun::run::detail {

void Experiment::estimate_importance() {
  const auto k = static_cast<std::int64_t>(models_->size());
  hosted_importance_ = clients_->size() > 0 ? clients_->importance_weights(*models_, algorithm_->importance_smoother())
                                            : torch::empty({0, k}, torch::kFloat64);
  std::vector<double> local;  // per hosted client: u_1..u_K, then n_k
  for (int i = 0; i < clients_->size(); ++i) {
    const auto row = hosted_importance_[i].contiguous();
    local.insert(local.end(), row.data_ptr<double>(), row.data_ptr<double>() + k);
    local.push_back(static_cast<double>(clients_->train_counts()[static_cast<std::size_t>(i)]));
  }
  const auto gathered = comm_.gather(local);
  if (comm_.is_root()) {
    const auto m = static_cast<std::int64_t>(true_clusters_.size());
    const auto table = torch::tensor(gathered, torch::kFloat64).view({m, k + 1});
    importance_ = table.narrow(1, 0, k).clone();
    sample_counts_ = table.select(1, k).clone();
  }
}

torch::Tensor Experiment::soft_contributions(int round) {
  const auto m = static_cast<std::int64_t>(true_clusters_.size());
  auto contributions = torch::zeros({models_->size(), m}, torch::kFloat64);
  if (comm_.is_root()) {
    contributions = algorithm_->contributions(round, importance_, sample_counts_).contiguous();
  }
  comm_.broadcast(contributions.data_ptr<double>(), contributions.numel());
  return contributions;
}

std::vector<double> Experiment::soft_train(int round, const torch::Tensor& contributions,
                                           std::vector<double>& train_loss) {
  return comm_.reduce_sum(clients_->proximal_updates(contributions, hosted_importance_, *models_, round, options_.seed,
                                                     local_update_settings(), train_loss));
}

void Experiment::record_soft(const torch::Tensor& contributions, bool estimation, io::RoundRecord& rec) {
  const auto trained = contributions.gt(0.0).any(/*dim=*/0).sum().item<std::int64_t>();
  const auto traffic = soft_round_traffic(static_cast<int>(true_clusters_.size()), static_cast<int>(trained),
                                          models_->size(), models_->state_size(), estimation);
  rec.bytes_sent = traffic.sent;
  rec.bytes_received = traffic.received;
  const auto u = importance_.to(torch::kFloat32).contiguous();
  rec.importance.assign(u.data_ptr<float>(), u.data_ptr<float>() + u.numel());
}

void Experiment::run_soft_round(int round) {
  auto start = std::chrono::steady_clock::now();
  participants_.resize(true_clusters_.size());  // every client holds a local model and its u
  std::iota(participants_.begin(), participants_.end(), 0);
  const bool estimation = round % algorithm_->importance_interval() == 0;
  if (estimation) {
    estimate_importance();
  }
  phase_seconds_[kLossVectors] = seconds_since(start);
  const auto contributions = soft_contributions(round);
  const auto dominant = decide_assignment(round, {});  // the hard view: each client's largest u
  phase_seconds_[kClustering] = seconds_since(start);
  std::vector<double> train_loss;
  const auto sums = soft_train(round, contributions, train_loss);
  phase_seconds_[kLocalUpdate] = seconds_since(start);
  average(sums);
  phase_seconds_[kAggregation] = seconds_since(start);
  const auto evaluations = evaluate(dominant, train_loss);
  phase_seconds_[kEvaluation] = seconds_since(start);
  if (!comm_.is_root()) {
    return;
  }
  io::RoundRecord rec;
  record_clients(dominant, evaluations, rec);
  record_soft(contributions, estimation, rec);
  publish(round, rec, start);
}

}  // namespace cflrun::run::detail
