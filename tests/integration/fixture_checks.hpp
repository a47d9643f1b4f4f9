#pragma once
// Result fixtures: a result file's datasets as canonical text, recorded once and compared with
// later runs of the same command, so that a refactoring that must not change behaviour is checked
// bit for bit (issue 10: "record ... before you start, keep them as test fixtures, and assert
// equality after").

#include <string>

namespace cflrun::checks {

/// The canonical text of a result file: a first line naming the machine it was made on, then every
/// recorded dataset and /summary figure (timings and provenance left out), each value printed with
/// 17 significant digits (exact for float32 and float64).
std::string fixture_text(const std::string& file);

/// Compares `file` with the fixture text in `fixture`. When the fixture was recorded on a machine
/// with the same CPU and BLAS, every value must be bit-identical. On another machine the kernels
/// round differently and training amplifies that over the rounds, so only the first round's rows
/// (and the per-run datasets) are compared there: integers equal, other values within a relative
/// 1e-4. The check says which comparison it made.
/// @return 0 on agreement; 1 after printing the first difference.
int matches_fixture(const std::string& file, const std::string& fixture);

}  // namespace cflrun::checks
