// Client-batched models (issue 23): one forward pass of G stacked clients equals each client's own.
#include <cflrun/model/client_batched.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::model {
namespace {

TEST(ClientBatchedNetwork, ForwardEqualsEachClientsOwnModel) {
  for (const auto architecture : {Architecture::kCnn, Architecture::kMlp, Architecture::kLinear,
                                  Architecture::kAutoencoder, Architecture::kConvAutoencoder}) {
    auto shape = paper_shape(architecture);
    if (architecture == Architecture::kAutoencoder) {
      shape = {{1, 8, 8}, 0};
    }
    std::vector<std::shared_ptr<Network>> clients;
    std::vector<torch::Tensor> states;
    for (int k = 0; k < 3; ++k) {
      torch::manual_seed(k);
      clients.push_back(make_network(architecture, shape));
      states.push_back(flatten_state(*clients.back()));
    }
    ClientBatchedNetwork batched(*clients[0], 5, torch::kCPU);
    batched.load(torch::stack(states));
    EXPECT_TRUE(torch::equal(batched.states(3), torch::stack(states)));
    std::vector<std::int64_t> input_shape{3, 7};
    input_shape.insert(input_shape.end(), shape.sample_shape.begin(), shape.sample_shape.end());
    const auto inputs = torch::rand(input_shape);
    const auto outputs = batched.forward(inputs);
    for (int k = 0; k < 3; ++k) {
      const auto expected = clients[static_cast<std::size_t>(k)]->forward(inputs[k]);
      EXPECT_EQ(outputs[k].sizes(), expected.sizes()) << architecture_name(architecture);
      EXPECT_LT((outputs[k] - expected).abs().max().item<double>(), 1e-5) << architecture_name(architecture) << " " << k;
    }
  }
}

TEST(ClientBatchedNetwork, CifarCnnHasNoClientBatchedForm) {
  const auto cifar = make_network(Architecture::kCifarCnn, paper_shape(Architecture::kCifarCnn));
  EXPECT_FALSE(ClientBatchedNetwork::supports(*cifar));
  EXPECT_THROW(ClientBatchedNetwork(*cifar, 2, torch::kCPU), ConfigError);
  EXPECT_TRUE(ClientBatchedNetwork::supports(*make_network(Architecture::kCnn, paper_shape(Architecture::kCnn))));
}

TEST(ClientBatchedNetwork, LoadRejectsMoreClientsThanItHolds) {
  const auto mlp = make_network(Architecture::kMlp, {{4}, 3});
  ClientBatchedNetwork batched(*mlp, 2, torch::kCPU);
  EXPECT_THROW(batched.load(torch::zeros({3, batched.state_size()})), ShapeError);
  EXPECT_THROW(batched.load(torch::zeros({2, batched.state_size() + 1})), ShapeError);
}

}  // namespace
}  // namespace cflrun::model
