#pragma once
/// @file
/// `cflrun models`: the model registry (model/model_registry.hpp) as the Markdown table of
/// docs/models.md, one row per --model value (issue 46).

#include <iosfwd>

namespace cflrun::cli {

/// Runs the `models` subcommand; argv[0] is "models". Prints the table to `out`: per model its
/// --model name, layers, parameters at its paper shape (counted by building it), that shape and
/// its datasets, the head's features (FedProto's and FedPAC's split), the forms it has and its
/// source. `--help` prints the usage.
/// @return process exit code: 0, or 2 on an unknown argument (message on `err`).
int run_models_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err);

}  // namespace cflrun::cli
