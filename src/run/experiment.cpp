// A run from options to result file: the round loop of run_experiment, and the round driver's end
// of a round (checkpoint, signals) and of the run.
#include "experiment_state.hpp"

#include <cflrun/io/file_checksum.hpp>
#include <cflrun/run/round_timeout.hpp>

namespace cflrun::run {
namespace {

/// Whether --out holds a complete run that may be trusted: its status is complete and its checksum
/// verifies (a file written before checksums is accepted unverified). A damaged file under
/// --overwrite is no complete run: the run replaces it (a sweep can redo it).
/// @throws DataError naming the file if it is marked complete but damaged, without --overwrite.
bool holds_verified_complete_run(const std::string& out, bool overwrite,
                                 std::vector<std::pair<std::string, std::string>>& recorded) {
  const auto check = io::check_file_checksum(out);
  if (check.state ==
      io::ChecksumState::kDamaged) {  // before reading: damage may make it unreadable
    if (overwrite) {
      std::cout << "cflrun: " << check.problem << "; --overwrite: running it again" << std::endl;
      return false;
    }
    throw DataError(check.problem +
                    "; it cannot be trusted as a complete run: run again with --overwrite to "
                    "replace it");
  }
  try {
    const io::ResultReader reader(out);
    if (reader.status() != io::schema::kStatusComplete) {
      return false;
    }
    recorded = reader.config();
  } catch (const Error&) {
    return false;  // not a readable result: the run replaces it (with --overwrite)
  }
  return true;
}

/// --skip-complete, or --resume without --overwrite: true if --out holds a verified complete run of
/// the same options (rank 0 decides, every rank learns it); --resume then removes a checkpoint left
/// by a run killed after publishing its result. @throws ConfigError (collectively) if it holds a
/// complete run of other options; DataError if it is damaged.
bool already_complete(const cli::RunOptions& options, const comm::Communicator& comm) {
  const bool asked = options.skip_complete || (options.resume && !options.overwrite);
  const int complete = collective_step(comm, [&] {
    std::vector<std::pair<std::string, std::string>> recorded;
    if (!comm.is_root() || !asked || !std::filesystem::exists(options.out) ||
        !holds_verified_complete_run(options.out, options.overwrite, recorded)) {
      return 0;
    }
    require_same_options(options.to_attributes(), recorded,
                         "--out " + options.out + " holds a complete run",
                         "choose another --out, or remove the file to run these options there");
    const auto paths = output_paths(options.out);
    std::error_code ignored;
    if (!std::filesystem::exists(paths.partial)) {
      std::filesystem::remove(paths.checkpoint,
                              ignored);  // left by a kill between publishing and clean-up
    }
    return 1;
  });
  int shared = complete;
  comm.broadcast(&shared, 1);
  if (shared != 0 && comm.is_root()) {
    std::cout << "cflrun: " << options.out << " already complete; nothing to do ("
              << (options.skip_complete ? "--skip-complete" : "--resume") << ")" << std::endl;
  }
  return shared != 0;
}

}  // namespace

void run_experiment(const cli::RunOptions& options, const comm::Communicator& comm) {
  std::unique_ptr<RunLock> lock;  // rank 0 owns the run's files until it returns
  if (!options.dry_run) {
    collective_step(comm, [&] {
      if (comm.is_root()) {
        lock = std::make_unique<RunLock>(output_paths(options.out).lock);
      }
    });
  }
  RoundTimeout timeout(options.round_timeout);
  comm.set_timeout(timeout.seconds());
  if (already_complete(options, comm)) {
    return;
  }
  detail::Experiment experiment(options, comm);
  experiment.set_up();
  if (options.dry_run) {
    return;
  }
  try {
    for (int round = experiment.first_round(); round < options.rounds; ++round) {
      const auto start = std::chrono::steady_clock::now();
      experiment.run_round(round);
      experiment.end_round(round);
      timeout.add_round(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      comm.set_timeout(timeout.seconds());  // every rank measures its own rounds: close enough
    }
  } catch (const Interrupted&) {
    throw;
  } catch (const std::exception& e) {
    experiment.fail(e.what());
    throw;
  }
  experiment.finish();
}

}  // namespace cflrun::run

namespace cflrun::run::detail {

CheckpointParts RunState::checkpoint_parts() {
  return {*models, *algorithm, *clients, *stability, recorder, local_update_settings()};
}

void Experiment::end_round(int round) {
  const int next = round + 1;
  const bool due = run_.checkpointer.due(next);
  const int signal = run_.comm.all_max(stop_signal());  // every rank stops after the same round
  if (due || signal != 0) {
    run_.checkpointer.save(next, run_.checkpoint_parts());
  }
  if (signal == 0) {
    return;
  }
  const auto message = std::string(signal_name(signal)) + " after round " + std::to_string(next) +
                       " of " + std::to_string(run_.options.rounds) + "; continue with --resume";
  run_.recorder.mark_interrupted(message);
  if (run_.comm.is_root()) {
    std::cerr << "cflrun: interrupted by " << message << " (checkpoint "
              << run_.paths.checkpoint.string() << ")" << std::endl;
  }
  throw Interrupted(message);
}

void Experiment::finish() {
  const double switch_round = run_.stability->switched() ? run_.stability->switch_round() + 1.0
                                                         : std::numeric_limits<double>::quiet_NaN();
  if (run_.recorder.complete(
          switch_round)) {  // rank 0: <out> is published, the checkpoint obsolete
    run_.checkpointer.remove();
  }
}

}  // namespace cflrun::run::detail
