#pragma once
// Private to src/run: a run's checkpoints, read by --resume and written when due
// (checkpointer.cpp).
#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/cli/run_options.hpp>
#include <cflrun/comm/communicator.hpp>
#include <cflrun/local/local_update.hpp>
#include <cflrun/run/checkpoint.hpp>
#include <cflrun/run/clients/client_group.hpp>
#include <cflrun/run/model_set.hpp>
#include <cflrun/run/output_files.hpp>
#include <cflrun/run/stability.hpp>

#include "round_outcome.hpp"
#include "round_recorder.hpp"

namespace cflrun::run::detail {

/// The parts of a run a checkpoint holds, on one rank (borrowed from the round driver).
struct CheckpointParts {
  ModelSet& models;                     // [K, P] the server models, the same on every rank
  algo::Algorithm& algorithm;           // its state on rank 0
  ClientGroup& clients;                 // this rank's clients: local models, kept optimizers
  StabilityMonitor& stability;          // this rank's view of the stability switch
  RoundRecorder& recorder;              // rank 0: the metric series and the rows written so far
  local::LocalUpdateSettings settings;  // the kept optimizers are rebuilt with these
};

/// A run's checkpoint <out>.checkpoint (checkpoint.hpp): with --resume rank 0 reads and checks it
/// at set-up and every rank restores its part from it; after a round it is written when due
/// (--checkpoint-every, --checkpoint-seconds, or a signal), every rank's state gathered to rank 0,
/// the single writer. Keeps the builds that ran the rounds (/config/build_history). The functions
/// say which are collective; the others act on rank 0 only.
/// @throws DataError if the checkpoint is damaged or disagrees with the partial file it restores,
///         ConfigError if it was written by other options or another number of ranks, Hdf5Error
///         if it cannot be written.
class Checkpointer {
 public:
  Checkpointer(const cli::RunOptions& options, const comm::Communicator& comm, OutputPaths paths)
      : options_(options), comm_(comm), paths_(std::move(paths)) {}

  /// Rank 0, --resume: reads and checks the checkpoint if there is one (else says so on stdout).
  /// With --overwrite, a damaged checkpoint or one of other options is left for this run to
  /// replace, with a note, and the run starts from round 1. Not collective.
  /// @throws DataError if damaged, ConfigError if of other options (both without --overwrite) or
  ///         of another number of ranks.
  void read_if_resuming();
  /// Collective: every rank learns the first round to run (rank 0's, from read_if_resuming).
  void share_first_round() { comm_.broadcast(&first_round_, 1); }
  /// The first round to run: 0, or the checkpoint's next round with --resume.
  int first_round() const { return first_round_; }
  /// Collective: with a checkpoint read, the models, the algorithm, the recorder's series and every
  /// rank's state are restored from it; nothing otherwise. @throws DataError if a state is damaged.
  void restore(const CheckpointParts& parts);

  /// Rank 0, before the result file is written afresh: how the old partial file differs from the
  /// checkpoint's rows ("" when it matches, or without a checkpoint).
  std::string partial_difference() const;
  /// Rank 0: adds this build and its placement (--client-batch, --threads, --parallel-clients,
  /// --device as given, which move the low bits) to what ran the rounds; a warning if another
  /// build began the run, a note if the same build ran the earlier rounds placed otherwise.
  void note_build();
  /// Rank 0: "round 1: 0.9.0 (abc123); client-batch 0, threads 1, parallel-clients 1, device cpu"
  /// lines, one per build or placement that ran the rounds from there on.
  std::string build_history() const;
  /// Rank 0, resuming: the checkpoint's rounds into the recorder's fresh file; says on stdout if
  /// the old partial file (`old_partial`, partial_difference) did not match. @throws DataError if
  /// the rounds do not match the checkpoint's round count.
  void append_rows(RoundRecorder& recorder, const std::string& old_partial) const;

  /// Collective: whether a checkpoint is due before round `next_round` (0-based): every
  /// --checkpoint-every rounds, or --checkpoint-seconds after the last on rank 0's clock; never
  /// after the last round.
  bool due(int next_round) const;
  /// Collective: gathers every rank's state and writes the checkpoint on rank 0.
  /// @throws Hdf5Error if it cannot be written (the old checkpoint stays).
  void save(int next_round, const CheckpointParts& parts);
  /// Rank 0, the run complete: removes the checkpoint (and a kill's leftover .tmp). Never throws.
  void remove() const;

 private:
  /// Reads the checkpoint and checks its options. Returns false (no checkpoint kept) where
  /// --overwrite lets this run replace a damaged checkpoint or one of other options.
  /// @throws DataError or ConfigError as read_if_resuming.
  bool read_resumable_checkpoint();
  algo::AlgorithmState rank_state(const CheckpointParts& parts) const;
  void restore_rank_state(const CheckpointParts& parts, const algo::AlgorithmState& state) const;

  const cli::RunOptions& options_;
  const comm::Communicator& comm_;
  OutputPaths paths_;
  int first_round_ = 0;                   // > 0 when resuming
  std::optional<Checkpoint> checkpoint_;  // rank 0, with --resume: what to continue from
  std::vector<std::pair<std::string, std::string>>
      builds_;  // rank 0: (first round, build) that ran the rounds
  Clock last_checkpoint_ = std::chrono::steady_clock::now();  // for --checkpoint-seconds
};

}  // namespace cflrun::run::detail
