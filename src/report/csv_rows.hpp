#pragma once
// Private to src/report: the data lines and fields of the small comma-separated files beside
// paper_values.csv (the values, the accuracy definitions, the evidence) and of runs.csv.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include <cflrun/report/metric.hpp>

namespace cflrun::report::detail {

/// The number `text` is, all of it ("nan" included).
/// @throws DataError "<where>: '<text>' is not a number" otherwise.
double parse_number(const std::string& text, const std::string& where);

/// The metric named `text` (parse_metric).
/// @throws DataError "<where>: <parse_metric's message>" for an unknown name.
Metric parse_metric_field(const std::string& text, const std::string& where);

/// Receives one data line's fields and "FILE line N" for messages.
using CsvRow =
    std::function<void(const std::vector<std::string>& fields, const std::string& where)>;

/// Calls `row` with the fields of every data line of `path` after the line `header` (blank lines
/// and lines starting with # skipped). A line holds as many fields as the header; the last field
/// takes the rest of the line, commas included.
/// @return false if `path` cannot be opened (nothing is called).
/// @throws DataError naming the file and line for another first line than `header`, or a line
///         with fewer fields.
bool for_each_csv_row(const std::filesystem::path& path, const std::string& header,
                      const CsvRow& row);

}  // namespace cflrun::report::detail
