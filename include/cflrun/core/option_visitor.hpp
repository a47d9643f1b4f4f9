#pragma once
/// @file
/// Options declared once: a part of cflrun (an algorithm) lists each of its options in one
/// `visit` function, giving its flag, value (whose initial value is the default), help text and
/// valid range; visitors then add them to the command line, validate them and record them in the
/// result file (cli::OptionDescriber, cli::OptionValidator, cli::OptionRecorder).

#include <limits>
#include <memory>
#include <string>
#include <vector>

namespace cflrun::core {

/// The valid values of a numeric option: [min, max], either end open or unbounded.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;  ///< min itself is not valid.
  bool max_open = false;  ///< max itself is not valid.

  /// value >= minimum.
  static Range at_least(double minimum) { return {minimum}; }
  /// value > minimum.
  static Range above(double minimum) { return {minimum, std::numeric_limits<double>::infinity(), true}; }
  /// minimum <= value <= maximum.
  static Range between(double minimum, double maximum) { return {minimum, maximum}; }
  /// Whether `value` lies in the range (NaN never does).
  bool contains(double value) const;
  /// The range in words for an error message, e.g. "> 0", "between 1 and 10".
  std::string describe() const;
};

/// Receives the options of one option group (core::OptionGroup::visit). Each call names one
/// option: `flag` without the leading "--", `value` the member that holds it (its value when
/// visited first is the default), `help` one line with the unit.
class OptionVisitor {
 public:
  virtual ~OptionVisitor() = default;
  virtual void option(const char* flag, int& value, const char* help, Range range) = 0;
  virtual void option(const char* flag, double& value, const char* help, Range range) = 0;
  /// A word option; `choices` lists the valid words.
  virtual void option(const char* flag, std::string& value, const char* help, std::vector<std::string> choices) = 0;
};

/// The options of one part of cflrun (an algorithm's options struct derives from it).
class OptionGroup {
 public:
  virtual ~OptionGroup() = default;
  /// Title of the group in --help, e.g. "CFL (Sattler et al. 2021)".
  virtual std::string title() const = 0;
  /// Calls `visitor.option(...)` once for every option, always in the same order.
  virtual void visit(OptionVisitor& visitor) = 0;
  /// A copy holding the same values.
  virtual std::unique_ptr<OptionGroup> clone() const = 0;
};

}  // namespace cflrun::core
