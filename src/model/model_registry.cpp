#include <cflrun/model/model_registry.hpp>

#include <algorithm>
#include <stdexcept>

#include <cflrun/core/error.hpp>
#include <cflrun/model/architectures.hpp>
#include <cflrun/model/conv_net.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::model {
namespace {

const NetworkShape kGreyscale{{1, 28, 28}, 10};
const NetworkShape kColour{{3, 32, 32}, 10};

std::string shape_text(const std::vector<std::int64_t>& shape) {
  std::string text;
  for (const auto size : shape) {
    text += (text.empty() ? "" : ", ") + std::to_string(size);
  }
  return "{" + text + "}";
}

/// @throws ConfigError naming the model, the shape it takes and the data's.
void require_shape(const std::string& model, const NetworkShape& shape,
                   const std::vector<std::int64_t>& expected, const std::string& datasets) {
  if (shape.sample_shape != expected) {
    throw ConfigError("--model " + model + " takes samples of shape " + shape_text(expected) +
                      " (" + datasets + "), but the data has " + shape_text(shape.sample_shape) +
                      "; choose --model auto or a model for this --dataset");
  }
}

void require_classes(const std::string& model, const NetworkShape& shape) {
  if (shape.num_classes < 1) {
    throw ConfigError("--model " + model +
                      " is a classifier, but the data has no classes (--dataset linreg); use "
                      "--model linear");
  }
}

ModelEntry cnn() {
  return {.name = "cnn",
          .description = "conv 6 -> conv 16 (5x5, ReLU, 2x2 max-pool each) -> fc C",
          .source = "CLoVE App. B; official code GenConvNet",
          .paper_shape = kGreyscale,
          .paper_datasets = "mnist, fmnist",
          .feature_size = 256,
          .reconstructs = false,
          .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = true},
          .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
            require_shape("cnn", shape, {1, 28, 28}, "MNIST, Fashion-MNIST");
            require_classes("cnn", shape);
            return ConvNet(shape.num_classes).ptr();
          }};
}

ModelEntry cifar_cnn() {
  return {.name = "cifar_cnn",
          .description =
              "4 x (conv 3x3, batch norm, ReLU, max-pool) 64-512 -> fc 1 024 -> fc 512 "
              "(dropout 0.5) -> fc C",
          .source = "CLoVE App. B; official code Cifar10CNN",
          .paper_shape = kColour,
          .paper_datasets = "cifar10",
          .feature_size = 512,
          .reconstructs = false,
          .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = false},
          .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
            require_shape("cifar_cnn", shape, {3, 32, 32}, "CIFAR-10");
            require_classes("cifar_cnn", shape);
            return std::make_shared<CifarCnn>(shape.num_classes);
          }};
}

ModelEntry mlp() {
  return {.name = "mlp",
          .description = "fc 200 (ReLU) -> fc C",
          .source = "IFCA Sec. 6.2",
          .paper_shape = kGreyscale,
          .paper_datasets = "mnist, fmnist (any classified data)",
          .feature_size = 200,
          .reconstructs = false,
          .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = false},
          .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
            require_classes("mlp", shape);
            return std::make_shared<Mlp>(shape.sample_size(), shape.num_classes);
          }};
}

ModelEntry autoencoder() {
  return {.name = "autoencoder",
          .description = "fc d -> d -> d/2 -> d/4 -> d/2 -> d -> d (ReLU), sigmoid output",
          .source = "CLoVE App. C.1.2; official code Autoencoder",
          .paper_shape = kGreyscale,
          .paper_datasets = "mnist, fmnist with --unsupervised (any data)",
          .feature_size = 0,
          .reconstructs = true,
          .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = false},
          .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
            return std::make_shared<Autoencoder>(shape.sample_size());
          }};
}

ModelEntry conv_autoencoder() {
  return {
      .name = "conv_autoencoder",
      .description = "3 strided convs 32-128 -> fc 128 latent -> 3 transposed convs, tanh output",
      .source = "CLoVE App. C.1.2; official code CIFAR10Autoencoder",
      .paper_shape = kColour,
      .paper_datasets = "cifar10 with --unsupervised",
      .feature_size = 0,
      .reconstructs = true,
      .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = false},
      .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
        require_shape("conv_autoencoder", shape, {3, 32, 32}, "CIFAR-10");
        return std::make_shared<ConvAutoencoder>();
      }};
}

ModelEntry linear() {
  return {.name = "linear",
          .description = "y = <theta, x>, no bias",
          .source = "CLoVE App. C.1.1 (mixed linear regression)",
          .paper_shape = NetworkShape{{20}, 0},
          .paper_datasets = "linreg",
          .feature_size = 0,
          .reconstructs = false,
          .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = false},
          .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
            if (shape.num_classes != 0) {
              throw ConfigError(
                  "--model linear predicts one real value (--dataset linreg); use a classifier "
                  "here");
            }
            return std::make_shared<LinearModel>(shape.sample_size());
          }};
}

/// PFLlib's FedAvgCNN in its (F)MNIST ([1, 28, 28]) or its CIFAR-10 ([3, 32, 32]) shape.
ModelEntry fedavg_cnn() {
  return {
      .name = "fedavg_cnn",
      .description = "conv 32 -> conv 64 (5x5, ReLU, 2x2 max-pool each) -> fc 512 (ReLU) -> fc C",
      .source = "PFLlib FedAvgCNN, the model of the paper's PFLlib rows",
      .paper_shape = kGreyscale,
      .paper_datasets = "mnist, fmnist; cifar10 at 3x32x32",
      .feature_size = static_cast<int>(FedAvgCnn::kHidden),
      .reconstructs = false,
      .forms = {.libtorch = true, .client_batched = true, .cpu_kernels = true},
      .build = [](const NetworkShape& shape) -> std::shared_ptr<Network> {
        const bool colour = !shape.sample_shape.empty() && shape.sample_shape.front() == 3;
        const auto& expected = colour ? kColour.sample_shape : kGreyscale.sample_shape;
        require_shape("fedavg_cnn", shape, expected,
                      "MNIST, Fashion-MNIST; {3, 32, 32} for CIFAR-10");
        require_classes("fedavg_cnn", shape);
        return std::make_shared<FedAvgCnn>(expected[0], expected[1], shape.num_classes);
      }};
}

/// `entries` with each one's architecture set to its position.
std::vector<ModelEntry> numbered(std::vector<ModelEntry> entries) {
  for (std::size_t i = 0; i < entries.size(); ++i) {
    entries[i].architecture = static_cast<Architecture>(i);
  }
  return entries;
}

}  // namespace

const std::vector<ModelEntry>& registered_models() {
  static const std::vector<ModelEntry> models = numbered(
      {cnn(), cifar_cnn(), mlp(), autoencoder(), conv_autoencoder(), linear(), fedavg_cnn()});
  return models;
}

const ModelEntry& model_entry(Architecture architecture) {
  const auto& models = registered_models();
  const auto found = std::find_if(models.begin(), models.end(), [&](const ModelEntry& entry) {
    return entry.architecture == architecture;
  });
  if (found == models.end()) {
    throw std::logic_error("model_entry: architecture " +
                           std::to_string(static_cast<int>(architecture)) + " is not registered");
  }
  return *found;
}

const ModelEntry& model_entry(const std::string& name) {
  const auto& models = registered_models();
  const auto found = std::find_if(models.begin(), models.end(),
                                  [&](const ModelEntry& entry) { return entry.name == name; });
  if (found == models.end()) {
    std::string names;
    for (const auto& entry : models) {
      names += (names.empty() ? "" : ", ") + entry.name;
    }
    throw ConfigError("--model must be one of " + names + ", but got '" + name + "'");
  }
  return *found;
}

std::string model_names_where(const std::function<bool(const ModelEntry&)>& keep) {
  std::vector<std::string> names;
  for (const auto& entry : registered_models()) {
    if (keep(entry)) {
      names.push_back(entry.name);
    }
  }
  std::string text;
  for (std::size_t i = 0; i < names.size(); ++i) {
    text += (i == 0 ? "" : (i + 1 == names.size() ? " or " : ", ")) + names[i];
  }
  return text;
}

std::string head_model_names() {
  return model_names_where([](const ModelEntry& entry) { return entry.has_head(); });
}

std::string reconstruction_model_names() {
  return model_names_where([](const ModelEntry& entry) { return entry.reconstructs; });
}

std::int64_t paper_state_size(const ModelEntry& entry) {
  return flat_state_size(*entry.build(entry.paper_shape));
}

}  // namespace cflrun::model
