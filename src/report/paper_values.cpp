#include <cflrun/report/paper_values.hpp>

#include "csv_rows.hpp"

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr const char* kHeader = "table,metric,partition,dataset,algorithm,mean,std";

PaperValue parse_row(const std::vector<std::string>& fields, const std::string& where) {
  PaperValue value;
  value.table = fields[0];
  value.metric = detail::parse_metric_field(fields[1], where);
  value.partition = fields[2];
  value.dataset = fields[3];
  value.algorithm = fields[4];
  value.mean = detail::parse_number(fields[5], where);
  value.std = detail::parse_number(fields[6], where);
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
