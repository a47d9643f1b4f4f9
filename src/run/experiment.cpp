#include "experiment_state.hpp"

#include <cflrun/run/round_timeout.hpp>

namespace cflrun::run {
namespace {

/// --skip-complete: true if --out holds a complete run of the same options (rank 0 decides, every
/// rank learns it). @throws ConfigError (collectively) if it holds a complete run of other options.
bool already_complete(const cli::RunOptions& options, const comm::Communicator& comm) {
  const int complete = collective_step(comm, [&] {
    if (!comm.is_root() || !options.skip_complete || !std::filesystem::exists(options.out)) {
      return 0;
    }
    std::vector<std::pair<std::string, std::string>> recorded;
    try {
      const io::ResultReader reader(options.out);
      if (reader.status() != io::schema::kStatusComplete) {
        return 0;
      }
      recorded = reader.config();
    } catch (const Error&) {
      return 0;  // not a readable result: the run replaces it (with --overwrite)
    }
    require_same_options(options.to_attributes(), recorded, "--skip-complete: " + options.out + " holds a complete run",
                         "choose another --out, or remove the file to run these options there");
    return 1;
  });
  int shared = complete;
  comm.broadcast(&shared, 1);
  if (shared != 0 && comm.is_root()) {
    std::cout << "cflrun: " << options.out << " already complete; nothing to do (--skip-complete)" << std::endl;
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
      timeout.add_round(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
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
