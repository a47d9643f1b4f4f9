#pragma once
/// @file
/// `cflrun sweep --set NAME=V1,V2 ... --out MANIFEST`: writes a manifest of runs (one line per
/// run, see <cflrun/sweep/manifest.hpp>) from a grid, for a SLURM job array.

#include <iosfwd>

namespace cflrun::sweep {

/// Runs the `sweep` subcommand; argv[0] is "sweep". Writes the manifest, then prints its line
/// count and the suggested `sbatch --array=...` command. `cflrun sweep --help` lists the options.
/// @return process exit code: 0 on success, 2 on bad arguments (message on stderr), including an
///         existing manifest without --force.
int run_sweep_command(int argc, const char* const argv[]);

/// As above, printing to `out` and notes and errors to `err` (for tests).
int run_sweep_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err);

}  // namespace cflrun::sweep
