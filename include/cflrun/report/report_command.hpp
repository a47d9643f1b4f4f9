#pragma once
/// @file
/// `cflrun report FILES_OR_DIRS...`: tables of final-round metrics, mean +- std over seeds, from
/// result files, as the CLoVE paper's Tables 1, 2 and 4 (clove-official-setup.md Sec. 12).

#include <iosfwd>

namespace cflrun::report {

/// Runs the `report` subcommand; argv[0] is "report". Prints the table(s) to stdout and notes
/// (incomplete, unreadable or duplicate runs) to stderr. `cflrun report --help` lists the options.
/// Sets HDF5_USE_FILE_LOCKING=FALSE for the process so that running jobs' files can be read.
/// @return process exit code: 0 on success, 2 on bad arguments or a layout that does not fit
///         the runs (message on stderr).
/// @throws DataError if no complete run is left to report.
int run_report_command(int argc, const char* const argv[]);

/// As above, printing tables to `out` and notes and argument errors to `err` (for tests).
int run_report_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err);

}  // namespace cflrun::report
