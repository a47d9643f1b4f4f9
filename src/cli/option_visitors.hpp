#pragma once
// Private to src/cli: the visitors that turn an OptionGroup's declarations (core::OptionVisitor)
// into Boost.Program_options entries, range checks, and /config attributes.

#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli {

/// A number as the result file records it (17 significant digits, exact for a double).
std::string option_text(double value);

/// Adds each visited option to a Boost options_description, bound to its member, with its default.
class OptionDescriber : public core::OptionVisitor {
 public:
  explicit OptionDescriber(boost::program_options::options_description& description) : description_(description) {}
  void option(const char* flag, int& value, const char* help, core::Range range) override;
  void option(const char* flag, double& value, const char* help, core::Range range) override;
  void option(const char* flag, std::string& value, const char* help, std::vector<std::string> choices) override;

 private:
  boost::program_options::options_description& description_;
};

/// Checks each visited value against its range or choices.
/// @throws ConfigError "--flag must be <range>, but got <value>" for the first invalid value.
class OptionValidator : public core::OptionVisitor {
 public:
  void option(const char* flag, int& value, const char* help, core::Range range) override;
  void option(const char* flag, double& value, const char* help, core::Range range) override;
  void option(const char* flag, std::string& value, const char* help, std::vector<std::string> choices) override;
};

/// Collects (flag, value as text) of each visited option, for the result file's /config.
class OptionRecorder : public core::OptionVisitor {
 public:
  void option(const char* flag, int& value, const char* help, core::Range range) override;
  void option(const char* flag, double& value, const char* help, core::Range range) override;
  void option(const char* flag, std::string& value, const char* help, std::vector<std::string> choices) override;
  std::vector<std::pair<std::string, std::string>> take() { return std::move(attributes_); }

 private:
  std::vector<std::pair<std::string, std::string>> attributes_;
};

/// Throws ConfigError "--flag must be one of a, b, but got 'value'" unless value is a choice.
void require_choice(const std::string& flag, const std::string& value, const std::vector<std::string>& choices);

}  // namespace cflrun::cli
