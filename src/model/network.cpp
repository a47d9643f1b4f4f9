#include <cflrun/model/network.hpp>

#include <functional>
#include <numeric>

#include <cflrun/core/error.hpp>
#include <cflrun/model/architectures.hpp>
#include <cflrun/model/conv_net.hpp>

namespace cflrun::model {
namespace {

constexpr Architecture kAll[] = {
    Architecture::kCnn,         Architecture::kCifarCnn,        Architecture::kMlp,
    Architecture::kAutoencoder, Architecture::kConvAutoencoder, Architecture::kLinear,
    Architecture::kFedAvgCnn};
/// The classifiers with a body/head split, for the error messages of the models without one.
constexpr const char* kClassifiers = "--model cnn, fedavg_cnn, cifar_cnn or mlp";

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (const auto size : shape) {
    text += (text.empty() ? "" : ", ") + std::to_string(size);
  }
  return "{" + text + "}";
}

void require_shape(Architecture architecture, const NetworkShape& shape,
                   const std::vector<std::int64_t>& expected, const char* datasets) {
  if (shape.sample_shape != expected) {
    throw ConfigError("--model " + architecture_name(architecture) + " takes samples of shape " +
                      shape_text(expected) + " (" + datasets + "), but the data has " +
                      shape_text(shape.sample_shape) +
                      "; choose --model auto or a model for this --dataset");
  }
}

void require_classes(Architecture architecture, const NetworkShape& shape) {
  if (shape.num_classes < 1) {
    throw ConfigError(
        "--model " + architecture_name(architecture) +
        " is a classifier, but the data has no classes (--dataset linreg); use --model linear");
  }
}

/// PFLlib's FedAvgCNN in its (F)MNIST ([1, 28, 28]) or its CIFAR-10 ([3, 32, 32]) shape.
std::shared_ptr<Network> make_fedavg_cnn(const NetworkShape& shape) {
  const bool colour = !shape.sample_shape.empty() && shape.sample_shape.front() == 3;
  const std::vector<std::int64_t> expected =
      colour ? std::vector<std::int64_t>{3, 32, 32} : std::vector<std::int64_t>{1, 28, 28};
  require_shape(Architecture::kFedAvgCnn, shape, expected,
                "MNIST, Fashion-MNIST; {3, 32, 32} for CIFAR-10");
  require_classes(Architecture::kFedAvgCnn, shape);
  return std::make_shared<FedAvgCnn>(expected[0], expected[1], shape.num_classes);
}

}  // namespace

Architecture parse_architecture(const std::string& name) {
  std::string names;
  for (const auto architecture : kAll) {
    if (name == architecture_name(architecture)) {
      return architecture;
    }
    names += (names.empty() ? "" : ", ") + architecture_name(architecture);
  }
  throw ConfigError("--model must be one of " + names + ", but got '" + name + "'");
}

std::vector<Architecture> all_architectures() { return {std::begin(kAll), std::end(kAll)}; }

NetworkShape paper_shape(Architecture architecture) {
  switch (architecture) {
    case Architecture::kCifarCnn:
    case Architecture::kConvAutoencoder:
      return {{3, 32, 32}, 10};
    case Architecture::kLinear:
      return {{20}, 0};
    default:
      return {{1, 28, 28}, 10};
  }
}

std::string architecture_name(Architecture architecture) {
  switch (architecture) {
    case Architecture::kCnn:
      return "cnn";
    case Architecture::kCifarCnn:
      return "cifar_cnn";
    case Architecture::kMlp:
      return "mlp";
    case Architecture::kAutoencoder:
      return "autoencoder";
    case Architecture::kConvAutoencoder:
      return "conv_autoencoder";
    case Architecture::kLinear:
      return "linear";
    case Architecture::kFedAvgCnn:
      return "fedavg_cnn";
  }
  return "unknown";
}

std::shared_ptr<Network> make_network(Architecture architecture, const NetworkShape& shape) {
  switch (architecture) {
    case Architecture::kCnn:
      require_shape(architecture, shape, {1, 28, 28}, "MNIST, Fashion-MNIST");
      require_classes(architecture, shape);
      return ConvNet(shape.num_classes).ptr();
    case Architecture::kCifarCnn:
      require_shape(architecture, shape, {3, 32, 32}, "CIFAR-10");
      require_classes(architecture, shape);
      return std::make_shared<CifarCnn>(shape.num_classes);
    case Architecture::kMlp:
      require_classes(architecture, shape);
      return std::make_shared<Mlp>(shape.sample_size(), shape.num_classes);
    case Architecture::kAutoencoder:
      return std::make_shared<Autoencoder>(shape.sample_size());
    case Architecture::kConvAutoencoder:
      require_shape(architecture, shape, {3, 32, 32}, "CIFAR-10");
      return std::make_shared<ConvAutoencoder>();
    case Architecture::kLinear:
      if (shape.num_classes != 0) {
        throw ConfigError(
            "--model linear predicts one real value (--dataset linreg); use a classifier here");
      }
      return std::make_shared<LinearModel>(shape.sample_size());
    case Architecture::kFedAvgCnn:
      return make_fedavg_cnn(shape);
  }
  throw ConfigError("make_network: unknown architecture");
}

}  // namespace cflrun::model

namespace cflrun::model {

std::int64_t NetworkShape::sample_size() const {
  return std::accumulate(sample_shape.begin(), sample_shape.end(), std::int64_t{1},
                         std::multiplies<>());
}

torch::Tensor Network::features(const torch::Tensor& /*inputs*/) {
  throw ConfigError(std::string("this model has no body/head split; use a classifier (") +
                    kClassifiers + ")");
}

torch::Tensor Network::head(const torch::Tensor& /*features*/) {
  throw ConfigError(std::string("this model has no body/head split; use a classifier (") +
                    kClassifiers + ")");
}

bool has_head(Architecture architecture) {
  return architecture == Architecture::kCnn || architecture == Architecture::kCifarCnn ||
         architecture == Architecture::kMlp || architecture == Architecture::kFedAvgCnn;
}

int feature_size(Architecture architecture) {
  switch (architecture) {
    case Architecture::kCnn:
      return 256;  // 16 channels x 4 x 4
    case Architecture::kCifarCnn:
      return 512;
    case Architecture::kFedAvgCnn:
      return static_cast<int>(FedAvgCnn::kHidden);
    case Architecture::kMlp:
      return 200;
    default:
      return 0;
  }
}

FlatRange head_range(const Network& network) {
  if (!network.has_head()) {
    throw ConfigError(std::string("this model has no head; use a classifier (") + kClassifiers +
                      ")");
  }
  return trailing_layers(network, 1);
}

}  // namespace cflrun::model
