// Committed per-run rows (results/run_summaries.py) read back as complete runs.
#include <cflrun/report/run_rows_csv.hpp>

#include "csv_rows.hpp"

#include <algorithm>
#include <fstream>
#include <map>
#include <sstream>

#include <boost/tokenizer.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/io/result_schema.hpp>
#include <cflrun/report/recovery.hpp>

namespace cflrun::report {
namespace {

namespace fs = std::filesystem;
using Row = std::map<std::string, std::string>;

/// The jobs/paper datasets, the first word of a config name <dataset>_<partition>_<algorithm>.
const char* const kPaperDatasets[] = {"mnist", "fmnist", "cifar10"};

/// The fields of one CSV line: commas separate, double quotes enclose, "" is a quote (Python's
/// csv module); no field of these files spans lines.
std::vector<std::string> csv_fields(std::string line) {
  if (!line.empty() && line.back() == '\r') {  // Python's csv module ends lines with \r\n
    line.pop_back();
  }
  using Separator = boost::escaped_list_separator<char>;
  const boost::tokenizer<Separator> fields(line, Separator('\0', ',', '"'));
  return {fields.begin(), fields.end()};
}

/// The row's change rounds (a changing population's "change_rounds" column, space-separated
/// 1-based rounds; none where the column is absent or empty).
std::vector<int> change_rounds_of(const std::map<std::string, std::string>& row,
                                  const std::string& where) {
  std::vector<int> rounds;
  const auto found = row.find("change_rounds");
  if (found == row.end()) {
    return rounds;
  }
  std::istringstream words(found->second);
  for (std::string word; words >> word;) {
    try {
      rounds.push_back(std::stoi(word));
    } catch (const std::exception&) {
      throw DataError(where + ": change_rounds '" + found->second + "' is not a list of rounds");
    }
  }
  return rounds;
}

std::vector<double> parse_series(const std::string& text, std::size_t rounds,
                                 const std::string& where) {
  std::vector<double> values;
  std::istringstream words(text);
  for (std::string word; words >> word;) {
    values.push_back(detail::parse_number(word, where));
  }
  if (values.size() != rounds) {
    throw DataError(where + ": " + std::to_string(values.size()) + " values for " +
                    std::to_string(rounds) + " rounds");
  }
  return values;
}

/// The series of an optional column: empty where the column is absent or the row leaves it empty
/// (rows written before the column existed).
std::vector<double> optional_series(const Row& row, const std::string& column, std::size_t rounds,
                                    const std::string& where) {
  const auto found = row.find(column);
  if (found == row.end() || found->second.empty()) {
    return {};
  }
  return parse_series(found->second, rounds, where + " " + column);
}

/// "key = value; key = value" -> {key: value}.
std::map<std::string, std::string> parse_options(const std::string& text) {
  std::map<std::string, std::string> options;
  std::istringstream items(text);
  for (std::string item; std::getline(items, item, ';');) {
    const auto equals = item.find('=');
    if (equals == std::string::npos) {
      continue;
    }
    const auto trim = [](std::string word) {
      word.erase(0, word.find_first_not_of(' '));
      word.erase(word.find_last_not_of(' ') + 1);
      return word;
    };
    options[trim(item.substr(0, equals))] = trim(item.substr(equals + 1));
  }
  return options;
}

/// dataset, partition and algorithm from a jobs/paper config name, e.g. fmnist_label_skew_2_clove.
std::map<std::string, std::string> paper_cell(const std::string& name, const std::string& where) {
  const auto first = name.find('_');
  const auto last = name.rfind('_');
  const std::string dataset = name.substr(0, first);
  bool known = false;
  for (const char* paper_dataset : kPaperDatasets) {
    known = known || dataset == paper_dataset;
  }
  if (first == std::string::npos || last <= first || !known) {
    throw DataError(where + ": config '" + name +
                    "' has no options column value and is not a jobs/paper name "
                    "<dataset>_<partition>_<algorithm>");
  }
  return {{"dataset", dataset},
          {"partition", name.substr(first + 1, last - first - 1)},
          {"algorithm", name.substr(last + 1)}};
}

RunSummary summary_of(const Row& row, const std::string& where) {
  RunSummary run;
  run.path = where;
  run.status = io::schema::kStatusComplete;
  run.verified = true;  // committed text: its history is git's
  std::size_t rounds = 0;
  try {
    rounds = std::stoul(row.at("rounds"));
  } catch (const std::exception&) {
    throw DataError(where + ": rounds '" + row.at("rounds") + "' is not a count");
  }
  run.completed_rounds = run.planned_rounds = static_cast<std::int64_t>(rounds);
  const auto options = row.count("options") ? row.at("options") : std::string();
  run.config = options.empty() ? paper_cell(row.at("config"), where) : parse_options(options);
  run.config["paper_config"] = row.at("config");
  run.config["seed"] = row.at("seed");
  run.config["rounds"] = row.at("rounds");
  run.config["git_commit"] = row.at("git_commit");
  if (row.count("ranks") && !row.at("ranks").empty()) {
    run.config["ranks"] = row.at("ranks");
  }
  const auto ari = parse_series(row.at("ari"), rounds, where + " ari");
  const auto accuracy = parse_series(row.at("accuracy"), rounds, where + " accuracy");
  run.metrics = compute_run_metrics(ari, accuracy, optional_series(row, "test_loss", rounds, where),
                                    run.unsupervised(),
                                    optional_series(row, "accuracy_weighted", rounds, where),
                                    optional_series(row, "accuracy_train", rounds, where));
  run.recoveries = compute_recoveries(change_rounds_of(row, where), ari, accuracy);
  return run;
}

}  // namespace

bool is_run_rows_csv(const fs::path& path) { return path.extension() == ".csv"; }

std::vector<RunSummary> read_run_rows_csv(const fs::path& path) {
  std::ifstream file(path);
  std::string line;
  if (!file || !std::getline(file, line)) {
    throw DataError(path.string() +
                    ": cannot read it; give a runs.csv of results/run_summaries.py");
  }
  const auto header = csv_fields(line);
  for (const char* column : {"config", "seed", "rounds", "git_commit", "accuracy", "ari"}) {
    if (std::find(header.begin(), header.end(), column) == header.end()) {
      throw DataError(path.string() + ": no column '" + column +
                      "' in the header; give a runs.csv of results/run_summaries.py");
    }
  }
  std::vector<RunSummary> runs;
  for (int number = 2; std::getline(file, line); ++number) {
    if (line.empty() || line == "\r") {
      continue;
    }
    const std::string where = path.string() + " line " + std::to_string(number);
    const auto fields = csv_fields(line);
    if (fields.size() != header.size()) {
      throw DataError(where + ": " + std::to_string(fields.size()) + " fields, the header has " +
                      std::to_string(header.size()));
    }
    Row row;
    for (std::size_t i = 0; i < header.size(); ++i) {
      row[header[i]] = fields[i];
    }
    runs.push_back(summary_of(row, where));
  }
  return runs;
}

}  // namespace cflrun::report
