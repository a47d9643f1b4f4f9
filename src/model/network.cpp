#include <cflrun/model/network.hpp>

#include <functional>
#include <numeric>

#include <cflrun/core/error.hpp>
#include <cflrun/model/model_registry.hpp>

namespace cflrun::model {
namespace {

/// "use a classifier (--model cnn, cifar_cnn, mlp or fedavg_cnn)", for the models without a head.
std::string use_a_classifier() { return "use a classifier (--model " + head_model_names() + ")"; }

}  // namespace

Architecture parse_architecture(const std::string& name) { return model_entry(name).architecture; }

std::vector<Architecture> all_architectures() {
  std::vector<Architecture> architectures;
  for (const auto& entry : registered_models()) {
    architectures.push_back(entry.architecture);
  }
  return architectures;
}

NetworkShape paper_shape(Architecture architecture) {
  return model_entry(architecture).paper_shape;
}

std::string architecture_name(Architecture architecture) { return model_entry(architecture).name; }

std::shared_ptr<Network> make_network(Architecture architecture, const NetworkShape& shape) {
  return model_entry(architecture).build(shape);
}

std::int64_t NetworkShape::sample_size() const {
  return std::accumulate(sample_shape.begin(), sample_shape.end(), std::int64_t{1},
                         std::multiplies<>());
}

torch::Tensor Network::features(const torch::Tensor& /*inputs*/) {
  throw ConfigError("this model has no body/head split; " + use_a_classifier());
}

torch::Tensor Network::head(const torch::Tensor& /*features*/) {
  throw ConfigError("this model has no body/head split; " + use_a_classifier());
}

bool has_head(Architecture architecture) { return model_entry(architecture).has_head(); }

int feature_size(Architecture architecture) { return model_entry(architecture).feature_size; }

FlatRange head_range(const Network& network) {
  if (!network.has_head()) {
    throw ConfigError("this model has no head; " + use_a_classifier());
  }
  return trailing_layers(network, 1);
}

}  // namespace cflrun::model
