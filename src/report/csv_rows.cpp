#include "csv_rows.hpp"

#include <algorithm>
#include <fstream>

#include <cflrun/core/error.hpp>

namespace cflrun::report::detail {
namespace {

/// The first `count - 1` comma-separated fields, then the rest of the line as the last field.
std::vector<std::string> leading_fields(const std::string& line, std::size_t count) {
  std::vector<std::string> fields;
  std::size_t start = 0;
  while (fields.size() + 1 < count) {
    const auto comma = line.find(',', start);
    if (comma == std::string::npos) {
      break;
    }
    fields.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
  fields.push_back(line.substr(start));
  return fields;
}

}  // namespace

double parse_number(const std::string& text, const std::string& where) {
  try {
    std::size_t used = 0;
    const double value = std::stod(text, &used);
    if (used == text.size()) {
      return value;
    }
  } catch (const std::exception&) {
  }
  throw DataError(where + ": '" + text + "' is not a number");
}

Metric parse_metric_field(const std::string& text, const std::string& where) {
  try {
    return parse_metric(text);
  } catch (const ConfigError& e) {
    throw DataError(where + ": " + e.what());
  }
}

bool for_each_csv_row(const std::filesystem::path& path, const std::string& header,
                      const CsvRow& row) {
  std::ifstream file(path);
  if (!file) {
    return false;
  }
  const auto count = static_cast<std::size_t>(std::count(header.begin(), header.end(), ',') + 1);
  bool header_seen = false;
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const std::string where = path.string() + " line " + std::to_string(number);
    if (!header_seen) {
      if (line != header) {
        throw DataError(where + ": expected the header line '" + header + "'");
      }
      header_seen = true;
      continue;
    }
    const auto fields = leading_fields(line, count);
    if (fields.size() != count) {
      throw DataError(where + ": expected " + std::to_string(count) + " comma-separated fields (" +
                      header + "), but got " + std::to_string(fields.size()));
    }
    row(fields, where);
  }
  return true;
}

}  // namespace cflrun::report::detail
