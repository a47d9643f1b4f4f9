#pragma once
/// @file
/// The registry of datasets: the single place where --dataset names map to sources. A dataset is
/// its own header/source pair under data/datasets/ plus one line in src/data/dataset_registry.cpp
/// (see src/data/README.md).

#include <memory>
#include <string>
#include <vector>

#include <cflrun/data/dataset_source.hpp>

namespace cflrun::data {

/// Every registered dataset, in registration order (src/data/dataset_registry.cpp): the order of
/// --dataset's choices in help texts and errors.
const std::vector<std::shared_ptr<const DatasetSource>>& registered_datasets();

/// The registered dataset called `name`.
/// @throws ConfigError "--dataset must be one of fmnist, mnist, cifar10, linreg, but got '<name>'"
///         (the registered names) if there is none.
const DatasetSource& find_dataset(const std::string& name);

/// The registered dataset called `name`, or nullptr if there is none (for names read back from
/// result files, and for in-memory test datasets that are registered under no name).
const DatasetSource* find_dataset_or_null(const std::string& name);

/// The registered names, in registration order (--dataset's choices).
std::vector<std::string> registered_dataset_names();

/// The registered names joined by `separator`, e.g. "fmnist | mnist | cifar10 | linreg".
std::string dataset_names(const std::string& separator = " | ");

}  // namespace cflrun::data
