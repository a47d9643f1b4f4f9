#pragma once
/// @file
/// The model registry: one entry per architecture cflrun can train (issue 46), as
/// data/dataset_registry.hpp is for datasets. Everything a user sees about the models (the
/// --model choices and help, the errors that name a kind of model, `cflrun models`, the table of
/// docs/models.md) is generated from these entries, and network.hpp's functions
/// (parse_architecture, make_network, paper_shape, feature_size, ...) read them.

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <cflrun/model/network.hpp>

namespace cflrun::model {

/// Which implementations of an architecture exist.
struct ModelForms {
  /// The torch::nn module of make_network (every architecture has it: the reference form).
  bool libtorch = true;
  /// ClientBatchedNetwork (client_batched.hpp): G clients' copies in one forward pass
  /// (`--client-batch`). The unit tests check it against ClientBatchedNetwork::supports.
  bool client_batched = false;
  /// Some of its layers run cflrun's own CPU kernels (cpu_kernels.hpp, `--fused-kernels`; issue
  /// 46): the cnn's two layers, each a 5x5 convolution fused with ReLU and 2x2 max-pooling. Its
  /// unit test checks that the models with it give the same training steps with the kernels on
  /// and off, within float rounding.
  bool cpu_kernels = false;
};

/// One architecture: its names, the shape the paper trains it on, its body/head split, its
/// forms and how to build it.
struct ModelEntry {
  /// Its position in registered_models(), set there: an entry's constructor leaves it.
  Architecture architecture = Architecture::kCnn;
  std::string name;         ///< the --model value, e.g. "fedavg_cnn".
  std::string description;  ///< one line: the layers, e.g. "conv 6 -> conv 16 (5x5) -> fc C".
  std::string source;       ///< where the architecture comes from (paper, section, code).
  /// The input shape and classes of the paper's data for it (the defaults of paper_shape).
  NetworkShape paper_shape;
  std::string paper_datasets;  ///< the --dataset values of that shape, e.g. "mnist, fmnist".
  /// d, the body's output size (Network::features), the head's input; 0 for a model without a
  /// body/head split (Network::has_head false).
  int feature_size = 0;
  /// Whether it reconstructs its input (an autoencoder: --unsupervised's objective) rather than
  /// predicting classes or a value.
  bool reconstructs = false;
  ModelForms forms;
  /// Builds a freshly initialised model for `shape` (LibTorch's default initialisation from the
  /// global generator). @throws ConfigError if the architecture cannot take the shape.
  std::function<std::shared_ptr<Network>(const NetworkShape& shape)> build;

  /// Whether it is a classifier with a body and a head (feature_size > 0).
  bool has_head() const { return feature_size > 0; }
};

/// Every registered architecture, each with `architecture` its position: the Architecture
/// enumerators first, in their order (src/model/model_registry.cpp). Adding a model is its own
/// file(s) plus one entry here (docs/models.md, "Adding a model").
const std::vector<ModelEntry>& registered_models();

/// The entry of `architecture`. @throws std::logic_error if it has none (a registry defect).
const ModelEntry& model_entry(Architecture architecture);

/// The entry whose --model name is `name`.
/// @throws ConfigError "--model must be one of <names>, but got '<name>'" if there is none.
const ModelEntry& model_entry(const std::string& name);

/// The --model names of the entries for which `keep` is true, in registry order, joined as
/// text: "a, b or c" (an empty string if none).
std::string model_names_where(const std::function<bool(const ModelEntry&)>& keep);

/// The classifiers with a body/head split, "cnn, cifar_cnn, mlp or fedavg_cnn": for the errors of
/// the methods that need a head.
std::string head_model_names();

/// The autoencoders, "autoencoder or conv_autoencoder": for the errors about --unsupervised.
std::string reconstruction_model_names();

/// The floats in the flat state of `entry` built for its paper shape (parameters and
/// floating-point buffers, flat_state.hpp), e.g. 5 142 for cnn. Builds the model: not for hot
/// paths. @throws ConfigError if the entry cannot take its own paper shape (a registry defect).
std::int64_t paper_state_size(const ModelEntry& entry);

}  // namespace cflrun::model
