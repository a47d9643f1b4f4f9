// Checkpoints of a run: what every rank keeps across rounds, written after a round (and when a
// signal stops the run) and read back by --resume; the builds that ran the rounds.
#include "checkpointer.hpp"

#include <chrono>
#include <filesystem>
#include <iostream>
#include <string_view>
#include <system_error>

#include <cflrun/core/build_info.hpp>
#include <cflrun/io/result_rows.hpp>
#include <cflrun/run/round_exchange.hpp>

namespace cflrun::run::detail {

algo::AlgorithmState Checkpointer::rank_state(const CheckpointParts& parts) const {
  auto state = parts.clients.hosted().state();
  for (auto& [name, tensor] : parts.stability.state()) {
    state.emplace(name, tensor);
  }
  return state;
}

void Checkpointer::restore_rank_state(const CheckpointParts& parts,
                                      const algo::AlgorithmState& state) const {
  parts.clients.hosted().restore(state, parts.models.working_model(), parts.settings);
  parts.stability.restore(state);
}

void Checkpointer::save(int next_round, const CheckpointParts& parts) {
  auto ranks = gather_rank_states(comm_, rank_state(parts));
  if (comm_.is_root()) {
    Checkpoint checkpoint;
    checkpoint.next_round = next_round;
    checkpoint.config = options_.to_attributes();
    checkpoint.models = parts.models.states();
    checkpoint.algorithm = parts.algorithm.state();
    checkpoint.server = parts.recorder.state();
    checkpoint.rows = parts.recorder.kept_rows();
    checkpoint.builds = builds_;
    checkpoint.ranks = std::move(ranks);
    write_checkpoint(paths_.checkpoint, checkpoint);
  }
  last_checkpoint_ = std::chrono::steady_clock::now();
}

bool Checkpointer::read_resumable_checkpoint() {
  constexpr const char* kStartAgain = "start again with --overwrite";
  try {
    checkpoint_ =
        read_checkpoint(paths_.checkpoint);  // verified: a damaged checkpoint is refused here
    require_same_options(
        options_.to_attributes(), checkpoint_->config,
        "--resume: the checkpoint " + paths_.checkpoint.string() + " is",
        std::string("resume with the options of the interrupted run, or ") + kStartAgain);
    return true;
  } catch (const Error& e) {
    checkpoint_.reset();
    if (!options_.overwrite) {
      if (dynamic_cast<const DataError*>(&e) != nullptr) {
        throw DataError(std::string(e.what()) + ": " + kStartAgain);
      }
      throw;
    }
    // --resume --overwrite (the sweep scripts pass both, so that a corrected line can be rerun):
    // a checkpoint that cannot be resumed is replaced, as --overwrite replaces a result file.
    std::cout << "cflrun: note: " << e.what()
              << "\ncflrun: --overwrite: starting again from round 1"
              << " instead (the checkpoint is replaced by this run's)" << std::endl;
    return false;
  }
}

void Checkpointer::read_if_resuming() {
  if (!options_.resume || !std::filesystem::exists(paths_.checkpoint)) {
    if (options_.resume && comm_.is_root()) {
      std::cout << "cflrun: no checkpoint " << paths_.checkpoint.string()
                << "; starting from round 1" << std::endl;
    }
    return;
  }
  if (!comm_.is_root()) {
    return;
  }
  if (!read_resumable_checkpoint()) {
    return;
  }
  if (static_cast<int>(checkpoint_->ranks.size()) != comm_.size()) {
    throw ConfigError("--resume: the checkpoint was written by " +
                      std::to_string(checkpoint_->ranks.size()) +
                      " ranks; resume with the same number of ranks (mpirun -np " +
                      std::to_string(checkpoint_->ranks.size()) + ")");
  }
  first_round_ = static_cast<int>(checkpoint_->next_round);
}

void Checkpointer::restore(const CheckpointParts& parts) {
  int resuming = checkpoint_ ? 1 : 0;
  comm_.broadcast(&resuming, 1);
  if (resuming == 0) {
    return;
  }
  if (comm_.is_root()) {
    parts.models.states().copy_(checkpoint_->models);
    parts.algorithm.restore(checkpoint_->algorithm);
    parts.recorder.restore(checkpoint_->server);
  }
  comm_.broadcast(parts.models.states().data_ptr<float>(), parts.models.states().numel());
  restore_rank_state(
      parts, scatter_rank_states(comm_, comm_.is_root() ? checkpoint_->ranks
                                                        : std::vector<algo::AlgorithmState>{}));
  if (comm_.is_root()) {  // also with --quiet: a log must say where a run continued
    std::cout << "cflrun: resumed from " << paths_.checkpoint.string() << " after round "
              << first_round_ << std::endl;
  }
}

bool Checkpointer::due(int next_round) const {
  bool due = options_.checkpoint_every > 0 && next_round % options_.checkpoint_every == 0;
  if (!due && options_.checkpoint_seconds > 0.0) {  // the same on every rank: options only
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_).count();
    const int late = comm_.is_root() && since >= options_.checkpoint_seconds ? 1 : 0;
    due = comm_.all_max(late) != 0;  // rank 0's clock decides: every rank must save together
  }
  return due && next_round < options_.rounds;
}

std::string Checkpointer::partial_difference() const {
  return first_round_ > 0 ? io::row_difference(paths_.partial, checkpoint_->rows, false) : "";
}

namespace {

/// The placement options that move a run's low bits (how the clients' updates are batched and
/// threaded, and where), as given: build_history records them with the build.
std::string placement_of(const cli::RunOptions& options) {
  return "client-batch " + std::to_string(options.client_batch) + ", threads " +
         std::to_string(options.threads) + ", parallel-clients " +
         (options.parallel_clients ? "1" : "0") + ", device " +
         core::word_of(options.device, cli::kDeviceChoiceWords);
}

constexpr std::string_view kPlacementSeparator = "; ";

}  // namespace

void Checkpointer::note_build() {
  const auto build = std::string(core::version()) + " (" + core::git_commit() + ")";
  const auto entry = build + std::string(kPlacementSeparator) + placement_of(options_);
  builds_ = checkpoint_ ? checkpoint_->builds : decltype(builds_){};
  if (!builds_.empty()) {
    const auto& last = builds_.back().second;
    const auto separator = last.find(kPlacementSeparator);
    if (last.substr(0, separator) != build) {
      std::cout << "cflrun: warning: resuming a run begun by another build ("
                << last.substr(0, separator)
                << "); its results may differ from one build's; /config/build_history records both"
                << std::endl;
    } else if (separator != std::string::npos && last != entry) {
      std::cout << "cflrun: note: resuming with " << placement_of(options_)
                << " where the rounds before ran with "
                << last.substr(separator + kPlacementSeparator.size())
                << "; later rounds may differ in the low bits; /config/build_history records both"
                << std::endl;
    }
  }
  if (builds_.empty() || builds_.back().second != entry) {
    builds_.emplace_back(std::to_string(first_round_ + 1), entry);
  }
}

std::string Checkpointer::build_history() const {
  std::string text;
  for (const auto& [round, build] : builds_) {
    text += text.empty()
                ? "round "
                : "\nround ";  // appended piecewise: GCC 12 warns falsely on "x" + std::string
    text += round;
    text += ": ";
    text += build;
  }
  return text;
}

void Checkpointer::append_rows(RoundRecorder& recorder, const std::string& old_partial) const {
  if (first_round_ <= 0) {  // not resuming
    return;
  }
  const auto rounds = recorder.append_rows(checkpoint_->rows);
  if (rounds != first_round_) {
    throw DataError("the checkpoint " + paths_.checkpoint.string() + " holds " +
                    std::to_string(rounds) + " rounds of results for " +
                    std::to_string(first_round_) +
                    " finished rounds; it is damaged: remove it to start again (rm " +
                    paths_.checkpoint.string() + ")");
  }
  if (!old_partial.empty()) {  // also with --quiet: the log must say the file was replaced
    std::cout << "cflrun: the partial result file " << paths_.partial.string()
              << " did not match the checkpoint (" << old_partial << "); its " << first_round_
              << " rounds were written again from the checkpoint" << std::endl;
  }
}

void Checkpointer::remove() const {
  std::error_code error;
  std::filesystem::remove(paths_.checkpoint, error);
  std::filesystem::remove(paths_.checkpoint.string() + ".tmp", error);  // a kill's leftover, if any
}

}  // namespace cflrun::run::detail
