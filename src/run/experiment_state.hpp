#pragma once
// Private to src/run: the round driver of one experiment on one rank, shared by
// experiment_setup.cpp (set-up: data, the algorithm's set-up round, models, result file),
// experiment_round.cpp (the round protocol of algo/algorithm.hpp), experiment_exchange.cpp (queries
// and plans between ranks) and experiment.cpp (the end of a round and of the run). What rank 0
// records is round_recorder.hpp's; the checkpoints are checkpointer.hpp's.
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
#include <cflrun/core/build_info.hpp>
#include <cflrun/io/result_reader.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/run/checkpoint.hpp>
#include <cflrun/run/client_data_setup.hpp>
#include <cflrun/run/clients/client_group.hpp>
#include <cflrun/run/collective_step.hpp>
#include <cflrun/run/compute_setup.hpp>
#include <cflrun/run/participation.hpp>
#include <cflrun/run/round_exchange.hpp>
#include <cflrun/run/rank_layout.hpp>
#include <cflrun/run/output_files.hpp>
#include <cflrun/run/stability.hpp>
#include <cflrun/run/stop_signals.hpp>
#include <cflrun/run/test_fault.hpp>

#include "checkpointer.hpp"
#include "round_outcome.hpp"
#include "round_recorder.hpp"

namespace cflrun::run::detail {

/// The round driver of a run on one rank: sets the run up (compute, data, the algorithm and its
/// set-up round, models, result file), runs the round protocol of algo/algorithm.hpp (queries,
/// plan, local updates, aggregation, evaluation) and the exchange between ranks, and hands each
/// round to its recorder (rank 0's record) and its checkpointer. Every function is collective:
/// every rank calls it in the same order; decisions and writes are rank 0's.
/// @throws ReportedError from set_up on every rank if a set-up step failed on any rank;
///         Interrupted from end_round on every rank after a signal; Error from a round.
class Experiment {
 public:
  Experiment(const cli::RunOptions& options, const comm::Communicator& comm)
      : options_(options),
        comm_(comm),
        paths_(output_paths(options.out)),
        recorder_(options, comm, paths_),
        checkpointer_(options, comm, paths_) {}

  void set_up();
  /// The first round to run: 0, or the checkpoint's next round with --resume.
  int first_round() const { return checkpointer_.first_round(); }
  /// One round of the protocol of algo/algorithm.hpp.
  void run_round(int round);
  /// After a round: the checkpoint when due, and the stop on a signal (throws Interrupted).
  void end_round(int round);
  /// After the last round: rank 0 writes the summary, publishes <out> and removes the checkpoint.
  void finish();
  /// After an error in a round: rank 0 marks the result file failed (removed if it has no round).
  void fail(const std::string& message) { recorder_.fail(message); }

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
  /// Rank 0: the result file, written afresh (with the checkpoint's rounds when resuming).
  void open_result_file();
  /// The run's /config attributes: its options, the build, the machine and the build history.
  std::vector<std::pair<std::string, std::string>> config_attributes() const;
  /// What a checkpoint holds of this rank's run (checkpointer.hpp).
  CheckpointParts checkpoint_parts();
  // one round (experiment_round.cpp)
  std::vector<int> draw_round_participants(int round) const;
  algo::RoundInput round_input(int round, const std::vector<int>& participants) const;
  void plan_round(int round, RoundOutcome& outcome, Clock& start);
  void plan_stable_round(RoundOutcome& outcome, Clock& start);
  local::LocalUpdateSettings local_update_settings() const;
  void add_fedprox_anchors(algo::RoundPlan& plan) const;
  std::vector<double> train(int round, RoundOutcome& outcome);
  std::vector<double> train_then_aggregate(int round, RoundOutcome& outcome);
  void deliver_reports(int round, RoundOutcome& outcome);
  void average(int round, const std::vector<double>& weighted_sums, RoundOutcome& outcome);
  /// Rank 0: the models from the reduced weighted sums [K P + K] (model averaging or a gradient
  /// step, FedPAC's heads from their own sums) and which models any client trained.
  void average_weighted_sums(const std::vector<double>& weighted_sums, RoundOutcome& outcome);
  std::vector<double> evaluate(int round, const RoundOutcome& outcome);
  // the clients' answers (experiment_exchange.cpp; the wire format is round_exchange.hpp)
  std::vector<double> answer_locally(const algo::ClientQuery& query, int round);
  std::vector<algo::QueryAnswer> answer_queries(const std::vector<algo::ClientQuery>& queries,
                                                int round);
  /// Rank 0: every rank's answers (`local`, one per query) gathered into QueryAnswers. Collective.
  std::vector<algo::QueryAnswer> gather_answers(const std::vector<algo::ClientQuery>& queries,
                                                const std::vector<std::vector<double>>& local);
  /// M, K and P of this run's plans.
  PlanShape plan_shape() const;

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  OutputPaths paths_;          // --out and the files beside it
  RoundRecorder recorder_;     // rank 0's record: the result file, series, true clusters
  Checkpointer checkpointer_;  // --resume and the checkpoints
  torch::Device device_{torch::kCPU};
  int threads_ = 1;
  std::unique_ptr<algo::Algorithm> algorithm_;  // every rank; decisions on rank 0
  int num_clients_ = 0;                         // M, the same on every rank
  int num_models_ = 0;                          // K, the same on every rank
  model::Architecture architecture_ = model::Architecture::kCnn;
  model::NetworkShape network_shape_;
  std::vector<std::int64_t> train_samples_;  // [M] n_i of every client, every rank
  std::unique_ptr<ModelSet> models_;
  torch::Tensor client_initial_model_;  // [P] float32: where every local model and warm-up starts
  std::unique_ptr<ClientGroup> clients_;
  std::shared_ptr<algo::ClientProcedure> procedure_;  // the algorithm's, or algo::StandardClient
  std::shared_ptr<algo::ClientStatistic> statistic_;  // the answer to its own query, or null
  std::unique_ptr<StabilityMonitor> stability_;
};

}  // namespace cflrun::run::detail
