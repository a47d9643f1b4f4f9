#include <cflrun/algo/registry.hpp>

#include <cflrun/algo/cfl.hpp>
#include <cflrun/algo/clove.hpp>
#include <cflrun/algo/fedala.hpp>
#include <cflrun/algo/fedavg.hpp>
#include <cflrun/algo/fedpac.hpp>
#include <cflrun/algo/fedproto.hpp>
#include <cflrun/algo/fedsoft.hpp>
#include <cflrun/algo/fesem.hpp>
#include <cflrun/algo/flexcfl.hpp>
#include <cflrun/algo/ifca.hpp>
#include <cflrun/algo/local_only.hpp>
#include <cflrun/algo/pacfl.hpp>
#include <cflrun/algo/per_fedavg.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::algo {

const std::vector<AlgorithmEntry>& registered_algorithms() {
  // One line per algorithm (include/cflrun/algo/README.md).
  static const std::vector<AlgorithmEntry> entries{
      registration<Clove>(),     registration<Ifca>(),     registration<FedAvg>(),
      registration<LocalOnly>(), registration<Pacfl>(),    registration<FedSoft>(),
      registration<Cfl>(),       registration<FlexCfl>(),  registration<FeSem>(),
      registration<PerFedAvg>(), registration<FedProto>(), registration<FedAla>(),
      registration<FedPac>(),
  };
  return entries;
}

std::string algorithm_names() {
  std::string names;
  for (const auto& entry : registered_algorithms()) {
    names += (names.empty() ? "" : " | ") + entry.name;
  }
  return names;
}

const AlgorithmEntry& find_algorithm(const std::string& name) {
  for (const auto& entry : registered_algorithms()) {
    if (entry.name == name) {
      return entry;
    }
  }
  throw ConfigError("--algorithm must be one of " + algorithm_names() + ", but got '" + name + "'");
}

AlgorithmOptionSet::AlgorithmOptionSet() {
  for (const auto& entry : registered_algorithms()) {
    groups_.emplace(entry.name, entry.make_options());
  }
}

AlgorithmOptionSet::AlgorithmOptionSet(const AlgorithmOptionSet& other) {
  for (const auto& [name, group] : other.groups_) {
    groups_.emplace(name, group->clone());
  }
}

AlgorithmOptionSet& AlgorithmOptionSet::operator=(const AlgorithmOptionSet& other) {
  if (this != &other) {
    AlgorithmOptionSet copy(other);
    groups_ = std::move(copy.groups_);
  }
  return *this;
}

core::OptionGroup& AlgorithmOptionSet::of(const std::string& name) {
  return *groups_.at(find_algorithm(name).name);
}

const core::OptionGroup& AlgorithmOptionSet::of(const std::string& name) const {
  return *groups_.at(find_algorithm(name).name);
}

void AlgorithmOptionSet::for_each(
    const std::function<void(const std::string& name, core::OptionGroup& options)>& visit) {
  for (const auto& entry : registered_algorithms()) {
    visit(entry.name, *groups_.at(entry.name));
  }
}

std::unique_ptr<Algorithm> make_algorithm(const std::string& name,
                                          const AlgorithmOptionSet& options,
                                          const AlgorithmContext& context) {
  auto algorithm = find_algorithm(name).make(options.of(name), context);
  check_run_options(name, algorithm->traits(), context);
  return algorithm;
}

}  // namespace cflrun::algo
