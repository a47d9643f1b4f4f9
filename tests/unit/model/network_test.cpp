#include <cflrun/model/network.hpp>

#include <gtest/gtest.h>
#include <torch/types.h>
#include <torch/utils.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::model {
namespace {

std::int64_t parameter_count(const Network& network) {
  std::int64_t count = 0;
  for (const auto& parameter : network.parameters()) {
    count += parameter.numel();
  }
  return count;
}

struct Case {
  Architecture architecture;
  NetworkShape shape;
  std::int64_t parameters;  // counted by hand from the layer sizes
  std::int64_t outputs;
};

// cnn: 6*25+6 + 16*6*25+16 + 256*10+10 = 5 142. cifar_cnn: convs 1 792 + 73 856 + 295 168 +
// 1 180 160, batch norms 2*(64+128+256+512) = 1 920, FC 2 098 176 + 524 800 + 5 130 = 4 181 002.
// mlp: 784*200+200 + 200*10+10 = 159 010. autoencoder: 615 440 + 307 720 + 77 028 + 77 224 +
// 308 112 + 615 440 = 2 000 964. conv_autoencoder: 896 + 18 496 + 73 856 + 262 272 + 264 192 +
// 73 792 + 18 464 + 867 = 712 835. linear: 20. fedavg_cnn (PFLlib's FedAvgCNN): 1*32*25+32 +
// 32*64*25+64 + 1024*512+512 + 512*10+10 = 832 + 51 264 + 524 800 + 5 130 = 582 026 on MNIST;
// 3*32*25+32 + 51 264 + 1600*512+512 + 5 130 = 2 432 + 51 264 + 819 712 + 5 130 = 878 538 on
// CIFAR-10.
const Case kCases[] = {
    {Architecture::kCnn, {{1, 28, 28}, 10}, 5142, 10},
    {Architecture::kCifarCnn, {{3, 32, 32}, 10}, 4181002, 10},
    {Architecture::kMlp, {{1, 28, 28}, 10}, 159010, 10},
    {Architecture::kAutoencoder, {{1, 28, 28}, 10}, 2000964, 784},
    {Architecture::kConvAutoencoder, {{3, 32, 32}, 10}, 712835, 3072},
    {Architecture::kLinear, {{20}, 0}, 20, 1},
    {Architecture::kFedAvgCnn, {{1, 28, 28}, 10}, 582026, 10},
    {Architecture::kFedAvgCnn, {{3, 32, 32}, 10}, 878538, 10},
};

torch::Tensor batch_for(const NetworkShape& shape, std::int64_t n) {
  std::vector<std::int64_t> size{n};
  size.insert(size.end(), shape.sample_shape.begin(), shape.sample_shape.end());
  return torch::rand(size);
}

TEST(Network, EveryArchitectureHasItsParameterCountAndOutputShape) {
  torch::manual_seed(0);
  for (const auto& c : kCases) {
    const auto network = make_network(c.architecture, c.shape);
    EXPECT_EQ(parameter_count(*network), c.parameters) << architecture_name(c.architecture);
    network->eval();
    const auto out = network->forward(batch_for(c.shape, 3));
    EXPECT_EQ(out.sizes(), (std::vector<std::int64_t>{3, c.outputs}))
        << architecture_name(c.architecture);
    EXPECT_EQ(parse_architecture(architecture_name(c.architecture)), c.architecture);
  }
}

TEST(Network, FlatStateHoldsBatchNormStatisticsAndRoundTrips) {
  torch::manual_seed(1);
  const NetworkShape shape{{3, 32, 32}, 10};
  const auto source = make_network(Architecture::kCifarCnn, shape);
  EXPECT_EQ(flat_state_size(*source), 4181002 + 1920);
  const auto target = make_network(Architecture::kCifarCnn, shape);
  source->train();
  source->forward(batch_for(shape, 4));  // moves the running statistics
  load_flat_state(*target, flatten_state(*source));
  source->eval();
  target->eval();
  const auto inputs = batch_for(shape, 2);
  EXPECT_TRUE(torch::equal(source->forward(inputs), target->forward(inputs)));
}

TEST(Network, DropoutActsInTrainModeOnly) {
  torch::manual_seed(2);
  const NetworkShape shape{{3, 32, 32}, 10};
  const auto network = make_network(Architecture::kCifarCnn, shape);
  const auto inputs = batch_for(shape, 4);
  network->eval();
  EXPECT_TRUE(torch::equal(network->forward(inputs), network->forward(inputs)));
  network->train();
  EXPECT_FALSE(torch::equal(network->forward(inputs), network->forward(inputs)));
}

TEST(Network, AutoencoderOutputsLieInTheirActivationsRange) {
  torch::manual_seed(3);
  const auto sigmoid = make_network(Architecture::kAutoencoder, {{1, 28, 28}, 10})
                           ->forward(torch::rand({5, 1, 28, 28}));
  EXPECT_GE(sigmoid.min().item<float>(), 0.0F);
  EXPECT_LE(sigmoid.max().item<float>(), 1.0F);
  const auto tanh = make_network(Architecture::kConvAutoencoder, {{3, 32, 32}, 10})
                        ->forward(torch::rand({5, 3, 32, 32}));
  EXPECT_GE(tanh.min().item<float>(), -1.0F);
  EXPECT_LE(tanh.max().item<float>(), 1.0F);
  EXPECT_LT(tanh.min().item<float>(), 0.0F);  // tanh, not a sigmoid
}

TEST(Network, ShapeThatDoesNotFitTheArchitectureNamesTheModel) {
  try {
    make_network(Architecture::kCnn, {{3, 32, 32}, 10});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--model cnn takes samples of shape {1, 28, 28}"),
              std::string::npos)
        << e.what();
  }
  EXPECT_THROW(make_network(Architecture::kCifarCnn, {{1, 28, 28}, 10}), ConfigError);
  EXPECT_THROW(make_network(Architecture::kFedAvgCnn, {{1, 32, 32}, 10}), ConfigError);
  EXPECT_THROW(make_network(Architecture::kFedAvgCnn, {{3, 28, 28}, 10}), ConfigError);
  EXPECT_THROW(make_network(Architecture::kFedAvgCnn, {{1, 28, 28}, 0}), ConfigError);
  EXPECT_THROW(make_network(Architecture::kMlp, {{20}, 0}), ConfigError);
  EXPECT_THROW(make_network(Architecture::kLinear, {{1, 28, 28}, 10}), ConfigError);
  EXPECT_THROW(parse_architecture("resnet"), ConfigError);
}

/// PFLlib's FedAvgCNN registers conv1, conv2, fc1, fc in this order (models.py): FedALA's "last p
/// tensors" and the body/head zip copies depend on it.
TEST(Network, FedAvgCnnKeepsPflibsParameterOrder) {
  const auto network = make_network(Architecture::kFedAvgCnn, {{1, 28, 28}, 10});
  std::vector<std::vector<std::int64_t>> shapes;
  for (const auto& parameter : network->parameters()) {
    shapes.push_back(parameter.sizes().vec());
  }
  const std::vector<std::vector<std::int64_t>> expected{{32, 1, 5, 5}, {32},  {64, 32, 5, 5}, {64},
                                                        {512, 1024},   {512}, {10, 512},      {10}};
  EXPECT_EQ(shapes, expected);
}

}  // namespace
}  // namespace cflrun::model

namespace cflrun::model {
namespace {

TEST(BodyHeadSplit, ForwardIsTheHeadOfTheFeaturesForEveryClassifier) {
  const std::vector<std::pair<Architecture, NetworkShape>> classifiers{
      {Architecture::kCnn, {{1, 28, 28}, 10}},
      {Architecture::kCifarCnn, {{3, 32, 32}, 10}},
      {Architecture::kMlp, {{1, 28, 28}, 10}},
      {Architecture::kFedAvgCnn, {{1, 28, 28}, 10}},
      {Architecture::kFedAvgCnn, {{3, 32, 32}, 10}}};
  const std::vector<std::int64_t> feature_sizes{256, 512, 200, 512, 512};
  for (std::size_t a = 0; a < classifiers.size(); ++a) {
    torch::manual_seed(1);
    auto network = make_network(classifiers[a].first, classifiers[a].second);
    network->eval();  // no dropout: both paths see the same activations
    std::vector<std::int64_t> shape{4};
    shape.insert(shape.end(), classifiers[a].second.sample_shape.begin(),
                 classifiers[a].second.sample_shape.end());
    const auto inputs = torch::rand(shape);
    const auto features = network->features(inputs);
    EXPECT_EQ(features.sizes(), (std::vector<std::int64_t>{4, feature_sizes[a]}))
        << architecture_name(classifiers[a].first);
    EXPECT_EQ(feature_size(classifiers[a].first), feature_sizes[a]);
    EXPECT_TRUE(torch::equal(network->head(features), network->forward(inputs)))
        << architecture_name(classifiers[a].first);
    EXPECT_TRUE(has_head(classifiers[a].first));
    // The head is the last Linear: C x d weights and C biases at the end of the parameters.
    const auto range = head_range(*network);
    EXPECT_EQ(range.size, 10 * feature_sizes[a] + 10) << architecture_name(classifiers[a].first);
  }
}

TEST(BodyHeadSplit, ModelsWithoutAHeadSayWhichModelsHaveOne) {
  auto linear = make_network(Architecture::kLinear, NetworkShape{{5}, 0});
  EXPECT_FALSE(linear->has_head());
  EXPECT_FALSE(has_head(Architecture::kAutoencoder));
  EXPECT_THROW(linear->features(torch::zeros({1, 5})), ConfigError);
  EXPECT_THROW(head_range(*linear), ConfigError);
}

}  // namespace
}  // namespace cflrun::model
