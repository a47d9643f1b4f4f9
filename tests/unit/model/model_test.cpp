#include <cflrun/core/error.hpp>
#include <cflrun/model/conv_net.hpp>
#include <cflrun/model/inference_forward.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/network.hpp>

#include <gtest/gtest.h>
#include <torch/nn/modules/dropout.h>
#include <torch/nn/modules/linear.h>
#include <torch/types.h>
#include <torch/utils.h>

#include "kernel_setting.hpp"

namespace cflrun::model {
namespace {

TEST(ConvNet, HasTheOfficialParameterCountAndOutputShape) {
  ConvNet net(10);
  // conv1 6*1*5*5+6 = 156, conv2 16*6*5*5+16 = 2416, fc 256*10+10 = 2570 (clove-official-setup.md
  // Sec. 9).
  EXPECT_EQ(flat_state_size(*net), 5142);
  const auto logits = net->forward(torch::rand({3, 1, 28, 28}));
  EXPECT_EQ(logits.sizes(), (std::vector<std::int64_t>{3, 10}));
}

TEST(FlatState, RoundTripsBitExactlyIntoAnotherModel) {
  torch::manual_seed(1);
  ConvNet source(10);
  torch::manual_seed(2);
  ConvNet target(10);
  const auto flat = flatten_state(*source);
  ASSERT_EQ(flat.dim(), 1);
  ASSERT_EQ(flat.scalar_type(), torch::kFloat32);
  load_flat_state(*target, flat);
  EXPECT_TRUE(torch::equal(flatten_state(*target), flat));
  const auto x = torch::rand({4, 1, 28, 28});
  EXPECT_TRUE(torch::equal(source->forward(x), target->forward(x)));
}

TEST(FlatState, KeepsLogicalOrderForChannelsLastParameters) {
  torch::manual_seed(3);
  ConvNet net(10);
  const auto before = flatten_state(*net);
  for (auto& p : net->parameters()) {
    if (p.dim() == 4) {
      p.set_data(p.contiguous(torch::MemoryFormat::ChannelsLast));
    }
  }
  EXPECT_TRUE(torch::equal(flatten_state(*net), before));
  load_flat_state(*net, before * 2);
  EXPECT_TRUE(torch::equal(flatten_state(*net), before * 2));
}

TEST(FlatState, RejectsABufferOfTheWrongSize) {
  ConvNet net(10);
  EXPECT_THROW(load_flat_state(*net, torch::zeros({5141})), ShapeError);
  EXPECT_THROW(load_flat_state(*net, torch::zeros({2, 2571})), ShapeError);
}

}  // namespace
}  // namespace cflrun::model

namespace cflrun::model {
namespace {

/// The network's eager forward in eval mode, without gradients.
torch::Tensor eager_eval(Network& network, const torch::Tensor& inputs) {
  torch::NoGradGuard no_grad;
  network.eval();
  return network.forward(inputs);
}

TEST(InferenceForward, FrozenCnnGivesTheEagerOutputsAndSeesNoLaterChange) {
  KernelSetting off(false);  // with cflrun's CPU kernels the cnn scores eagerly (next test)
  torch::manual_seed(10);
  ConvNet network(10);
  torch::manual_seed(99);
  const auto images = torch::rand({300, 1, 28, 28});
  InferenceForward forward(*network);
  EXPECT_TRUE(forward.frozen());
  const auto expected = eager_eval(*network, images);
  const auto frozen = forward(images);
  ASSERT_EQ(frozen.sizes(), expected.sizes());
  EXPECT_TRUE(torch::allclose(frozen, expected, /*rtol=*/1e-4, /*atol=*/1e-5));
  EXPECT_TRUE(torch::equal(frozen.argmax(1), expected.argmax(1)));
  {
    torch::NoGradGuard no_grad;  // a built forward keeps the parameters it was built from
    network->named_parameters()["fc.weight"].add_(1.0);
  }
  EXPECT_TRUE(torch::equal(forward(images), frozen));
}

TEST(InferenceForward, CnnWithCpuKernelsScoresEagerly) {
  KernelSetting on(true);
  torch::manual_seed(10);
  ConvNet network(10);
  const auto images = torch::rand({300, 1, 28, 28});
  InferenceForward forward(*network);
  EXPECT_FALSE(forward.frozen());
  EXPECT_TRUE(torch::equal(forward(images), eager_eval(*network, images)));
}

/// Every architecture's inference forward gives its eager eval-mode outputs (BatchNorm on running
/// statistics moved away from their initial values, Dropout off); cifar_cnn, fedavg_cnn and
/// (without cflrun's CPU kernels) cnn run frozen.
TEST(InferenceForward, EveryArchitectureGivesTheEagerEvalOutputs) {
  for (const auto architecture : all_architectures()) {
    SCOPED_TRACE(architecture_name(architecture));
    const auto shape = paper_shape(architecture);
    torch::manual_seed(3);
    const auto network = make_network(architecture, shape);
    std::vector<std::int64_t> batch{7};
    batch.insert(batch.end(), shape.sample_shape.begin(), shape.sample_shape.end());
    {
      torch::NoGradGuard no_grad;  // train-mode passes move the BatchNorm running statistics
      network->train();
      network->forward(torch::rand(batch) * 3.0 + 1.0);
    }
    const auto inputs = torch::rand(batch);
    InferenceForward forward(*network);
    const bool has_kernels =
        architecture == Architecture::kCnn || architecture == Architecture::kFedAvgCnn;
    EXPECT_EQ(forward.frozen(), (has_kernels && !fused_kernels_enabled()) ||
                                    architecture == Architecture::kCifarCnn);
    const auto expected = eager_eval(*network, inputs);
    const auto frozen = forward(inputs);
    ASSERT_EQ(frozen.sizes(), expected.sizes());
    EXPECT_TRUE(torch::allclose(frozen, expected, /*rtol=*/1e-4, /*atol=*/1e-5))
        << (frozen - expected).abs().max().item<float>();
  }
}

/// A network without a script runs its eager forward in eval mode.
class ScriptlessNetwork : public Network {
 public:
  ScriptlessNetwork()
      : linear_(register_module("linear", torch::nn::Linear(4, 64))),
        dropout_(register_module("dropout", torch::nn::Dropout(0.5))) {}
  torch::Tensor forward(const torch::Tensor& inputs) override {
    return dropout_->forward(linear_->forward(inputs));
  }

 private:
  torch::nn::Linear linear_;
  torch::nn::Dropout dropout_;
};

TEST(InferenceForward, NetworksWithoutAScriptRunEagerInEvalMode) {
  torch::manual_seed(3);
  ScriptlessNetwork network;
  network.train();
  InferenceForward forward(network);
  EXPECT_FALSE(forward.frozen());
  const auto inputs = torch::rand({5, 4});
  const auto outputs = forward(inputs);
  torch::NoGradGuard no_grad;
  network.eval();  // dropout off: in train mode about half the outputs would be zero
  EXPECT_TRUE(torch::equal(outputs, network.forward(inputs)));
}

}  // namespace
}  // namespace cflrun::model

namespace cflrun::model {
namespace {

TEST(FlatState, GradientsUseTheStateLayoutWithZerosWhereNoGradient) {
  torch::manual_seed(5);
  ConvNet net(10);
  EXPECT_TRUE(torch::equal(flatten_gradients(*net), torch::zeros({5142})));
  const auto loss = net->forward(torch::rand({2, 1, 28, 28})).sum();
  loss.backward();
  const auto flat = flatten_gradients(*net);
  ASSERT_EQ(flat.numel(), 5142);
  // The last 10 entries are the fc bias gradient: d(sum of logits)/d(bias) = batch size = 2.
  EXPECT_TRUE(torch::equal(flat.narrow(0, 5132, 10), torch::full({10}, 2.0F)));
}

}  // namespace
}  // namespace cflrun::model
