#pragma once
// Private to src/run: the state of one experiment on one rank, shared by experiment_setup.cpp
// (set-up: data, signatures, models, result file) and experiment_round.cpp (the rounds).
#include <cflrun/run/experiment.hpp>

#include <algorithm>
#include <array>
#include <chrono>
#include <exception>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <memory>
#include <optional>

#include <torch/torch.h>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/core/build_info.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/run/client_data_setup.hpp>
#include <cflrun/run/client_group.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/participation.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/run/round_traffic.hpp>
#include <cflrun/run/source_holdouts.hpp>
#include <cflrun/run/stability.hpp>

namespace cflrun::run::detail {

constexpr std::size_t kPhases = std::size(kPhaseNames);
enum Phase : std::size_t { kLossVectors, kClustering, kLocalUpdate, kAggregation, kEvaluation, kIo };
/// Values each rank reports per hosted client after evaluation: accuracy, test loss, train loss.
constexpr std::size_t kClientFields = 3;
/// Assignment of a client that does not take part in the round.
constexpr int kNotParticipating = -1;

/// Seconds since `start`; moves `start` to now.
inline double seconds_since(std::chrono::steady_clock::time_point& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

/// Everything a run holds between rounds, on one rank.
class Experiment {
 public:
  Experiment(const cli::RunOptions& options, const comm::Communicator& comm) : options_(options), comm_(comm) {}

  void set_up();
  /// One round: hard clustering (run_hard_round) or soft clustering (run_soft_round).
  void run_round(int round);
  void finish();
  void fail(const std::string& message);

 private:
  void set_up_compute();
  void set_up_data();
  void cluster_signatures();
  void set_up_models();
  bool is_newcomer(int client) const;
  std::int64_t signature_bytes();
  void open_result_file();
  std::vector<double> gather_loss_vectors(int round);
  std::vector<int> decide_assignment(int round, const std::vector<double>& loss_vectors);
  std::vector<int> keep_last_models(std::vector<int>& newcomers);
  std::vector<int> assign(int round, std::chrono::steady_clock::time_point& start, std::vector<double>& loss_vectors,
                          std::vector<int>& newcomers);
  LocalUpdateSettings local_update_settings() const;
  std::vector<double> train(int round, const std::vector<int>& assignment, std::vector<double>& train_loss);
  void average(const std::vector<double>& weighted_sums);
  std::vector<double> evaluate(const std::vector<int>& assignment, const std::vector<double>& train_loss);
  void record(const std::vector<int>& assignment, const std::vector<double>& loss_vectors,
              const std::vector<double>& evaluations, const std::vector<int>& newcomers, io::RoundRecord& rec);
  void record_clients(const std::vector<int>& assignment, const std::vector<double>& evaluations, io::RoundRecord& rec);
  void publish(int round, io::RoundRecord& rec, std::chrono::steady_clock::time_point& start);
  void run_hard_round(int round);
  // FedSoft (experiment_soft_round.cpp)
  bool soft() const { return algorithm_->importance_interval() > 0; }
  void run_soft_round(int round);
  void estimate_importance();
  torch::Tensor soft_contributions(int round);
  std::vector<double> soft_train(int round, const torch::Tensor& contributions, std::vector<double>& train_loss);
  void record_soft(const torch::Tensor& contributions, bool estimation, io::RoundRecord& rec);

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  torch::Device device_{torch::kCPU};
  int threads_ = 1;
  std::unique_ptr<algo::Algorithm> algorithm_;
  model::Architecture architecture_ = model::Architecture::kCnn;
  model::NetworkShape network_shape_;
  std::int64_t signature_floats_ = 0;  // d x p floats of one PACFL signature (rank 0)
  std::vector<bool> seen_;             // rank 0: clients that took part before (signature already sent)
  std::unique_ptr<ModelSet> models_;
  std::unique_ptr<ClientGroup> clients_;
  std::unique_ptr<StabilityMonitor> stability_;
  std::unique_ptr<io::ResultWriter> writer_;
  std::unique_ptr<SourceHoldouts> holdouts_;  // rank 0, mixture partitions: every source's holdout set
  std::vector<double> mixture_;               // rank 0, mixture partitions: [M * S] true shares
  torch::Tensor hosted_importance_;           // soft clustering: [m, K] this rank's clients' u
  torch::Tensor importance_;                  // soft clustering, rank 0: [M, K] every client's u
  torch::Tensor sample_counts_;               // soft clustering, rank 0: [M] n_k
  std::vector<int> true_clusters_;
  std::vector<int> participants_;  // this round's participating clients, increasing ids
  std::vector<double> ari_series_, accuracy_series_, test_loss_series_;  // per round, rank 0
  bool has_loss_vectors_ = false;  // the file holds loss vectors (rounds without them store NaN)
  std::array<double, kPhases> phase_seconds_{};
  double total_seconds_ = 0.0;
};

}  // namespace cflrun::run::detail
