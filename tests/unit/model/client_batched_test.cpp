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
      EXPECT_LT((outputs[k] - expected).abs().max().item<double>(), 1e-5)
          << architecture_name(architecture) << " " << k;
    }
  }
}

/// Three CIFAR CNN clients (seeds 0-2) and a client-batched network holding them.
struct CifarClients {
  std::vector<std::shared_ptr<Network>> models;
  ClientBatchedNetwork batched;
};

CifarClients cifar_clients() {
  const auto shape = paper_shape(Architecture::kCifarCnn);
  std::vector<std::shared_ptr<Network>> models;
  std::vector<torch::Tensor> states;
  for (int k = 0; k < 3; ++k) {
    torch::manual_seed(k);
    models.push_back(make_network(Architecture::kCifarCnn, shape));
    states.push_back(flatten_state(*models.back()));
  }
  CifarClients clients{models, ClientBatchedNetwork(*models[0], 3, torch::kCPU)};
  clients.batched.load(torch::stack(states));
  return clients;
}

TEST(ClientBatchedNetwork, CifarCnnEvaluationPassEqualsEachClientsOwnModel) {
  auto [models, batched] = cifar_clients();
  torch::manual_seed(5);
  const auto inputs = torch::rand({3, 4, 3, 32, 32});
  const auto outputs = batched.forward(inputs);  // evaluation: running averages, no dropout
  for (int k = 0; k < 3; ++k) {
    models[static_cast<std::size_t>(k)]->eval();
    const auto expected = models[static_cast<std::size_t>(k)]->forward(inputs[k]);
    EXPECT_LT((outputs[k] - expected).abs().max().item<double>(), 1e-5) << k;
  }
}

// Training mode: each client's batch statistics over its real rows only (client 2 has 4 of 6, the
// rest padding), its running averages updated, its dropout masks those its own model draws.
TEST(ClientBatchedNetwork, CifarCnnTrainingPassEqualsEachClientsOwnModel) {
  auto [models, batched] = cifar_clients();
  const std::vector<std::int64_t> real{6, 6, 4};
  torch::manual_seed(5);
  const auto inputs = torch::rand({3, 6, 3, 32, 32});
  BatchedPass pass;
  pass.training = true;
  pass.valid = torch::ones({3, 6});
  pass.valid[2].narrow(0, 4, 2).zero_();
  torch::manual_seed(9);
  for (const auto& layer : batched.dropout_layers()) {
    pass.dropout_masks.push_back(torch::zeros({3, 6, layer.features}));
  }
  for (std::size_t k = 0; k < 3;
       ++k) {  // client after client, layer after layer, as their forward passes
    for (std::size_t d = 0; d < pass.dropout_masks.size(); ++d) {
      const auto p = batched.dropout_layers()[d].probability;
      pass.dropout_masks[d][static_cast<std::int64_t>(k)]
          .narrow(0, 0, real[k])
          .copy_(torch::dropout(torch::ones({real[k], pass.dropout_masks[d].size(2)}), p, true));
    }
  }
  const auto outputs = batched.forward(inputs, pass);
  torch::manual_seed(9);
  for (std::size_t k = 0; k < 3; ++k) {
    const auto i = static_cast<std::int64_t>(k);
    models[k]->train();
    const auto expected = models[k]->forward(inputs[i].narrow(0, 0, real[k]));
    EXPECT_LT((outputs[i].narrow(0, 0, real[k]) - expected).abs().max().item<double>(), 1e-4) << k;
    EXPECT_LT((batched.states(3)[i] - flatten_state(*models[k])).abs().max().item<double>(), 1e-5)
        << k;
  }
  EXPECT_THROW(batched.forward(inputs, BatchedPass{true, {}, {}}), ShapeError);  // masks missing
}

TEST(ClientBatchedNetwork, EveryArchitectureHasAClientBatchedForm) {
  for (const auto architecture :
       {Architecture::kCnn, Architecture::kMlp, Architecture::kLinear, Architecture::kAutoencoder,
        Architecture::kConvAutoencoder, Architecture::kCifarCnn, Architecture::kFedAvgCnn}) {
    EXPECT_TRUE(
        ClientBatchedNetwork::supports(*make_network(architecture, paper_shape(architecture))))
        << architecture_name(architecture);
  }
}

TEST(ClientBatchedNetwork, LoadRejectsMoreClientsThanItHolds) {
  const auto mlp = make_network(Architecture::kMlp, {{4}, 3});
  ClientBatchedNetwork batched(*mlp, 2, torch::kCPU);
  EXPECT_THROW(batched.load(torch::zeros({3, batched.state_size()})), ShapeError);
  EXPECT_THROW(batched.load(torch::zeros({2, batched.state_size() + 1})), ShapeError);
}

}  // namespace
}  // namespace cflrun::model
