#pragma once
// Private to src/cli: the visitors that turn option declarations (core::OptionVisitor) into
// Boost.Program_options entries, range checks, /config attributes and kinds.

#include <map>
#include <string>
#include <utility>
#include <vector>

#include <boost/program_options.hpp>

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli {

/// A number as the result file records it (17 significant digits, exact for a double).
std::string option_text(double value);

/// Adds each visited option to a Boost options_description, one per section, bound to its member,
/// with its default. A bool whose default is false is a switch (`--quiet`); one whose default is
/// true takes an optional value (`--parallel-clients false`). A seed (std::uint64_t) is parsed
/// signed and checked against its range when Boost notifies it, since Boost would wrap "-1".
class OptionDescriber : public core::OptionVisitor {
 public:
  void section(const std::string& title) override;
  void declare(const core::OptionDeclaration& declaration, core::OptionValue value) override;
  /// The sections in the order first named, each with its options in declaration order.
  std::vector<boost::program_options::options_description> take() { return std::move(sections_); }

 private:
  std::vector<std::string> titles_;
  std::vector<boost::program_options::options_description> sections_;
  std::size_t current_ = 0;
};

/// Checks each visited value against its range or choices.
/// @throws ConfigError "--flag must be <range>, but got <value>" for the first invalid value.
class OptionValidator : public core::OptionVisitor {
 public:
  void declare(const core::OptionDeclaration& declaration, core::OptionValue value) override;
};

/// Collects (flag, value as text) of each visited option that is recorded, for the result file's
/// /config.
class OptionRecorder : public core::OptionVisitor {
 public:
  void declare(const core::OptionDeclaration& declaration, core::OptionValue value) override;
  std::vector<std::pair<std::string, std::string>> take() { return std::move(attributes_); }

 private:
  std::vector<std::pair<std::string, std::string>> attributes_;
};

/// Collects the kind of each visited option, by flag.
class OptionKinds : public core::OptionVisitor {
 public:
  void declare(const core::OptionDeclaration& declaration, core::OptionValue value) override;
  const std::map<std::string, core::OptionKind>& kinds() const { return kinds_; }

 private:
  std::map<std::string, core::OptionKind> kinds_;
};

/// Throws ConfigError "--flag must be one of a, b, but got 'value'" unless value is a choice.
void require_choice(const std::string& flag, const std::string& value,
                    const std::vector<std::string>& choices);

}  // namespace cflrun::cli
