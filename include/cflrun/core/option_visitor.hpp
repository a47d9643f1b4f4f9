#pragma once
/// @file
/// Options declared once: a part of cflrun (an algorithm, the run itself) lists each of its options
/// in one `visit` function, giving its flag, value (whose initial value is the default), help text,
/// valid range and kind; visitors then add them to the command line, validate them, record them in
/// the result file and sort them by kind (cli::OptionDescriber, cli::OptionValidator,
/// cli::OptionRecorder, cli::OptionKinds).

#include <array>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
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
  static Range above(double minimum) {
    return {minimum, std::numeric_limits<double>::infinity(), true};
  }
  /// minimum <= value <= maximum.
  static Range between(double minimum, double maximum) { return {minimum, maximum}; }
  /// Whether `value` lies in the range (NaN never does).
  bool contains(double value) const;
  /// The range in words for an error message, e.g. "> 0", "between 1 and 10".
  std::string describe() const;
};

/// What an option is to the experiment a run belongs to. Runs that differ only in options of the
/// other kinds are runs of one experiment: --skip-complete and --resume accept a file whose options
/// differ only in placement and bookkeeping, and `cflrun report` averages over seeds, placement and
/// bookkeeping (cli::option_names).
enum class OptionKind {
  kExperiment,   ///< defines the experiment: dataset, partition, algorithm, lr, rounds, ...
  kSeed,         ///< picks one repetition of the experiment: seed, data-seed, pool-seed.
  kPlacement,    ///< where and how the run computes without changing its results: threads, device,
                 ///< ...
  kBookkeeping,  ///< the invocation's paths and switches: out, overwrite, resume, quiet, ...
};

/// One word of a choice option and the enum value it stands for.
template <class Enum>
struct ChoiceWord {
  Enum value;
  const char* word;
};

/// The words of a choice option's enum, in --help order (e.g. {{kAdam, "adam"}, {kSgd, "sgd"}}).
template <class Enum, std::size_t N>
using ChoiceWords = std::array<ChoiceWord<Enum>, N>;

/// The word of `value` in `words`; "" if none names it (a table missing a value).
template <class Enum, std::size_t N>
std::string word_of(Enum value, const ChoiceWords<Enum, N>& words) {
  for (const auto& choice : words) {
    if (choice.value == value) {
      return choice.word;
    }
  }
  return "";
}

/// The value that `word` names in `words`, or none.
template <class Enum, std::size_t N>
std::optional<Enum> value_of(const std::string& word, const ChoiceWords<Enum, N>& words) {
  for (const auto& choice : words) {
    if (word == choice.word) {
      return choice.value;
    }
  }
  return std::nullopt;
}

/// The words of `words`, in order.
template <class Enum, std::size_t N>
std::vector<std::string> words_of(const ChoiceWords<Enum, N>& words) {
  std::vector<std::string> list;
  for (const auto& choice : words) {
    list.emplace_back(choice.word);
  }
  return list;
}

/// A choice option's enum member as the visitors see it: read and set as a word, so that the
/// command line, config files and /config carry words while the code compares enum values.
struct ChoiceMember {
  std::function<std::string()> word;  ///< the member's value as its word.
  /// Sets the member to the value `word` names; false (member unchanged) if no choice is called so.
  std::function<bool(const std::string& word)> set;
};

/// The ChoiceMember of `member`, whose values `words` (static storage) names.
template <class Enum, std::size_t N>
ChoiceMember choice_member(Enum& member, const ChoiceWords<Enum, N>& words) {
  return {[&member, &words] { return word_of(member, words); },
          [&member, &words](const std::string& word) {
            const auto value = value_of(word, words);
            if (value) {
              member = *value;
            }
            return value.has_value();
          }};
}

/// The member that holds an option's value (its value when visited first is the default); a
/// choice option's enum member is seen through a ChoiceMember.
using OptionValue = std::variant<bool*, int*, std::int64_t*, double*, std::string*, std::uint64_t*,
                                 std::optional<std::uint64_t>*, ChoiceMember>;

/// Everything declared about one option besides the member holding its value.
struct OptionDeclaration {
  std::string flag;  ///< the name without the leading "--", e.g. "parallel-clients".
  std::string help;  ///< the --help text, with the unit.
  OptionKind kind = OptionKind::kExperiment;  ///< what the option is to the experiment.
  Range range{};                              ///< numbers: the valid values (unbounded = any).
  /// The valid values in the words of an error message ("at least 1"); "" = range.describe().
  std::string expected{};
  std::vector<std::string> choices{};  ///< words: the valid values; empty = any word.
  bool show_default = true;  ///< --help shows "(=default)"; off where the default means "none".
  bool recorded = true;      ///< written to the result file's /config.
  /// The /config text when it is not the value itself (e.g. the model in force for --model auto).
  std::optional<std::string> recorded_as{};
};

/// Receives the options of one option group (core::OptionGroup::visit) or of a run
/// (cli::RunOptions::visit): `declare` once per option, `section` before each titled group.
class OptionVisitor {
 public:
  virtual ~OptionVisitor() = default;
  /// Receives one option: its declaration and the member that holds its value.
  virtual void declare(const OptionDeclaration& declaration, OptionValue value) = 0;
  /// The options declared next belong under `title` in --help (e.g. "Training"); a title seen
  /// before continues that section. Only the describer uses it.
  virtual void section(const std::string& /*title*/) {}

  /// An integer option of the experiment, valid in `range`.
  void option(const char* flag, int& value, const char* help, Range range) {
    declare({.flag = flag, .help = help, .range = std::move(range)}, &value);
  }
  /// A real option of the experiment, valid in `range`.
  void option(const char* flag, double& value, const char* help, Range range) {
    declare({.flag = flag, .help = help, .range = std::move(range)}, &value);
  }
  /// A choice option of the experiment held as an enum; `words` (static storage) names its values.
  template <class Enum, std::size_t N>
  void option(const char* flag, Enum& value, const char* help, const ChoiceWords<Enum, N>& words) {
    choice({.flag = flag, .help = help}, value, words);
  }
  /// A choice option held as an enum, its declaration's choices taken from `words` (static
  /// storage).
  template <class Enum, std::size_t N>
  void choice(OptionDeclaration declaration, Enum& value, const ChoiceWords<Enum, N>& words) {
    declaration.choices = words_of(words);
    declare(declaration, choice_member(value, words));
  }
};

/// The options of one part of cflrun (an algorithm's options struct derives from it).
class OptionGroup {
 public:
  virtual ~OptionGroup() = default;
  /// Title of the group in --help, e.g. "CFL (Sattler et al. 2021)".
  virtual std::string title() const = 0;
  /// Calls `visitor.option(...)` (or `declare`) once for every option, always in the same order.
  virtual void visit(OptionVisitor& visitor) = 0;
  /// A copy holding the same values.
  virtual std::unique_ptr<OptionGroup> clone() const = 0;
};

}  // namespace cflrun::core
