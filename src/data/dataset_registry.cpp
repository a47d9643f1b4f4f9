#include <cflrun/data/dataset_registry.hpp>

#include <boost/algorithm/string/join.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/data/datasets/cifar10.hpp>
#include <cflrun/data/datasets/fmnist.hpp>
#include <cflrun/data/datasets/linreg.hpp>
#include <cflrun/data/datasets/mnist.hpp>

namespace cflrun::data {

const std::vector<std::shared_ptr<const DatasetSource>>& registered_datasets() {
  // One line per dataset (src/data/README.md); the order is --dataset's order in help and errors.
  static const std::vector<std::shared_ptr<const DatasetSource>> entries{
      std::make_shared<FashionMnistSource>(),
      std::make_shared<MnistSource>(),
      std::make_shared<Cifar10Source>(),
      std::make_shared<LinearRegressionSource>(),
  };
  return entries;
}

std::vector<std::string> registered_dataset_names() {
  std::vector<std::string> names;
  for (const auto& source : registered_datasets()) {
    names.push_back(source->name());
  }
  return names;
}

std::string dataset_names(const std::string& separator) {
  return boost::algorithm::join(registered_dataset_names(), separator);
}

const DatasetSource* find_dataset_or_null(const std::string& name) {
  for (const auto& source : registered_datasets()) {
    if (source->name() == name) {
      return source.get();
    }
  }
  return nullptr;
}

const DatasetSource& find_dataset(const std::string& name) {
  const DatasetSource* source = find_dataset_or_null(name);
  if (source == nullptr) {
    throw ConfigError("--dataset must be one of " + dataset_names(", ") + ", but got '" + name +
                      "'");
  }
  return *source;
}

}  // namespace cflrun::data
