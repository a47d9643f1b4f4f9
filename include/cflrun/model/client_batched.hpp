#pragma once

/// @file
/// Many clients' copies of one model run as one: client-batched execution (issue 23). The paper's
/// models are small (the (F)MNIST CNN has 5 142 parameters, a local update is 5 mini-batches of
/// 100), so one client at a time leaves a GPU waiting on kernel launches. Here the parameters of G
/// clients are stacked along a leading client dimension and every layer runs all G clients in one
/// kernel: a linear layer as a batched matrix product (torch::baddbmm over [G, B, in] x
/// [G, in, out]), a convolution as one grouped convolution with groups = G over the clients'
/// channels laid side by side ([B, G * C, H, W]), ReLU, sigmoid, tanh and max-pooling as they are.
/// Batch normalisation (Ioffe & Szegedy, ICML 2015, Alg. 1) over that layout normalises every
/// client's channels by its own batch statistics (per-client statistics, per-client running
/// averages); dropout multiplies by masks the caller draws as each client's own model would.
/// Each client's output depends only on its own parameters and inputs, so the gradient of the sum
/// of the clients' losses is every client's own gradient.

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <torch/types.h>

#include <cflrun/model/network.hpp>

namespace cflrun::model {

/// One layer of a client-batched forward pass (built from the reference model's layers).
struct BatchedLayer {
  enum class Kind {
    kFlatten,
    kUnflatten,
    kLinear,
    kConv,
    kConvTranspose,
    kBatchNorm,
    kDropout,
    kRelu,
    kSigmoid,
    kTanh,
    kMaxPool
  };
  Kind kind = Kind::kRelu;
  std::size_t parameter = 0;  ///< index of the layer's weight in the stacked parameters.
  bool bias = false;          ///< whether the next stacked parameter is its bias.
  std::size_t buffer = 0;     ///< kBatchNorm: index of its running mean (then variance).
  double eps = 1e-5;          ///< kBatchNorm: added to the variance.
  double momentum = 0.1;      ///< kBatchNorm: weight of the batch in the running averages.
  double probability = 0.0;   ///< kDropout: p, the chance a unit is zeroed.
  std::int64_t features = 0;  ///< kLinear: outputs; kDropout: the units it masks.
  std::vector<std::int64_t> stride{1, 1};          ///< convolutions.
  std::vector<std::int64_t> padding{0, 0};         ///< convolutions.
  std::vector<std::int64_t> output_padding{0, 0};  ///< transposed convolutions.
  std::vector<std::int64_t> sizes;  ///< kUnflatten: the [C, H, W] one sample becomes.
  std::int64_t window = 2;          ///< kMaxPool: side of the square window (stride = window).
};

/// How a client-batched forward pass runs: in evaluation mode (batch norm by its running
/// averages, no dropout) or in training mode (batch statistics, running averages updated,
/// dropout masks applied).
struct BatchedPass {
  bool training = false;
  /// Training: [g, B] float, 1 for a client's real samples and 0 for padding rows, which then
  /// count in no client's batch statistics; undefined when every row is real.
  torch::Tensor valid;
  /// Training: one [g, B, features] float mask per dropout layer in forward order, each entry 0 or
  /// 1 / (1 - p) (inverted dropout, as torch::dropout scales); drawn by the caller so that every
  /// client's mask equals the one its own model would draw (local::batched_local_update).
  std::vector<torch::Tensor> dropout_masks;
};

/// G clients' copies of one model with stacked parameters (see the file comment).
///
/// Covers every architecture whose layers are linear, convolutions, transposed convolutions,
/// 2-d batch norm with running averages (fixed momentum), dropout, flatten/unflatten, ReLU,
/// sigmoid, tanh and max-pooling: all of cflrun's models (the registry's
/// ModelForms::client_batched, model_registry.hpp; its unit test checks the flag against
/// supports()).
class ClientBatchedNetwork {
 public:
  /// @param reference  a model of the architecture (its layers, flat-state layout and parameter
  ///                   dtype are read; its values are not used).
  /// @param capacity   G >= 1, the most clients held at once.
  /// @param device     where the stacked parameters live.
  /// @throws ConfigError if !supports(reference) or capacity < 1.
  ClientBatchedNetwork(const Network& reference, int capacity, torch::Device device);

  /// Whether `reference`'s architecture has a client-batched form (see the class comment).
  static bool supports(const Network& reference);

  /// G, the most clients held at once.
  int capacity() const { return capacity_; }
  /// The stacked parameters' dtype: the reference's (float32 for cflrun's models; the
  /// equality tests use float64, where rounding cannot flip a max-pool's choice).
  torch::ScalarType dtype() const { return parameters_.front().scalar_type(); }
  /// P, floats in one client's flat state (model::flat_state_size of the reference): its
  /// parameters, then its floating-point buffers (batch norm's running averages).
  std::int64_t state_size() const { return state_size_; }
  /// The dropout layers in forward order (empty if none): what BatchedPass::dropout_masks masks.
  std::vector<BatchedLayer> dropout_layers() const;

  /// Sets clients [0, g) to the flat states `states` (no autograd record).
  /// @param states  [g, P] float tensor on any device, 1 <= g <= capacity().
  /// @throws ShapeError if `states` is not [g, P] with 1 <= g <= capacity().
  void load(const torch::Tensor& states);

  /// Flat states of clients [0, g): [g, P] CPU in dtype(), each row as model::flatten_state of that
  /// client's model.
  torch::Tensor states(int g) const;

  /// Gradients of clients [0, g) in the flat-state layout: [g, P] CPU in dtype(), zeros where a
  /// parameter has no gradient (as model::flatten_gradients).
  torch::Tensor gradients(int g) const;

  /// Forward pass of clients [0, g), each on its own inputs, as each client's model in eval()
  /// mode (pass.training false) or train() mode. In training mode batch norm normalises each
  /// client's channels by the mean and biased variance over its real rows and moves its running
  /// averages by `momentum` towards them (unbiased variance), as torch::nn::BatchNorm2d does.
  /// @param inputs  [g, B, ...sample shape] of dtype() on the device; client c's samples are
  /// inputs[c].
  /// @param pass    the mode; in training mode one mask per dropout layer.
  /// @return        [g, B, outputs] of dtype(), row [c, b] = client c's model on inputs[c, b].
  /// @throws ShapeError if g is 0 or above capacity(), or a training pass has no mask of the
  ///         shape [g, B, features] for a dropout layer.
  torch::Tensor forward(const torch::Tensor& inputs, const BatchedPass& pass = {});

  /// Whether the architecture is a classifier with a body and a head (Network::has_head): then
  /// features() and head() split forward() at the head, its last (linear) layer.
  bool has_head() const { return has_head_; }
  /// The body of clients [0, g) (every layer but the head), as each client's
  /// Network::features: [g, B, d] of dtype(). Arguments and errors as forward().
  /// @throws ConfigError if !has_head().
  torch::Tensor features(const torch::Tensor& inputs, const BatchedPass& pass = {});
  /// The head of clients [0, g) on their features: [g, B, d] -> [g, B, C] logits, as each
  /// client's Network::head. @throws ConfigError if !has_head().
  torch::Tensor head(const torch::Tensor& features);
  /// Positions in parameters() of the head's weight and bias (the body's are the others).
  /// @throws ConfigError if !has_head().
  std::vector<std::size_t> head_parameters() const;

  /// The stacked parameters, each [G, ...parameter shape], in flat-state order, requiring
  /// gradients.
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }

  /// Clears the gradients of every stacked parameter.
  void zero_grad();

  /// Sets each stacked parameter's grad() to the gradient of `loss` (a scalar, usually the sum of
  /// the clients' losses), replacing what was there; undefined for a parameter `loss` does not
  /// depend on. Unlike loss.backward(), no gradient is copied into its parameter's memory layout
  /// (a linear layer's weight gradient comes transposed): one pass less over every parameter.
  void set_gradients(const torch::Tensor& loss);

 private:
  /// Batch norm of clients [0, g) over x [B, g * C, H, W] (see forward).
  torch::Tensor batch_norm(const BatchedLayer& layer, const torch::Tensor& x, std::int64_t g,
                           const BatchedPass& pass);
  /// x times the pass's mask for dropout layer `index` (training), else x.
  torch::Tensor dropout(const torch::Tensor& x, std::size_t index, const BatchedPass& pass) const;
  /// Layers [0, end) of clients [0, g) on [g, B, ...] inputs (see forward).
  torch::Tensor run_layers(const torch::Tensor& inputs, const BatchedPass& pass, std::size_t end);
  /// The head layer. @throws ConfigError if !has_head().
  const BatchedLayer& head_layer() const;

  int capacity_;
  std::int64_t state_size_ = 0;
  std::vector<torch::Tensor> parameters_;  // [G, ...] each, leaves requiring grad
  std::vector<torch::Tensor> buffers_;     // [G, ...] each: running averages, in flat-state order
  std::vector<BatchedLayer> layers_;
  bool has_head_ = false;
};

}  // namespace cflrun::model
