#pragma once
/// @file
/// `cflrun sweep`: writes a manifest of runs (one line per run) from a grid, for a SLURM job array.

namespace cflrun::sweep {

/// Runs the `sweep` subcommand; argv[0] is "sweep".
/// @return process exit code: 0 on success, 2 on bad arguments (message on stderr).
int run_sweep_command(int argc, const char* const argv[]);

}  // namespace cflrun::sweep
