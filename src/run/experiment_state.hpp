#pragma once
// Private to src/run: one experiment on one rank. RunState holds what a run has once set up;
// RunSetUp (experiment_setup.cpp) sets it up (compute, data, the algorithm's set-up round, models,
// result file), RoundDriver (experiment_round.cpp) runs the round protocol of algo/algorithm.hpp,
// QueryExchange (experiment_exchange.cpp) answers the server's queries and gathers the answers, and
// Experiment (experiment.cpp) ends rounds and the run. What rank 0 records is round_recorder.hpp's;
// the checkpoints are checkpointer.hpp's.
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
#include "population_tracker.hpp"
#include "round_outcome.hpp"
#include "round_recorder.hpp"

namespace cflrun::run::detail {

/// What a run holds on one rank once set up (every rank; decisions and writes are rank 0's), and
/// the rules several steps share. Filled by RunSetUp, used by RoundDriver, QueryExchange and
/// Experiment.
struct RunState {
  RunState(const cli::RunOptions& run_options, const comm::Communicator& communicator)
      : options(run_options),
        comm(communicator),
        paths(output_paths(run_options.out)),
        recorder(run_options, communicator, paths),
        checkpointer(run_options, communicator, paths) {}

  /// The clients `rank` hosts in this run's layout (--server-hosts-clients), the one rule every
  /// set-up step and gather uses.
  ClientRange hosted_by(int rank) const;
  /// Whether `client` joins late (--newcomers: the last of every cluster's clients).
  bool is_newcomer(int client) const;
  /// The clients' local solver from the options and the algorithm's proximal term.
  local::LocalUpdateSettings local_update_settings() const;
  /// M, K and P of this run's plans.
  PlanShape plan_shape() const;
  /// What a checkpoint holds of this rank's run (checkpointer.hpp).
  CheckpointParts checkpoint_parts();

  const cli::RunOptions& options;
  const comm::Communicator& comm;
  OutputPaths paths;          // --out and the files beside it
  RoundRecorder recorder;     // rank 0's record: the result file, series, true clusters
  Checkpointer checkpointer;  // --resume and the checkpoints
  torch::Device device{torch::kCPU};
  int threads = 1;
  std::unique_ptr<algo::Algorithm> algorithm;  // every rank; decisions on rank 0
  int num_clients = 0;                         // M, the same on every rank
  int num_models = 0;                          // K, the same on every rank
  model::Architecture architecture = model::Architecture::kCnn;
  model::NetworkShape network_shape;
  std::vector<std::int64_t> train_samples;  // [M] n_i of every client, every rank
  std::unique_ptr<ModelSet> models;
  torch::Tensor client_initial_model;  // [P] float32: where every local model and warm-up starts
  std::unique_ptr<ClientGroup> clients;
  std::shared_ptr<algo::ClientProcedure> procedure;  // the algorithm's, or algo::StandardClient
  std::shared_ptr<algo::ClientStatistic> statistic;  // the answer to its own query, or null
  std::unique_ptr<StabilityMonitor> stability;
  std::optional<PopulationSpec> population_spec;        // a changing population's (issue 45)
  std::shared_ptr<const data::ClientData> client_data;  // kept for a changing population
  std::unique_ptr<PopulationTracker> population;        // a changing population, else null
};

/// The clients' answers to the server's queries on this rank (loss vectors, or the algorithm's own
/// statistic through the run's services), gathered to rank 0 (round_exchange.hpp). Collective.
class QueryExchange {
 public:
  explicit QueryExchange(RunState& run) : run_(run) {}
  /// This rank's answers to `query` for round `round` ([p, L] row-major, p its hosted clients
  /// among the query's; empty where it hosts none).
  std::vector<double> answer_locally(const algo::ClientQuery& query, int round);
  /// Every rank's answers to `queries`, gathered on rank 0.
  std::vector<algo::QueryAnswer> answer_queries(const std::vector<algo::ClientQuery>& queries,
                                                int round);
  /// Rank 0: every rank's answers (`local`, one per query) gathered into QueryAnswers.
  std::vector<algo::QueryAnswer> gather_answers(const std::vector<algo::ClientQuery>& queries,
                                                const std::vector<std::vector<double>>& local);

 private:
  RunState& run_;
};

/// Sets a run up on every rank (experiment_setup.cpp): compute, data, the algorithm and its
/// set-up round, models, the clients' execution, the result file. Every step is collective.
/// @throws ReportedError on every rank if a step failed on any rank.
class RunSetUp {
 public:
  explicit RunSetUp(RunState& run) : run_(run) {}
  /// The whole set-up, step after step.
  void set_up();

 private:
  void set_up_compute();
  void check_output_files() const;
  void set_up_data();
  void share_train_samples();
  /// A changing population: its schedule from the clients' local steps, the hosted clients'
  /// samples as of round 1, the recorder told.
  void set_up_population();
  algo::AlgorithmContext algorithm_context() const;
  void set_up_algorithm();
  /// The algorithm's set-up round (Algorithm::set_up_queries / set_up), then K on every rank.
  void set_up_round();
  /// The clients present from the start (not newcomers), increasing ids.
  std::vector<int> initial_clients() const;
  void set_up_models();
  /// Rank 0: the run's one line on stdout (what runs where).
  void announce() const;
  /// Rank 0: the result file, written afresh (with the checkpoint's rounds when resuming).
  void open_result_file();
  /// The run's /config attributes: its options, the build, the machine and the build history.
  std::vector<std::pair<std::string, std::string>> config_attributes() const;

  RunState& run_;
};

/// One round of the protocol of algo/algorithm.hpp on every rank (experiment_round.cpp): queries,
/// plan, local updates, aggregation, evaluation, record. Every function is collective.
class RoundDriver {
 public:
  explicit RoundDriver(RunState& run) : run_(run) {}
  /// Round `round` (0-based), recorded by rank 0.
  void run_round(int round);

 private:
  std::vector<int> draw_round_participants(int round) const;
  algo::RoundInput round_input(int round, const std::vector<int>& participants) const;
  void plan_round(int round, RoundOutcome& outcome, Clock& start);
  void plan_stable_round(RoundOutcome& outcome, Clock& start);
  void add_fedprox_anchors(algo::RoundPlan& plan) const;
  std::vector<double> train(int round, RoundOutcome& outcome);
  std::vector<double> train_then_aggregate(int round, RoundOutcome& outcome);
  void deliver_reports(int round, RoundOutcome& outcome);
  void average(int round, const std::vector<double>& weighted_sums, RoundOutcome& outcome);
  /// Rank 0: the models from the reduced weighted sums [K P + K] (model averaging or a gradient
  /// step, FedPAC's heads from their own sums) and which models any client trained.
  void average_weighted_sums(const std::vector<double>& weighted_sums, RoundOutcome& outcome);
  std::vector<double> evaluate(int round, const RoundOutcome& outcome);

  RunState& run_;
};

/// One experiment on one rank: its set-up, rounds, checkpoints and end. Every function is
/// collective: every rank calls it in the same order.
/// @throws ReportedError from set_up on every rank if a set-up step failed on any rank;
///         Interrupted from end_round on every rank after a signal; Error from a round.
class Experiment {
 public:
  Experiment(const cli::RunOptions& options, const comm::Communicator& comm)
      : run_(options, comm) {}

  void set_up() { RunSetUp(run_).set_up(); }
  /// The first round to run: 0, or the checkpoint's next round with --resume.
  int first_round() const { return run_.checkpointer.first_round(); }
  /// One round of the protocol of algo/algorithm.hpp.
  void run_round(int round) { RoundDriver(run_).run_round(round); }
  /// After a round: the checkpoint when due, and the stop on a signal (throws Interrupted).
  void end_round(int round);
  /// After the last round: rank 0 writes the summary, publishes <out> and removes the checkpoint.
  void finish();
  /// After an error in a round: rank 0 marks the result file failed (removed if it has no round).
  void fail(const std::string& message) { run_.recorder.fail(message); }

 private:
  RunState run_;
};

}  // namespace cflrun::run::detail
