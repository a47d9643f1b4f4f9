#include "option_visitors.hpp"

#include <algorithm>
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

/// Throws ConfigError "--flag must be <expected or range>, but got <shown>" unless value is in
/// range.
void require_in(const core::OptionDeclaration& declaration, double value,
                const std::string& shown) {
  if (!declaration.range.contains(value)) {
    const auto expected =
        declaration.expected.empty() ? declaration.range.describe() : declaration.expected;
    throw ConfigError("--" + declaration.flag + " must be " + expected + ", but got " + shown);
  }
}

// The Boost value of each kind of member: bound to it, with its default unless show_default is off.

po::value_semantic* semantic(const core::OptionDeclaration& /*declaration*/, bool* member) {
  if (!*member) {
    return po::bool_switch(member);
  }
  return po::value(member)->default_value(true, "1")->implicit_value(
      true, "1");  // "1": as lexical_cast writes true
}

template <class Number>
po::value_semantic* semantic(const core::OptionDeclaration& declaration, Number* member) {
  auto* value = po::value(member);
  return declaration.show_default ? value->default_value(*member) : value;
}

po::value_semantic* semantic(const core::OptionDeclaration& declaration, double* member) {
  auto* value = po::value(member);
  return declaration.show_default ? value->default_value(*member, short_text(*member)) : value;
}

/// A seed: parsed signed, so that "-1" is refused instead of wrapped, and stored once in range.
template <class Seed>
po::value_semantic* seed_semantic(const core::OptionDeclaration& declaration, Seed* member,
                                  std::optional<std::int64_t> shown_default) {
  auto* value = po::value<std::int64_t>()->notifier([member, declaration](std::int64_t seed) {
    require_in(declaration, static_cast<double>(seed), std::to_string(seed));
    *member = static_cast<std::uint64_t>(seed);
  });
  return declaration.show_default && shown_default ? value->default_value(*shown_default) : value;
}

po::value_semantic* semantic(const core::OptionDeclaration& declaration, std::uint64_t* member) {
  return seed_semantic(declaration, member, static_cast<std::int64_t>(*member));
}

po::value_semantic* semantic(const core::OptionDeclaration& declaration,
                             std::optional<std::uint64_t>* member) {
  return seed_semantic(declaration, member, std::nullopt);
}

/// A choice: parsed as a word and stored as the enum value it names.
po::value_semantic* semantic(const core::OptionDeclaration& declaration,
                             const core::ChoiceMember& member) {
  auto* value = po::value<std::string>()->notifier([member, declaration](const std::string& word) {
    if (!member.set(word)) {
      require_choice(declaration.flag, word, declaration.choices);
    }
  });
  return declaration.show_default ? value->default_value(member.word()) : value;
}

std::string recorded_text(const core::ChoiceMember& member) { return member.word(); }
std::string recorded_text(bool* member) { return *member ? "true" : "false"; }
std::string recorded_text(double* member) { return option_text(*member); }
std::string recorded_text(std::string* member) { return *member; }
std::string recorded_text(std::optional<std::uint64_t>* member) {
  return *member ? std::to_string(**member) : "";
}
template <class Integer>
std::string recorded_text(Integer* member) {
  return std::to_string(*member);
}

}  // namespace

std::string option_text(double value) {
  std::ostringstream text;
  text.precision(17);
  text << value;
  return text.str();
}

void require_choice(const std::string& flag, const std::string& value,
                    const std::vector<std::string>& choices) {
  std::string list;
  for (const auto& choice : choices) {
    if (value == choice) {
      return;
    }
    list += (list.empty() ? "" : ", ") + choice;
  }
  throw ConfigError("--" + flag + " must be one of " + list + ", but got '" + value + "'");
}

void OptionDescriber::section(const std::string& title) {
  const auto seen = std::find(titles_.begin(), titles_.end(), title);
  current_ = static_cast<std::size_t>(seen - titles_.begin());
  if (seen == titles_.end()) {
    titles_.push_back(title);
    sections_.emplace_back(title);
  }
}

void OptionDescriber::declare(const core::OptionDeclaration& declaration, core::OptionValue value) {
  if (sections_.empty()) {
    section("");
  }
  const auto* semantic_value =
      std::visit([&](const auto& member) { return semantic(declaration, member); }, value);
  sections_[current_].add_options()(declaration.flag.c_str(), semantic_value,
                                    declaration.help.c_str());
}

void OptionValidator::declare(const core::OptionDeclaration& declaration, core::OptionValue value) {
  if (const auto word = std::get_if<std::string*>(&value);
      word != nullptr && !declaration.choices.empty()) {
    require_choice(declaration.flag, **word, declaration.choices);
  } else if (const auto integer = std::get_if<int*>(&value)) {
    require_in(declaration, **integer, std::to_string(**integer));
  } else if (const auto count = std::get_if<std::int64_t*>(&value)) {
    require_in(declaration, static_cast<double>(**count), std::to_string(**count));
  } else if (const auto real = std::get_if<double*>(&value)) {
    require_in(declaration, **real, short_text(**real));
  }
  // Switches and free words have no range; seeds and choices (ChoiceMember) are checked as they
  // are parsed (OptionDescriber).
}

void OptionRecorder::declare(const core::OptionDeclaration& declaration, core::OptionValue value) {
  if (!declaration.recorded) {
    return;
  }
  const auto own_text = std::visit([](const auto& member) { return recorded_text(member); }, value);
  attributes_.emplace_back(declaration.flag, declaration.recorded_as.value_or(own_text));
}

void OptionKinds::declare(const core::OptionDeclaration& declaration, core::OptionValue /*value*/) {
  kinds_.emplace(declaration.flag, declaration.kind);
}

}  // namespace cflrun::cli
