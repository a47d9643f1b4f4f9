#pragma once
/// @file
/// `cflrun check CONFIG... [-- OPTION...]`: dry-runs many config files in one process, e.g. every
/// config of a sweep before it is submitted (LibTorch and MPI start once, not once per config).

#include <iosfwd>

#include <cflrun/comm/communicator.hpp>

namespace cflrun::run {

/// Runs the `check` subcommand; argv[0] is "check". For every CONFIG, as
/// `cflrun --config CONFIG --dry-run OPTION...` would (the OPTIONs after `--` apply to every config
/// and win over it, e.g. `-- --data-dir DIR`): parses and validates the options, loads the data,
/// builds the partition, the algorithm and the models, and prints the dry run's summary, then
/// "ok: CONFIG" or "FAIL: CONFIG: <message>" (rank 0). A failing config does not stop the others.
/// Writes no result file. Collective: every rank of `comm` must call it with the same arguments.
/// @return process exit code: 0 if every config passed, 1 if any failed, 2 on bad arguments (no
///         config, or --help: usage on `out`, exit 0).
int run_check_command(int argc, const char* const argv[], const comm::Communicator& comm,
                      std::ostream& out, std::ostream& err);

}  // namespace cflrun::run
