// model::Dropout: masks from a generator set per client (so that clients on several threads draw
// their own), equal to torch::dropout's after torch::manual_seed with the same seed.
#include <gtest/gtest.h>
#include <ATen/CPUGeneratorImpl.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/dropout.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::model {
namespace {

constexpr std::uint64_t kSeed = 1234;

torch::Tensor features() {
  return torch::randn({8, 1024}, at::detail::createCPUGenerator(7), torch::kFloat32);
}

// Two layers drawing in turn from one seeded generator give what torch::dropout gives drawing
// twice from the default generator after torch::manual_seed: the masks the cifar_cnn drew before
// it had model::Dropout, bit for bit.
TEST(Dropout, EqualsTorchDropoutAfterManualSeed) {
  const auto x = features();
  torch::manual_seed(kSeed);
  const auto first = torch::dropout(x, 0.5, true);
  const auto second = torch::dropout(x, 0.5, true);
  torch::nn::Sequential layers(Dropout(0.5), Dropout(0.5));
  set_dropout_generator(*layers, dropout_generator(kSeed, torch::kCPU));
  const auto own_first = layers[0]->as<DropoutImpl>()->forward(x);
  const auto own_second = layers[1]->as<DropoutImpl>()->forward(x);
  EXPECT_TRUE(torch::equal(own_first, first));
  EXPECT_TRUE(torch::equal(own_second, second));
  EXPECT_FALSE(torch::equal(own_first, own_second));
  // Half the units zeroed, the others doubled.
  const double zeroed = (own_first == 0).to(torch::kFloat64).mean().item<double>();
  EXPECT_NEAR(zeroed, 0.5, 0.03);
  EXPECT_TRUE(torch::allclose(own_first.masked_select(own_first != 0),
                              2 * x.masked_select(own_first != 0)));
}

// The default generator's state does not reach a layer with its own generator.
TEST(Dropout, IgnoresTheDefaultGeneratorOnceSet) {
  const auto x = features();
  Dropout layer(0.3);
  layer->set_generator(at::detail::createCPUGenerator(kSeed));
  torch::manual_seed(1);
  const auto a = layer(x);
  layer->set_generator(at::detail::createCPUGenerator(kSeed));
  torch::manual_seed(2);
  const auto b = layer(x);
  EXPECT_TRUE(torch::equal(a, b));
  layer->set_generator(at::detail::createCPUGenerator(kSeed + 1));
  EXPECT_FALSE(torch::equal(layer(x), a));
}

TEST(Dropout, EvalModeIsTheIdentity) {
  const auto x = features();
  Dropout layer(0.5);
  layer->eval();
  EXPECT_TRUE(torch::equal(layer(x), x));
}

TEST(Dropout, RefusesAProbabilityOutsideZeroToOne) {
  EXPECT_THROW(Dropout(1.0), ConfigError);
  EXPECT_THROW(Dropout(-0.1), ConfigError);
}

// The CIFAR CNN's two dropout layers are model::Dropout: the same generator seed gives the same
// training-mode output, another seed another.
TEST(Dropout, CifarCnnDrawsFromTheGeneratorSetOnIt) {
  auto network = make_network(Architecture::kCifarCnn, NetworkShape{{3, 32, 32}, 10});
  network->train();
  const auto x = torch::randn({4, 3, 32, 32}, at::detail::createCPUGenerator(3), torch::kFloat32);
  const auto output = [&](std::uint64_t seed) {
    set_dropout_generator(*network, dropout_generator(seed, torch::kCPU));
    return network->forward(x);
  };
  const auto a = output(kSeed);
  EXPECT_TRUE(torch::equal(output(kSeed), a));
  EXPECT_FALSE(torch::equal(output(kSeed + 1), a));
}

}  // namespace
}  // namespace cflrun::model
