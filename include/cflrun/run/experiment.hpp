#pragma once
/// @file
/// One federated experiment from options to result file, on all ranks of a communicator.

#include <cflrun/cli/run_options.hpp>
#include <cflrun/comm/communicator.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {

/// The phases of a round timed in `/rounds/seconds`, in order (wall-clock on rank 0, waiting for
/// the workers included), the same for every algorithm (include/cflrun/algo/algorithm.hpp):
/// query (the clients answer the server's queries, e.g. CLoVE's loss vectors, and the answers are
/// gathered), plan (the server plans the round, the plan is broadcast), local update (trained and
/// reduced), aggregate (averaged, broadcast), evaluate (scored and gathered), io (assembling the
/// round record; the HDF5 write and flush that follow, a few milliseconds, are outside the phases
/// but inside the printed round time). Files written before 2026-11-26 name the first five
/// loss_vectors, clustering, local_update, aggregation, evaluation.
inline constexpr const char* kPhaseNames[] = {"query",     "plan",     "local_update",
                                              "aggregate", "evaluate", "io"};

/// Thrown on every rank when a signal stopped the run after a round: the checkpoint is written and
/// the result file marked "interrupted"; `main` exits with kExitInterrupted (stop_signals.hpp).
class Interrupted : public Error {
 public:
  using Error::Error;
};

/// Runs a whole experiment (CLoVE Alg. 1 and its baselines) on every rank of `comm`: loads and
/// partitions the data, hosts this rank's clients, runs T rounds (loss vectors, assignment, local
/// updates, per-model averaging, evaluation) and, on rank 0, writes every round to the HDF5 file
/// `options.out` (flushed per round) and prints one line per round. Collective.
/// Files: rank 0 holds <out>.lock for the whole run, writes <out>.partial and <out>.checkpoint
/// (every
/// --checkpoint-every rounds), and renames <out>.partial to <out> when the run completes
/// (output_files.hpp). With --resume it continues from the checkpoint; with --skip-complete it
/// returns at once if <out> holds a complete run of the same options.
/// @throws ReportedError on every rank if setup failed on any rank (message already printed once).
/// @throws Interrupted on every rank if SIGTERM, SIGUSR1 or SIGINT stopped the run.
/// @throws Error from a round; the caller must abort all ranks (MPI_Abort), since the others may
///         wait in a collective. The result file then keeps the finished rounds, status "failed".
void run_experiment(const cli::RunOptions& options, const comm::Communicator& comm);

}  // namespace cflrun::run
