#pragma once
// Private to src/model: the layer list of a client-batched forward pass, read off a model.

#include <vector>

#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::model {

/// The layers of `reference` in forward order, each naming its weight's index in
/// reference.parameters() (and a batch norm its running mean's index among the float buffers):
/// the small CNN's fixed sequence, or the modules of a model built as one Sequential named
/// "layers" (mlp, linear, autoencoder, conv_autoencoder, cifar_cnn, fedavg_cnn).
/// @throws ConfigError naming the first layer without a client-batched form.
std::vector<BatchedLayer> batched_layers(const Network& reference);

}  // namespace cflrun::model
