#pragma once
// Checks of a changing population's result file (issue 45; see check_results.cpp for the CLI).

#include <string>

namespace cflrun::checks {

/// The file records a changing population with change rounds `expected` ("3,5,6"): the truth
/// [T, M] changes exactly at rounds `truth_moves` ("3,6"; "-" for none: an appear event only
/// brings clients), some client is away in some round or the truth moves, and every away client
/// has no assignment in that round. Returns 0 on success, 1 (after printing) else.
int changing_population(const std::string& file, const std::string& expected,
                        const std::string& truth_moves);

}  // namespace cflrun::checks
