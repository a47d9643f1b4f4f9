#pragma once
// Private to src/cli: the --dataset, --data-dir, --partition and --model texts and choices, made
// from the dataset registry and the partitions' lists (data/dataset_registry.hpp,
// data/partition.hpp, data/mixture.hpp) and the architectures (model/network.hpp), so that a new
// dataset or partition needs no edit here.
#include <string>
#include <vector>

namespace cflrun::cli {

/// The --dataset help: every registered dataset's name, with its summary if it has one.
std::string dataset_help();
/// The --data-dir help: the default directory of every dataset that reads files.
std::string data_dir_help();
/// Every --partition value: the hard partitions, then the mixtures.
std::vector<std::string> partition_choices();
/// The --model choices: auto, then every architecture's name (model::all_architectures).
std::vector<std::string> model_choices();
/// The --model help: the architectures, and what auto means on each registered dataset (datasets
/// with the same default model are named together).
std::string model_help();

}  // namespace cflrun::cli
