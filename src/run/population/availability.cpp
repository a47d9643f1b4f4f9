// Who is present in a round: availability traces, on/off periods, dropout and the round deadline.
#include <cflrun/run/population/population_schedule.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include <boost/algorithm/string.hpp>
#include <boost/lexical_cast.hpp>

#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

template <typename T>
bool parse_number(const std::string& text, T& value) {
  return boost::conversion::try_lexical_convert(boost::trim_copy(text), value);
}

TracePeriod trace_line(const std::string& path, int line_number, const std::string& line,
                       int num_clients) {
  std::vector<std::string> fields;
  boost::split(fields, line, boost::is_any_of(","));
  TracePeriod period;
  const auto where = path + " line " + std::to_string(line_number) + ": ";
  if (fields.size() != 3 || !parse_number(fields[0], period.client) ||
      !parse_number(fields[1], period.first) || !parse_number(fields[2], period.last)) {
    throw DataError(where + "'" + line +
                    "' is not client,first_round,last_round (three whole numbers); fix the line");
  }
  if (period.client < 0 || period.client >= num_clients) {
    throw DataError(where + "client " + std::to_string(period.client) +
                    " is unknown: the run has clients 0 to " + std::to_string(num_clients - 1));
  }
  if (period.first < 1 || period.first > period.last) {
    throw DataError(where + "rounds " + std::to_string(period.first) + " to " +
                    std::to_string(period.last) +
                    " are not a period (1-based, first <= last); fix the line");
  }
  return period;
}

void check_overlaps(const std::string& path, std::vector<TracePeriod> periods) {
  std::sort(periods.begin(), periods.end(), [](const TracePeriod& a, const TracePeriod& b) {
    return a.client != b.client ? a.client < b.client : a.first < b.first;
  });
  for (std::size_t i = 1; i < periods.size(); ++i) {
    const auto& a = periods[i - 1];
    const auto& b = periods[i];
    if (a.client == b.client && b.first <= a.last) {
      throw DataError(path + ": client " + std::to_string(a.client) + "'s periods " +
                      std::to_string(a.first) + "-" + std::to_string(a.last) + " and " +
                      std::to_string(b.first) + "-" + std::to_string(b.last) +
                      " overlap; join them into one line");
    }
  }
}

double positive_at_least_one(const std::string& key, const std::string& text) {
  double value = 0.0;
  if (!parse_number(text, value) || !(value >= 1.0)) {
    throw ConfigError("--availability-periods: " + key + "=" + text +
                      " must be a mean length in rounds, at least 1 (e.g. 'on=20 off=5')");
  }
  return value;
}

}  // namespace

std::vector<TracePeriod> read_availability_trace(const std::string& path, int num_clients) {
  std::ifstream file(path);
  if (!file) {
    throw DataError("--availability-trace " + path +
                    " cannot be read; give a file of client,first_round,last_round lines");
  }
  std::vector<TracePeriod> periods;
  std::string line;
  for (int number = 1; std::getline(file, line); ++number) {
    boost::trim(line);
    if (!line.empty() && line[0] != '#') {
      periods.push_back(trace_line(path, number, line, num_clients));
    }
  }
  check_overlaps(path, periods);
  return periods;
}

AvailabilityPeriods parse_availability_periods(const std::string& text) {
  AvailabilityPeriods periods;
  std::vector<std::string> words;
  const auto trimmed = boost::trim_copy(text);
  if (trimmed.empty()) {
    return periods;
  }
  boost::split(words, trimmed, boost::is_space(), boost::token_compress_on);
  std::map<std::string, double> values;
  for (const auto& word : words) {
    const auto equals = word.find('=');
    const auto key = word.substr(0, equals);
    if (equals == std::string::npos || (key != "on" && key != "off")) {
      throw ConfigError("--availability-periods: '" + word +
                        "' is not on=ROUNDS or off=ROUNDS (e.g. 'on=20 off=5')");
    }
    values[key] = positive_at_least_one(key, word.substr(equals + 1));
  }
  if (values.size() != 2) {
    throw ConfigError("--availability-periods needs both on= and off= (e.g. 'on=20 off=5')");
  }
  periods.mean_on = values["on"];
  periods.mean_off = values["off"];
  return periods;
}

SpeedDistribution parse_speed_distribution(const std::string& text) {
  std::vector<std::string> words;
  boost::split(words, boost::trim_copy(text), boost::is_space(), boost::token_compress_on);
  SpeedDistribution speeds;
  const auto refuse = [&] {
    throw ConfigError(
        "--client-speeds must be 'equal', 'lognormal SIGMA' (SIGMA >= 0) or "
        "'uniform LOW HIGH' (0 < LOW <= HIGH), but got '" +
        text + "'");
  };
  if (words.size() == 1 && words[0] == "equal") {
    return speeds;
  }
  if (words.size() == 2 && words[0] == "lognormal") {
    speeds.kind = SpeedDistribution::Kind::kLogNormal;
    if (!parse_number(words[1], speeds.a) || !(speeds.a >= 0.0)) {
      refuse();
    }
    return speeds;
  }
  if (words.size() == 3 && words[0] == "uniform") {
    speeds.kind = SpeedDistribution::Kind::kUniform;
    if (!parse_number(words[1], speeds.a) || !parse_number(words[2], speeds.b) ||
        !(speeds.a > 0.0) || !(speeds.b >= speeds.a)) {
      refuse();
    }
    return speeds;
  }
  refuse();
  return speeds;
}

}  // namespace cflrun::run
