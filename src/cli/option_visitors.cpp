#include "option_visitors.hpp"

#include <sstream>

#include <cflrun/core/error.hpp>

namespace po = boost::program_options;

namespace cflrun::cli {
namespace {

/// The default as --help shows it: the shortest usual form (0.1, 0.0001).
std::string short_text(double value) {
  std::ostringstream text;
  text << value;
  return text.str();
}

void require_in(const char* flag, double value, const core::Range& range, const std::string& shown) {
  if (!range.contains(value)) {
    throw ConfigError(std::string("--") + flag + " must be " + range.describe() + ", but got " + shown);
  }
}

}  // namespace

std::string option_text(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

void require_choice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices) {
  std::string list;
  for (const auto& choice : choices) {
    if (value == choice) {
      return;
    }
    list += (list.empty() ? "" : ", ") + choice;
  }
  throw ConfigError("--" + flag + " must be one of " + list + ", but got '" + value + "'");
}

void OptionDescriber::option(const char* flag, int& value, const char* help, core::Range /*range*/) {
  description_.add_options()(flag, po::value(&value)->default_value(value), help);
}

void OptionDescriber::option(const char* flag, double& value, const char* help, core::Range /*range*/) {
  description_.add_options()(flag, po::value(&value)->default_value(value, short_text(value)), help);
}

void OptionDescriber::option(const char* flag, std::string& value, const char* help,
                             std::vector<std::string> /*choices*/) {
  description_.add_options()(flag, po::value(&value)->default_value(value), help);
}

void OptionValidator::option(const char* flag, int& value, const char* /*help*/, core::Range range) {
  require_in(flag, value, range, std::to_string(value));
}

void OptionValidator::option(const char* flag, double& value, const char* /*help*/, core::Range range) {
  require_in(flag, value, range, short_text(value));
}

void OptionValidator::option(const char* flag, std::string& value, const char* /*help*/,
                             std::vector<std::string> choices) {
  require_choice(flag, value, choices);
}

void OptionRecorder::option(const char* flag, int& value, const char* /*help*/, core::Range /*range*/) {
  attributes_.emplace_back(flag, option_text(value));
}

void OptionRecorder::option(const char* flag, double& value, const char* /*help*/, core::Range /*range*/) {
  attributes_.emplace_back(flag, option_text(value));
}

void OptionRecorder::option(const char* flag, std::string& value, const char* /*help*/,
                            std::vector<std::string> /*choices*/) {
  attributes_.emplace_back(flag, value);
}

}  // namespace cflrun::cli
