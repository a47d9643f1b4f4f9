#pragma once
// Private to src/cli: the groups of run options (RunOptions::visit calls them in --help order),
// split over run_option_table.cpp (data, clients), run_option_table_training.cpp (optimizer,
// rounds, compute, files) and run_option_table_population.cpp, and what their declarations share.
#include <cflrun/cli/run_options.hpp>
#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli::detail {

inline constexpr const char* kAtLeastOne = "at least 1";
inline constexpr const char* kSeedRange = "an integer >= 0";

/// [minimum, maximum] with either end open, e.g. (0, 1].
inline core::Range interval(double minimum, double maximum, bool minimum_open, bool maximum_open) {
  auto range = core::Range::between(minimum, maximum);
  range.min_open = minimum_open;
  range.max_open = maximum_open;
  return range;
}

/// Each declares one group's options to `v`, with `o`'s members (run_option_table*.cpp).
void declare_data(RunOptions& o, core::OptionVisitor& v);
void declare_clients(RunOptions& o, core::OptionVisitor& v);
void declare_optimizer(RunOptions& o, core::OptionVisitor& v);
void declare_rounds(RunOptions& o, core::OptionVisitor& v);
/// How initial models are drawn beyond the default (--init-scheme); recorded only where set.
void declare_initial_models(RunOptions& o, core::OptionVisitor& v);
void declare_population(RunOptions& o, core::OptionVisitor& v);
/// What a run measures besides its defaults (--train-accuracy); recorded in /config only where set.
void declare_measurements(RunOptions& o, core::OptionVisitor& v);
void declare_compute(RunOptions& o, core::OptionVisitor& v);
void declare_kernels(RunOptions& o, core::OptionVisitor& v);
void declare_files(RunOptions& o, core::OptionVisitor& v);

}  // namespace cflrun::cli::detail
