#pragma once
// Checks of soft clustering (FedSoft) on real result files (see check_results.cpp for the CLI).

#include <string>

namespace cflrun::checks {

/// FedSoft Fig. 1: the last round's importance weights (/clients/importance) match every client's
/// true mixture (/clients/mixture) within `tolerance`, under the best mapping of centers to sources
/// (center indices are arbitrary). Returns 0 on success, 1 (after printing) else.
int importance_recovered(const std::string& file, double tolerance);

/// FedSoft Table 1: in the last round every source's holdout loss (/rounds/source_loss) is
/// smallest on a different center, i.e. each center is best on one distribution.
int centers_specialise(const std::string& file);

}  // namespace cflrun::checks
