#pragma once
/// @file
/// The grid of a sweep: `--set NAME=V1,V2,...` axes, their cartesian product, and the name of
/// each run built from its values.

#include <string>
#include <utility>
#include <vector>

namespace cflrun::sweep {

/// One `--set NAME=V1,V2,...` of `cflrun sweep`: a cflrun option and the values it takes.
struct GridAxis {
  std::string option;               ///< cflrun option name without "--", e.g. "algorithm".
  std::vector<std::string> values;  ///< >= 1 distinct values, in the order given.
};

/// One run of the grid: (option, value) for every axis, in axis order.
using GridPoint = std::vector<std::pair<std::string, std::string>>;

/// True if `text` can be a manifest word: non-empty, only letters, digits and . _ + - / : @ % =
/// (no whitespace, quotes or shell metacharacters, so a SLURM script can split a manifest line
/// into arguments on spaces).
bool is_safe_word(const std::string& text);

/// Parses `NAME=V1,V2,...`. The option name is only checked to look like a cflrun option
/// ([a-z][a-z0-9-]*); whether cflrun knows it is checked when each run starts (cflrun rejects an
/// unknown option before writing anything).
/// @throws ConfigError if there is no '=', the name does not match, a value is empty or not a
///         safe word (e.g. holds a space), or a value is given twice.
GridAxis parse_grid_axis(const std::string& text);

/// The cartesian product of the axes: the first axis varies slowest, the last fastest.
/// @return prod(values per axis) points; {} if there are no axes.
/// @throws ConfigError if two axes name the same option.
std::vector<GridPoint> expand_grid(const std::vector<GridAxis>& axes);

/// The file name stem of a run: the values of the axes that have more than one value, in axis
/// order, joined by '_'; a numeric value is prefixed by its option name ("seed1", "lr0.01"), and
/// characters other than letters, digits and . _ + - become '-'. "run" if no axis varies.
/// Example: algorithm=clove, partition=label_skew_1, seed=1 -> "clove_label_skew_1_seed1".
std::string run_name(const GridPoint& point, const std::vector<GridAxis>& axes);

}  // namespace cflrun::sweep
