#pragma once
// Private to src/run: the state of one experiment on one rank, shared by experiment_setup.cpp
// (set-up: data, the algorithm's set-up round, models, result file), experiment_round.cpp (the
// round protocol of algo/algorithm.hpp), experiment_exchange.cpp (queries and plans between ranks)
// and experiment_record.cpp (what rank 0 records).
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

#include <torch/types.h>

#include <cflrun/algo/registry.hpp>
#include <cflrun/cluster/adjusted_rand_index.hpp>
#include <cflrun/core/build_info.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_rows.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/io/result_writer.hpp>
#include <cflrun/report/run_summary.hpp>
#include <cflrun/run/checkpoint.hpp>
#include <cflrun/run/client_data_setup.hpp>
#include <cflrun/run/client_group.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/participation.hpp>
#include <cflrun/run/progress.hpp>
#include <cflrun/run/round_exchange.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/run/source_holdouts.hpp>
#include <cflrun/run/output_files.hpp>
#include <cflrun/run/stability.hpp>
#include <cflrun/run/stop_signals.hpp>
#include <cflrun/run/test_fault.hpp>

namespace cflrun::run::detail {

constexpr std::size_t kPhases = std::size(kPhaseNames);
enum Phase : std::size_t { kQuery, kPlan, kLocalUpdate, kAggregate, kEvaluate, kIo };
/// Values each rank reports per hosted client after evaluation: accuracy, test loss, train loss.
constexpr std::size_t kClientFields = 3;

using Clock = std::chrono::steady_clock::time_point;

/// Seconds since `start`; moves `start` to now.
inline double seconds_since(Clock& start) {
  const auto now = std::chrono::steady_clock::now();
  const double seconds = std::chrono::duration<double>(now - start).count();
  start = now;
  return seconds;
}

/// What one round did, kept for the record.
struct RoundOutcome {
  std::vector<algo::ClientQuery> queries;  // every rank: the algorithm's queries of this round
  std::vector<algo::QueryAnswer> answers;  // rank 0: their answers
  algo::RoundPlan plan;                    // every rank (weights and models only where needed)
  std::vector<int> newcomers;        // stability switch: participants that answered loss vectors
  std::vector<double> train_loss;    // this rank's hosted clients
  std::vector<bool> trained_models;  // rank 0: [K] whether model s had a non-zero weight
  std::vector<double>
      weighted_head_sums;  // rank 0, with head weights: K*H head sums then K weights
};

/// Everything a run holds between rounds, on one rank.
class Experiment {
 public:
  Experiment(const cli::RunOptions& options, const comm::Communicator& comm)
      : options_(options), comm_(comm), paths_(output_paths(options.out)) {}

  void set_up();
  /// The first round to run: 0, or the checkpoint's next round with --resume.
  int first_round() const { return first_round_; }
  /// One round of the protocol of algo/algorithm.hpp.
  void run_round(int round);
  /// After a round: the checkpoint when due, and the stop on a signal (throws Interrupted).
  void end_round(int round);
  void finish();
  void fail(const std::string& message);

 private:
  // set-up (experiment_setup.cpp)
  void set_up_compute();
  void set_up_data();
  void share_train_samples();
  algo::AlgorithmContext algorithm_context() const;
  void set_up_algorithm();
  /// The algorithm's set-up round (Algorithm::set_up_queries / set_up), then K on every rank.
  void set_up_round();
  /// The clients present from the start (not newcomers), increasing ids.
  std::vector<int> initial_clients() const;
  void set_up_models();
  bool is_newcomer(int client) const;
  /// The clients `rank` hosts in this run's layout (--server-hosts-clients), the one rule every
  /// set-up step and gather uses.
  ClientRange hosted_by(int rank) const;
  void check_output_files() const;
  void open_result_file();
  /// --resume: the checkpoint's rounds into the fresh partial file, saying whether the old one was
  /// intact.
  void append_checkpoint_rows(const std::string& old_partial);
  /// The builds that ran this run's rounds, this one included (/config/build_history).
  void note_build();
  // checkpoints (experiment_checkpoint.cpp)
  void read_checkpoint_if_resuming();
  void restore_checkpoint();
  void save_checkpoint(int next_round);
  algo::AlgorithmState rank_state() const;
  void restore_rank_state(const algo::AlgorithmState& state);
  algo::AlgorithmState server_state() const;
  void restore_server_state(const algo::AlgorithmState& state);
  // one round (experiment_round.cpp)
  std::vector<int> draw_round_participants(int round) const;
  algo::RoundInput round_input(int round) const;
  void plan_round(int round, RoundOutcome& outcome, Clock& start);
  void plan_stable_round(RoundOutcome& outcome, Clock& start);
  local::LocalUpdateSettings local_update_settings() const;
  void add_fedprox_anchors(algo::RoundPlan& plan) const;
  std::vector<double> train(int round, RoundOutcome& outcome);
  std::vector<double> train_then_aggregate(int round, RoundOutcome& outcome);
  void deliver_reports(int round);
  void average(int round, const std::vector<double>& weighted_sums, RoundOutcome& outcome);
  std::vector<double> evaluate(int round, const RoundOutcome& outcome);
  // the clients' answers (experiment_exchange.cpp; the wire format is round_exchange.hpp)
  std::vector<double> answer_locally(const algo::ClientQuery& query, int round);
  std::vector<algo::QueryAnswer> answer_queries(const std::vector<algo::ClientQuery>& queries,
                                                int round);
  /// Floats of one client's answer to `kind` (K loss values, or the statistic's length).
  std::int64_t answer_length(algo::QueryKind kind) const;
  /// Rank 0: every rank's answers (`local`, one per query) gathered into QueryAnswers. Collective.
  std::vector<algo::QueryAnswer> gather_answers(const std::vector<algo::ClientQuery>& queries,
                                                const std::vector<std::vector<double>>& local);
  /// M, K and P of this run's plans.
  PlanShape plan_shape() const;
  // the record (experiment_record.cpp)
  algo::RoundFacts round_facts(const RoundOutcome& outcome) const;
  void record(int round, const RoundOutcome& outcome, const std::vector<double>& evaluations,
              io::RoundRecord& rec);
  void record_clients(const std::vector<int>& assignment, const std::vector<int>& start,
                      const std::vector<double>& evaluations, io::RoundRecord& rec);
  void record_loss_vectors(const RoundOutcome& outcome, io::RoundRecord& rec) const;
  void publish(int round, io::RoundRecord& rec, std::chrono::steady_clock::time_point& start);

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  OutputPaths paths_;                     // --out and the files beside it
  int first_round_ = 0;                   // > 0 when resuming
  std::optional<Checkpoint> checkpoint_;  // rank 0, with --resume: what to continue from
  std::vector<std::pair<std::string, std::string>>
      builds_;  // rank 0: (first round, build) that ran the rounds
  torch::Device device_{torch::kCPU};
  int threads_ = 1;
  std::unique_ptr<algo::Algorithm> algorithm_;  // every rank; decisions on rank 0
  int num_models_ = 0;                          // K, the same on every rank
  model::Architecture architecture_ = model::Architecture::kCnn;
  model::NetworkShape network_shape_;
  std::vector<std::int64_t> train_samples_;  // [M] n_i of every client, every rank
  std::unique_ptr<ModelSet> models_;
  torch::Tensor client_initial_model_;  // [P] float32: where every local model and warm-up starts
  std::unique_ptr<ClientGroup> clients_;
  std::shared_ptr<algo::ClientProcedure> procedure_;  // the algorithm's client procedure, or null
  std::shared_ptr<algo::ClientStatistic> statistic_;  // the answer to its own query, or null
  std::unique_ptr<StabilityMonitor> stability_;
  std::unique_ptr<io::ResultWriter> writer_;
  std::unique_ptr<SourceHoldouts>
      holdouts_;                 // rank 0, mixture partitions: every source's holdout set
  std::vector<double> mixture_;  // rank 0, mixture partitions: [M * S] true shares
  std::vector<int> true_clusters_;
  std::vector<int> participants_;  // this round's participating clients, increasing ids
  std::vector<double> ari_series_, accuracy_series_, test_loss_series_;  // per round, rank 0
  std::array<double, kPhases> phase_seconds_{};
  double total_seconds_ = 0.0;
  Clock last_checkpoint_ = std::chrono::steady_clock::now();  // for --checkpoint-seconds
};

}  // namespace cflrun::run::detail
