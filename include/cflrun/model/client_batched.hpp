#pragma once

/// @file
/// Many clients' copies of one model run as one: client-batched execution (issue 23). The paper's
/// models are small (the (F)MNIST CNN has 5 142 parameters, a local update is 5 mini-batches of
/// 100), so one client at a time leaves a GPU waiting on kernel launches. Here the parameters of G
/// clients are stacked along a leading client dimension and every layer runs all G clients in one
/// kernel: a linear layer as a batched matrix product (torch::baddbmm over [G, B, in] x
/// [G, in, out]), a convolution as one grouped convolution with groups = G over the clients'
/// channels laid side by side ([B, G * C, H, W]), ReLU, sigmoid, tanh and max-pooling as they are.
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
  enum class Kind { kFlatten, kUnflatten, kLinear, kConv, kConvTranspose, kRelu, kSigmoid, kTanh, kMaxPool };
  Kind kind = Kind::kRelu;
  std::size_t parameter = 0;                 ///< index of the layer's weight in the stacked parameters.
  bool bias = false;                         ///< whether the next stacked parameter is its bias.
  std::vector<std::int64_t> stride{1, 1};    ///< convolutions.
  std::vector<std::int64_t> padding{0, 0};   ///< convolutions.
  std::vector<std::int64_t> output_padding{0, 0};  ///< transposed convolutions.
  std::vector<std::int64_t> sizes;           ///< kUnflatten: the [C, H, W] one sample becomes.
  std::int64_t window = 2;                   ///< kMaxPool: side of the square window (stride = window).
};

/// G clients' copies of one model with stacked parameters (see the file comment).
///
/// Covers every architecture whose layers are linear, convolutions, transposed convolutions,
/// flatten/unflatten, ReLU, sigmoid, tanh and max-pooling: cnn, mlp, linear, autoencoder,
/// conv_autoencoder. cifar_cnn (batch norm, dropout) has no client-batched form yet:
/// supports() is false and its clients train one at a time.
class ClientBatchedNetwork {
 public:
  /// @param reference  a model of the architecture (its layers and flat-state layout are read; its
  ///                   values are not used).
  /// @param capacity   G >= 1, the most clients held at once.
  /// @param device     where the stacked parameters live.
  /// @throws ConfigError if !supports(reference) or capacity < 1.
  ClientBatchedNetwork(const Network& reference, int capacity, torch::Device device);

  /// Whether `reference`'s architecture has a client-batched form (see the class comment).
  static bool supports(const Network& reference);

  /// G, the most clients held at once.
  int capacity() const { return capacity_; }
  /// P, floats in one client's flat state (model::flat_state_size of the reference).
  std::int64_t state_size() const { return state_size_; }

  /// Sets clients [0, g) to the flat states `states` (no autograd record).
  /// @param states  [g, P] float tensor on any device, 1 <= g <= capacity().
  /// @throws ShapeError if `states` is not [g, P] with 1 <= g <= capacity().
  void load(const torch::Tensor& states);

  /// Flat states of clients [0, g): [g, P] float32 CPU, each row as model::flatten_state of that
  /// client's model.
  torch::Tensor states(int g) const;

  /// Gradients of clients [0, g) in the flat-state layout: [g, P] float32 CPU, zeros where a
  /// parameter has no gradient (as model::flatten_gradients).
  torch::Tensor gradients(int g) const;

  /// Forward pass of clients [0, g), each on its own inputs.
  /// @param inputs  [g, B, ...sample shape] float32 on the device; client c's samples are inputs[c].
  /// @return        [g, B, outputs] float32, row [c, b] = client c's model on inputs[c, b].
  /// @throws ShapeError if g is 0 or above capacity().
  torch::Tensor forward(const torch::Tensor& inputs) const;

  /// The stacked parameters, each [G, ...parameter shape], in flat-state order, requiring gradients.
  const std::vector<torch::Tensor>& parameters() const { return parameters_; }

  /// Clears the gradients of every stacked parameter.
  void zero_grad();

 private:
  int capacity_;
  std::int64_t state_size_ = 0;
  std::vector<torch::Tensor> parameters_;  // [G, ...] each, leaves requiring grad
  std::vector<BatchedLayer> layers_;
};

}  // namespace cflrun::model
