// Checkpoints of a run: what every rank keeps across rounds, written after a round (and when a
// signal stops the run) and read back by --resume.
#include "experiment_state.hpp"

namespace cflrun::run::detail {

algo::AlgorithmState Experiment::rank_state() const {
  auto state = clients_->state();
  for (auto& [name, tensor] : stability_->state()) {
    state.emplace(name, tensor);
  }
  state.emplace("cpu_generator", cpu_generator_state());
  return state;
}

void Experiment::restore_rank_state(const algo::AlgorithmState& state) {
  clients_->restore(state, models_->working_model(), local_update_settings());
  stability_->restore(state);
  set_cpu_generator_state(algo::state_tensor(state, "checkpoint", "cpu_generator"));
}

void Experiment::save_checkpoint(int next_round) {
  auto ranks = gather_rank_states(comm_, rank_state());
  if (!comm_.is_root()) {
    return;
  }
  Checkpoint checkpoint;
  checkpoint.next_round = next_round;
  checkpoint.config = options_.to_attributes();
  checkpoint.models = models_->states();
  checkpoint.algorithm = algorithm_->state();
  checkpoint.server = recorder_.state();
  checkpoint.rows = recorder_.kept_rows();
  checkpoint.builds = builds_;
  checkpoint.ranks = std::move(ranks);
  write_checkpoint(paths_.checkpoint, checkpoint);
}

void Experiment::read_checkpoint_if_resuming() {
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
  // --overwrite may be given already (sweeps pass --resume --overwrite): then starting again means
  // running without --resume.
  const std::string start_again =
      options_.overwrite ? "run without --resume to start again" : "start again with --overwrite";
  try {
    checkpoint_ =
        read_checkpoint(paths_.checkpoint);  // verified: a damaged checkpoint is refused here
  } catch (const DataError& e) {
    throw DataError(std::string(e.what()) + ": " + start_again);
  }
  require_same_options(options_.to_attributes(), checkpoint_->config,
                       "--resume: the checkpoint " + paths_.checkpoint.string() + " is",
                       "resume with the options of the interrupted run, or " + start_again);
  if (static_cast<int>(checkpoint_->ranks.size()) != comm_.size()) {
    throw ConfigError("--resume: the checkpoint was written by " +
                      std::to_string(checkpoint_->ranks.size()) +
                      " ranks; resume with the same number of ranks (mpirun -np " +
                      std::to_string(checkpoint_->ranks.size()) + ")");
  }
  first_round_ = static_cast<int>(checkpoint_->next_round);
}

void Experiment::restore_checkpoint() {
  int resuming = checkpoint_ ? 1 : 0;
  comm_.broadcast(&resuming, 1);
  if (resuming == 0) {
    return;
  }
  if (comm_.is_root()) {
    models_->states().copy_(checkpoint_->models);
    algorithm_->restore(checkpoint_->algorithm);
    recorder_.restore(checkpoint_->server);
  }
  comm_.broadcast(models_->states().data_ptr<float>(), models_->states().numel());
  restore_rank_state(scatter_rank_states(
      comm_, comm_.is_root() ? checkpoint_->ranks : std::vector<algo::AlgorithmState>{}));
  if (comm_.is_root()) {  // also with --quiet: a log must say where a run continued
    std::cout << "cflrun: resumed from " << paths_.checkpoint.string() << " after round "
              << first_round_ << std::endl;
  }
}

void Experiment::end_round(int round) {
  const int next = round + 1;
  bool due = options_.checkpoint_every > 0 && next % options_.checkpoint_every == 0;
  if (!due && options_.checkpoint_seconds > 0.0) {  // the same on every rank: options only
    const double since =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - last_checkpoint_).count();
    const int late = comm_.is_root() && since >= options_.checkpoint_seconds ? 1 : 0;
    due = comm_.all_max(late) != 0;  // rank 0's clock decides: every rank must save together
  }
  due = due && next < options_.rounds;
  const int signal = comm_.all_max(stop_signal());  // every rank stops after the same round
  if (due || signal != 0) {
    save_checkpoint(next);
    last_checkpoint_ = std::chrono::steady_clock::now();
  }
  if (signal == 0) {
    return;
  }
  const auto message = std::string(signal_name(signal)) + " after round " + std::to_string(next) +
                       " of " + std::to_string(options_.rounds) + "; continue with --resume";
  recorder_.mark_interrupted(message);
  if (comm_.is_root()) {
    std::cerr << "cflrun: interrupted by " << message << " (checkpoint "
              << paths_.checkpoint.string() << ")" << std::endl;
  }
  throw Interrupted(message);
}

}  // namespace cflrun::run::detail
