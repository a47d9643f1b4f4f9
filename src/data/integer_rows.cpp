#include "integer_rows.hpp"

#include <sstream>

namespace cflrun::data {
namespace {

/// The whole word as an integer, or throws fail(...).
std::int64_t parse_integer(const std::string& word,
                           const std::function<ConfigError(const std::string&)>& fail) {
  std::size_t used = 0;
  long long value = 0;
  try {
    value = std::stoll(word, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (word.empty() || used != word.size()) {
    throw fail("'" + word + "' is not an integer");
  }
  return static_cast<std::int64_t>(value);
}

}  // namespace

std::vector<std::vector<std::int64_t>> parse_integer_rows(
    const std::string& text, const std::function<ConfigError(const std::string&)>& fail) {
  std::vector<std::vector<std::int64_t>> rows;
  std::istringstream by_row(text);
  for (std::string row_text; std::getline(by_row, row_text, '/');) {
    std::vector<std::int64_t> row;
    std::istringstream by_entry(row_text);
    for (std::string word; std::getline(by_entry, word, ',');) {
      row.push_back(parse_integer(word, fail));
    }
    if (row.empty()) {
      throw fail("an empty row");
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace cflrun::data
