#pragma once
/// @file
/// The registry of algorithms: the single place where names map to types. An algorithm is its own
/// header/source pair plus one registration line in src/algo/registry.cpp (see
/// include/cflrun/algo/README.md).

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>
#include <cflrun/core/option_visitor.hpp>

namespace cflrun::algo {

/// One registered algorithm.
struct AlgorithmEntry {
  std::string name;     ///< --algorithm value, e.g. "cfl".
  std::string summary;  ///< one line for --help and the README, with the paper it implements.
  std::function<std::unique_ptr<core::OptionGroup>()>
      make_options;  ///< its options at their defaults.
  /// Builds the algorithm from its options (as made by make_options) and the run's facts.
  /// @throws ConfigError for an option out of range or incompatible with the run.
  std::function<std::unique_ptr<Algorithm>(const core::OptionGroup&, const AlgorithmContext&)> make;
};

/// The entry of algorithm class `A`, which defines `static constexpr const char* kName`,
/// `static constexpr const char* kSummary`, `using Options = ...` and a constructor
/// `A(const Options&, const AlgorithmContext&)`.
template <class A>
AlgorithmEntry registration() {
  return {A::kName, A::kSummary, [] { return std::make_unique<typename A::Options>(); },
          [](const core::OptionGroup& options,
             const AlgorithmContext& context) -> std::unique_ptr<Algorithm> {
            return std::make_unique<A>(dynamic_cast<const typename A::Options&>(options), context);
          }};
}

/// Every registered algorithm, in registration order (src/algo/registry.cpp).
const std::vector<AlgorithmEntry>& registered_algorithms();

/// The registered algorithm called `name`.
/// @throws ConfigError naming --algorithm and the registered names if there is none.
const AlgorithmEntry& find_algorithm(const std::string& name);

/// The registered names joined by " | ", for help texts.
std::string algorithm_names();

/// The options of every registered algorithm, each at its defaults until parsed (a value type:
/// copies are deep).
class AlgorithmOptionSet {
 public:
  AlgorithmOptionSet();
  AlgorithmOptionSet(const AlgorithmOptionSet& other);
  AlgorithmOptionSet& operator=(const AlgorithmOptionSet& other);
  AlgorithmOptionSet(AlgorithmOptionSet&&) noexcept = default;
  AlgorithmOptionSet& operator=(AlgorithmOptionSet&&) noexcept = default;

  /// The options of algorithm `name`. @throws ConfigError as find_algorithm.
  core::OptionGroup& of(const std::string& name);
  const core::OptionGroup& of(const std::string& name) const;
  /// The options of algorithm `name` as its options type `O` (e.g. CloveOptions).
  /// @throws std::bad_cast if `O` is not that algorithm's options type.
  template <class O>
  const O& get(const std::string& name) const {
    return dynamic_cast<const O&>(of(name));
  }
  template <class O>
  O& get(const std::string& name) {
    return dynamic_cast<O&>(of(name));
  }
  /// Calls `visit` with every algorithm's options, in registration order.
  void for_each(
      const std::function<void(const std::string& name, core::OptionGroup& options)>& visit);

 private:
  std::map<std::string, std::unique_ptr<core::OptionGroup>> groups_;
};

/// Builds algorithm `name` with its options from `options`.
/// @throws ConfigError for an unknown name, from the algorithm's constructor, or for a run option
///         the algorithm refuses (check_run_options).
std::unique_ptr<Algorithm> make_algorithm(const std::string& name,
                                          const AlgorithmOptionSet& options,
                                          const AlgorithmContext& context);

}  // namespace cflrun::algo
