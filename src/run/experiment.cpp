#include "experiment_state.hpp"

namespace cflrun::run {
namespace {

/// True if `path` is a result file whose run finished (status "complete"); false for a missing,
/// unreadable or unfinished file.
bool holds_complete_run(const std::string& path) {
  if (!std::filesystem::exists(path)) {
    return false;
  }
  try {
    return io::ResultReader(path).status() == "complete";
  } catch (const Error&) {
    return false;
  }
}

/// --skip-complete: rank 0 looks at --out and tells every rank whether the run is already done.
bool already_complete(const cli::RunOptions& options, const comm::Communicator& comm) {
  int complete = comm.is_root() && options.skip_complete && holds_complete_run(options.out) ? 1 : 0;
  comm.broadcast(&complete, 1);
  if (complete != 0 && comm.is_root()) {
    std::cout << "cflrun: " << options.out << " already complete; nothing to do (--skip-complete)" << std::endl;
  }
  return complete != 0;
}

}  // namespace

void run_experiment(const cli::RunOptions& options, const comm::Communicator& comm) {
  if (already_complete(options, comm)) {
    return;
  }
  detail::Experiment experiment(options, comm);
  experiment.set_up();
  if (options.dry_run) {
    return;
  }
  try {
    for (int round = 0; round < options.rounds; ++round) {
      experiment.run_round(round);
    }
  } catch (const std::exception& e) {
    experiment.fail(e.what());
    throw;
  }
  experiment.finish();
}

}  // namespace cflrun::run