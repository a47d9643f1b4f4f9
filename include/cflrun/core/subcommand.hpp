#pragma once
/// @file
/// Shared frame of cflrun's file subcommands (`report`, `sweep`).

#include <functional>
#include <ostream>
#include <string>

namespace cflrun::core {

/// Exit code of a subcommand whose arguments were wrong.
inline constexpr int kExitUsage = 2;

/// Runs `body` (parse the arguments, print help or do the work, return the exit code) and turns a
/// ConfigError into one line "cflrun TOOL: error: MESSAGE" on `err` and exit code kExitUsage.
/// Other cflrun::Error types propagate to `main`, which reports them and exits 1.
int run_subcommand(const std::string& tool, std::ostream& err, const std::function<int()>& body);

}  // namespace cflrun::core
