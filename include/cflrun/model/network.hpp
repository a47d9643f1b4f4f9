#pragma once
/// @file
/// The models a run can train, behind one interface (CLoVE App. B and C; IFCA Sec. 6), and the
/// factory that builds them by command-line name (`--model`).

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/nn/module.h>
#include <torch/types.h>

#include <cflrun/model/flat_state.hpp>

namespace cflrun::model {

/// A trainable model: a torch::nn::Module with one forward function. Every model of a run has
/// the same architecture, so their flat states (flat_state.hpp) have the same layout.
///
/// Classifiers (cnn, fedavg_cnn, cifar_cnn, mlp) are split into a body, the feature extractor, and
/// a head, their last linear layer: forward(x) = head(features(x)) (the split of FedProto and
/// FedPAC; PFLlib's BaseHeadSplit, pfl-baselines-setup.md Sec. 1). The head's parameters are the
/// last layer's, the flat-state range head_range().
class Network : public torch::nn::Module {
 public:
  /// @param inputs  [N, ...sample_shape] float32 on the module's device, any memory format.
  /// @return        [N, outputs] float32: class logits, the regression prediction ([N, 1]) or the
  ///                flattened reconstruction ([N, prod(sample_shape)]), see Architecture.
  /// @throws c10::Error from LibTorch if the input shape does not fit the architecture.
  virtual torch::Tensor forward(const torch::Tensor& inputs) = 0;
  /// Whether the model is a classifier with a body and a head (cnn, fedavg_cnn, cifar_cnn, mlp).
  virtual bool has_head() const { return false; }
  /// The body's output for `inputs`: [N, d] float32 features, the head's input (d = 256 for the
  /// cnn, 512 for fedavg_cnn and cifar_cnn, 200 for mlp). @throws ConfigError if !has_head().
  virtual torch::Tensor features(const torch::Tensor& inputs);
  /// The head: [N, d] features -> [N, C] logits. @throws ConfigError if !has_head().
  virtual torch::Tensor head(const torch::Tensor& features);
  /// The eval-mode forward pass as TorchScript source of `def forward(self, x)`, reading each
  /// parameter and buffer as an attribute named by its path with '.' replaced by '_' (e.g.
  /// self.conv1_weight), for InferenceForward; "" if the architecture has none (then scoring runs
  /// the eager forward).
  virtual std::string torchscript() const { return ""; }
  /// Whether the eager forward runs cflrun's own CPU kernels now (cpu_kernels.hpp; the registry's
  /// ModelForms::cpu_kernels and --fused-kernels): then InferenceForward scores with the eager
  /// forward, which measured faster than the frozen TorchScript on the CPU.
  virtual bool runs_cpu_kernels() const { return false; }
};

/// A registered model (model_registry.hpp): its position in registered_models(). The enumerators
/// name the architectures of the CLoVE paper's official code (clove-official-setup.md Sec. 9), IFCA
/// and PFLlib (pfl-baselines-setup.md Sec. 1) that code and tests refer to; a model registered
/// after them has its position as value and needs no enumerator (parse_architecture finds it by
/// name).
enum class Architecture : int {
  kCnn,          ///< "cnn": the small MNIST/FMNIST CNN (GenConvNet, conv_net.hpp), 5 142 params.
  kCifarCnn,     ///< "cifar_cnn": Cifar10CNN, 4 conv-BN-ReLU-pool blocks + 3 FC with dropout.
  kMlp,          ///< "mlp": IFCA's MLP, flatten -> Linear(d, 200) -> ReLU -> Linear(200, C).
  kAutoencoder,  ///< "autoencoder": fully connected, d -> d -> d/2 -> d/4 -> d/2 -> d -> d,
                 ///< sigmoid.
  kConvAutoencoder,  ///< "conv_autoencoder": CIFAR10Autoencoder, 3 strided convs, 128 latent, tanh.
  kLinear,           ///< "linear": Linear(d, 1) without bias (mixed linear regression, App. C.1.1).
  kFedAvgCnn,  ///< "fedavg_cnn": PFLlib's FedAvgCNN (conv 32, conv 64, FC 512, fc C), the PFLlib
               ///< rows' model.
};

/// Parses a --model value. @throws ConfigError naming the accepted values otherwise.
Architecture parse_architecture(const std::string& name);

/// The command-line name of an architecture, e.g. "cifar_cnn".
std::string architecture_name(Architecture architecture);

/// What a model is built for.
struct NetworkShape {
  std::vector<std::int64_t>
      sample_shape;      ///< one input sample, e.g. {1, 28, 28}, {3, 32, 32}, {20}.
  int num_classes = 10;  ///< logits of a classifier; unused by autoencoders and linear.

  /// d, floats of one input sample: the product of sample_shape (1 for an empty shape).
  std::int64_t sample_size() const;
};

/// Builds a freshly initialised model (LibTorch default initialisation from the global generator,
/// so seed it with torch::manual_seed first for a reproducible draw).
/// @throws ConfigError if the architecture cannot take `shape.sample_shape` (e.g. the CNN needs
///         {1, 28, 28}, cifar_cnn and conv_autoencoder {3, 32, 32}, fedavg_cnn either), naming
///         --model and the dataset that fits.
std::shared_ptr<Network> make_network(Architecture architecture, const NetworkShape& shape);

/// Every architecture cflrun has, in the order of the Architecture enum.
std::vector<Architecture> all_architectures();

/// The shape of the data the architecture is built for in the paper: {1, 28, 28} with 10 classes
/// (cnn, fedavg_cnn, mlp, autoencoder: MNIST, Fashion-MNIST), {3, 32, 32} with 10 classes
/// (cifar_cnn, conv_autoencoder: CIFAR-10), {20} without classes (linear: linreg, d = 20).
NetworkShape paper_shape(Architecture architecture);

/// Whether `architecture` builds a classifier with a body/head split (Network::has_head).
bool has_head(Architecture architecture);

/// d, the size of the body's output (Network::features) of `architecture`: 256 (cnn), 512
/// (fedavg_cnn, cifar_cnn), 200 (mlp); 0 for a model without a head.
int feature_size(Architecture architecture);

/// Where the head's parameters (the last layer's) lie in the model's flat state (flat_state.hpp);
/// the body is every other float.
/// @throws ConfigError if the model has no head.
FlatRange head_range(const Network& network);

}  // namespace cflrun::model
