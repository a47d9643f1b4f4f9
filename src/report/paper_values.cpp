#include <cflrun/report/paper_values.hpp>

#include "csv_rows.hpp"

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr const char* kHeader = "table,metric,partition,dataset,algorithm,mean,std";

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

PaperValue parse_row(const std::vector<std::string>& fields, const std::string& where) {
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
  std::vector<PaperValue> values;
  const bool opened = detail::for_each_csv_row(
      path, kHeader, [&](const std::vector<std::string>& fields, const std::string& where) {
        values.push_back(parse_row(fields, where));
      });
  if (!opened) {
    throw DataError("--paper " + path.string() +
                    ": cannot open the file; run from the source tree (" + kDefaultPaperValues +
                    ") or give --paper FILE");
  }
  if (values.empty()) {
    throw DataError("--paper " + path.string() + ": no values (expected a header line '" + kHeader +
                    "' and rows)");
  }
  return values;
}

}  // namespace cflrun::report
