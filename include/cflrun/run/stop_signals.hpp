#pragma once
/// @file
/// SIGTERM and SIGUSR1 (what SLURM sends before a job's time limit: --signal) and SIGINT ask a run
/// to stop after the round in progress: it writes a checkpoint, marks its result file
/// "interrupted" and exits with kExitInterrupted, so that --resume continues it.

namespace cflrun::run {

/// The exit code of a run stopped by a signal after writing its checkpoint (EX_TEMPFAIL: try
/// again).
inline constexpr int kExitInterrupted = 75;

/// Installs the handlers (they only record the first signal; a second one ends the process at
/// once, as without a handler). Call once per process, right after MPI is initialised, so that a
/// signal during set-up also stops the run after its first round instead of killing it.
void install_stop_signals();

/// The stop signal received so far (SIGTERM, SIGUSR1 or SIGINT), or 0.
int stop_signal();

/// The signal's name, e.g. "SIGUSR1".
const char* signal_name(int signal);

}  // namespace cflrun::run
