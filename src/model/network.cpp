#include <cflrun/model/network.hpp>

#include <functional>
#include <numeric>

#include <cflrun/core/error.hpp>
#include <cflrun/model/architectures.hpp>
#include <cflrun/model/conv_net.hpp>

namespace cflrun::model {
namespace {

constexpr Architecture kAll[] = {Architecture::kCnn,         Architecture::kCifarCnn,        Architecture::kMlp,
                                 Architecture::kAutoencoder, Architecture::kConvAutoencoder, Architecture::kLinear};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (const auto size : shape) {
    text += (text.empty() ? "" : ", ") + std::to_string(size);
  }
  return "{" + text + "}";
}

void require_shape(Architecture architecture, const NetworkShape& shape, const std::vector<std::int64_t>& expected,
                   const char* datasets) {
  if (shape.sample_shape != expected) {
    throw ConfigError("--model " + architecture_name(architecture) + " takes samples of shape " +
                      shape_text(expected) + " (" + datasets + "), but the data has " +
                      shape_text(shape.sample_shape) + "; choose --model auto or a model for this --dataset");
  }
}

std::int64_t features(const NetworkShape& shape) {
  return std::accumulate(shape.sample_shape.begin(), shape.sample_shape.end(), std::int64_t{1},
                         std::multiplies<>());
}

void require_classes(Architecture architecture, const NetworkShape& shape) {
  if (shape.num_classes < 1) {
    throw ConfigError("--model " + architecture_name(architecture) +
                      " is a classifier, but the data has no classes (--dataset linreg); use --model linear");
  }
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
      return std::make_shared<Mlp>(features(shape), shape.num_classes);
    case Architecture::kAutoencoder:
      return std::make_shared<Autoencoder>(features(shape));
    case Architecture::kConvAutoencoder:
      require_shape(architecture, shape, {3, 32, 32}, "CIFAR-10");
      return std::make_shared<ConvAutoencoder>();
    case Architecture::kLinear:
      if (shape.num_classes != 0) {
        throw ConfigError("--model linear predicts one real value (--dataset linreg); use a classifier here");
      }
      return std::make_shared<LinearModel>(features(shape));
  }
  throw ConfigError("make_network: unknown architecture");
}

}  // namespace cflrun::model

namespace cflrun::model {

torch::Tensor Network::features(const torch::Tensor& /*inputs*/) {
  throw ConfigError("this model has no body/head split; use a classifier (--model cnn, cifar_cnn or mlp)");
}

torch::Tensor Network::head(const torch::Tensor& /*features*/) {
  throw ConfigError("this model has no body/head split; use a classifier (--model cnn, cifar_cnn or mlp)");
}

bool has_head(Architecture architecture) {
  return architecture == Architecture::kCnn || architecture == Architecture::kCifarCnn ||
         architecture == Architecture::kMlp;
}

int feature_size(Architecture architecture) {
  switch (architecture) {
    case Architecture::kCnn:
      return 256;  // 16 channels x 4 x 4
    case Architecture::kCifarCnn:
      return 512;
    case Architecture::kMlp:
      return 200;
    default:
      return 0;
  }
}

FlatRange head_range(const Network& network) {
  if (!network.has_head()) {
    throw ConfigError("this model has no head; use a classifier (--model cnn, cifar_cnn or mlp)");
  }
  return trailing_layers(network, 1);
}

}  // namespace cflrun::model
