#pragma once
/// @file
/// `cflrun report FILES...`: tables of mean +- std over seeds from result files.

namespace cflrun::report {

/// Runs the `report` subcommand; argv[0] is "report". Prints the table(s) to stdout.
/// @return process exit code: 0 on success, 2 on bad arguments (message on stderr).
/// @throws cflrun::Error for unreadable files (main prints it and exits non-zero).
int run_report_command(int argc, const char* const argv[]);

}  // namespace cflrun::report
