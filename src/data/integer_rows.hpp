#pragma once
// Private to src/data: the text form of small integer tables given on the command line
// (--label-sets, --train-class-counts, --test-class-counts): rows separated by '/', entries by ','.

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <cflrun/core/error.hpp>

namespace cflrun::data {

/// Parses "1,2,3/4,5,6" into {{1,2,3},{4,5,6}}. `fail(problem)` builds the error thrown for a word
/// that is not an integer (problem: "'x' is not an integer") or an empty row ("an empty row").
std::vector<std::vector<std::int64_t>> parse_integer_rows(
    const std::string& text, const std::function<ConfigError(const std::string&)>& fail);

}  // namespace cflrun::data
