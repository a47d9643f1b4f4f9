#include "dataset_help.hpp"

#include <algorithm>
#include <utility>

#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/data/mixture.hpp>
#include <cflrun/data/partition.hpp>
#include <cflrun/model/model_registry.hpp>

namespace cflrun::cli {

std::string dataset_help() {
  std::string help;
  for (const auto& source : data::registered_datasets()) {
    const auto summary = source->summary();
    help += (help.empty() ? "" : " | ") + source->name() +
            (summary.empty() ? "" : " (" + summary + ")");
  }
  return help;
}

std::vector<std::string> partition_choices() {
  auto choices = data::partition_names();
  const auto mixtures = data::mixture_partition_names();
  choices.insert(choices.end(), mixtures.begin(), mixtures.end());
  return choices;
}

std::string data_dir_help() {
  std::string defaults;
  for (const auto& source : data::registered_datasets()) {
    if (!source->default_data_dir().empty()) {
      defaults += (defaults.empty() ? "" : ", ") + source->default_data_dir().string() + " for " +
                  source->name();
    }
  }
  return "directory of the data files (\"\" = " + defaults + ")";
}

std::vector<std::string> model_choices() {
  std::vector<std::string> choices{"auto"};
  for (const auto& entry : model::registered_models()) {
    choices.push_back(entry.name);
  }
  return choices;
}

std::string model_help() {
  std::vector<std::pair<std::string, std::string>>
      defaults;  // (model, datasets), in registration order
  for (const auto& source : data::registered_datasets()) {
    const auto model = source->default_model(/*unsupervised=*/false);
    auto same = std::find_if(defaults.begin(), defaults.end(),
                             [&](const auto& entry) { return entry.first == model; });
    if (same == defaults.end()) {
      defaults.emplace_back(model, source->name());
    } else {
      same->second += " and " + source->name();
    }
  }
  std::string help;
  for (const auto& choice : model_choices()) {
    help += (help.empty() ? "" : " | ") + choice;
  }
  help += " (`cflrun models` describes each; auto: ";
  for (const auto& [model, datasets] : defaults) {
    help += model + " for " + datasets + ", ";
  }
  return help + "autoencoders with --unsupervised)";
}

}  // namespace cflrun::cli
