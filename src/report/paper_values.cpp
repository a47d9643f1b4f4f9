#include <cflrun/report/paper_values.hpp>

#include <fstream>
#include <sstream>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr const char* kHeader = "table,metric,partition,dataset,algorithm,mean,std";
constexpr std::size_t kFields = 7;

std::vector<std::string> split_fields(const std::string& line) {
  std::vector<std::string> fields;
  std::istringstream stream(line);
  for (std::string field; std::getline(stream, field, ',');) {
    fields.push_back(field);
  }
  return fields;
}

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

PaperValue parse_row(const std::string& line, const std::string& where) {
  const auto fields = split_fields(line);
  if (fields.size() != kFields) {
    throw DataError(where + ": expected " + std::to_string(kFields) + " comma-separated fields (" +
                    kHeader + "), but got " + std::to_string(fields.size()));
  }
  PaperValue value;
  value.table = fields[0];
  try {
    value.metric = parse_metric(fields[1]);
  } catch (const ConfigError& e) {
    throw DataError(where + ": " + e.what());
  }
  value.partition = fields[2];
  value.dataset = fields[3];
  value.algorithm = fields[4];
  value.mean = parse_number(fields[5], where);
  value.std = parse_number(fields[6], where);
  return value;
}

}  // namespace

std::vector<PaperValue> read_paper_values(const std::filesystem::path& path) {
  std::ifstream file(path);
  if (!file) {
    throw DataError("--paper " + path.string() +
                    ": cannot open the file; run from the source tree (" + kDefaultPaperValues +
                    ") or give --paper FILE");
  }
  std::vector<PaperValue> values;
  bool header_seen = false;
  int number = 0;
  for (std::string line; std::getline(file, line);) {
    ++number;
    if (line.empty() || line[0] == '#') {
      continue;
    }
    const std::string where = path.string() + " line " + std::to_string(number);
    if (!header_seen) {
      if (line != kHeader) {
        throw DataError(where + ": expected the header line '" + kHeader + "'");
      }
      header_seen = true;
      continue;
    }
    values.push_back(parse_row(line, where));
  }
  if (values.empty()) {
    throw DataError("--paper " + path.string() + ": no values (expected a header line '" + kHeader +
                    "' and rows)");
  }
  return values;
}

}  // namespace cflrun::report
