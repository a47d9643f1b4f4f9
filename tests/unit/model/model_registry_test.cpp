// The model registry's entries against the models they build: every declared property (head,
// feature size, reconstruction, client-batched form, paper shape) is what the built model does.
#include <cflrun/model/model_registry.hpp>

#include <set>

#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cflrun/core/error.hpp>
#include <cflrun/model/client_batched.hpp>
#include <cflrun/model/flat_state.hpp>

#include "kernel_setting.hpp"

namespace cflrun::model {
namespace {

torch::Tensor samples(std::int64_t n, const NetworkShape& shape) {
  std::vector<std::int64_t> sizes{n};
  sizes.insert(sizes.end(), shape.sample_shape.begin(), shape.sample_shape.end());
  return torch::rand(sizes);
}

TEST(ModelRegistry, TheEnumeratorsNameTheirEntries) {
  const std::vector<std::pair<Architecture, std::string>> named{
      {Architecture::kCnn, "cnn"},
      {Architecture::kCifarCnn, "cifar_cnn"},
      {Architecture::kMlp, "mlp"},
      {Architecture::kAutoencoder, "autoencoder"},
      {Architecture::kConvAutoencoder, "conv_autoencoder"},
      {Architecture::kLinear, "linear"},
      {Architecture::kFedAvgCnn, "fedavg_cnn"}};
  ASSERT_GE(registered_models().size(), named.size());
  for (const auto& [architecture, name] : named) {
    EXPECT_EQ(model_entry(architecture).name, name);
    EXPECT_EQ(architecture_name(architecture), name);
  }
}

TEST(ModelRegistry, EachEntryNumberedByPositionWithAUniqueName) {
  const auto& models = registered_models();
  std::set<std::string> names;
  for (std::size_t i = 0; i < models.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(models[i].architecture), i) << models[i].name;
    EXPECT_TRUE(names.insert(models[i].name).second) << models[i].name << " twice";
    EXPECT_EQ(&model_entry(models[i].name), &models[i]);
    EXPECT_EQ(&model_entry(models[i].architecture), &models[i]);
    EXPECT_EQ(parse_architecture(models[i].name), models[i].architecture);
    EXPECT_FALSE(models[i].description.empty() || models[i].source.empty() ||
                 models[i].paper_datasets.empty())
        << models[i].name;
  }
}

TEST(ModelRegistry, EachEntryDescribesTheModelItBuilds) {
  torch::manual_seed(0);
  torch::NoGradGuard no_grad;
  for (const auto& entry : registered_models()) {
    SCOPED_TRACE(entry.name);
    const auto network = entry.build(entry.paper_shape);
    network->eval();
    const auto inputs = samples(2, entry.paper_shape);
    const auto outputs = network->forward(inputs);
    EXPECT_EQ(network->has_head(), entry.has_head());
    if (entry.has_head()) {
      EXPECT_EQ(network->features(inputs).sizes(), (torch::IntArrayRef{2, entry.feature_size}));
      EXPECT_EQ(outputs.size(1), entry.paper_shape.num_classes);
    }
    if (entry.reconstructs) {
      EXPECT_EQ(outputs.size(1), entry.paper_shape.sample_size());
    }
    EXPECT_EQ(entry.forms.client_batched, ClientBatchedNetwork::supports(*network));
    EXPECT_TRUE(entry.forms.libtorch);
    EXPECT_EQ(paper_state_size(entry), flat_state_size(*network));
  }
}

/// The flat parameters after 5 SGD steps (lr 0.05) of a freshly seeded `entry` on random batches,
/// with cflrun's CPU kernels on or off.
torch::Tensor trained(const ModelEntry& entry, bool kernels) {
  KernelSetting setting(kernels);
  torch::manual_seed(6);
  auto network = entry.build(entry.paper_shape);
  torch::optim::SGD sgd(network->parameters(), torch::optim::SGDOptions(0.05));
  for (int step = 0; step < 5; ++step) {
    const auto inputs = samples(32, entry.paper_shape);
    const auto labels = torch::randint(entry.paper_shape.num_classes, {32}, torch::kLong);
    sgd.zero_grad();
    torch::nn::functional::cross_entropy(network->forward(inputs), labels).backward();
    sgd.step();
  }
  return flatten_state(*network);
}

TEST(ModelRegistry, CpuKernelFormsTrainAlikeWithAndWithoutTheKernels) {
  int checked = 0;
  for (const auto& entry : registered_models()) {
    if (entry.forms.cpu_kernels) {
      SCOPED_TRACE(entry.name);
      // the fused convolution sums in another order than LibTorch's: equal to float rounding,
      // which 5 SGD steps keep far below the steps themselves (Adam, which divides by the
      // gradient's size, would magnify rounding where a gradient is near zero)
      const auto with = trained(entry, true);
      const auto without = trained(entry, false);
      EXPECT_LT((with - without).abs().max().item<double>(), 1e-4);
      EXPECT_TRUE(torch::equal(with, trained(entry, true)));  // and repeatable bit for bit
      ++checked;
    }
  }
  EXPECT_GE(checked, 1);
}

TEST(ModelRegistry, UnknownNameListsEveryModel) {
  try {
    model_entry("resnet18");
    FAIL() << "no error";
  } catch (const ConfigError& e) {
    // the registry's names in order (a model added later comes after fedavg_cnn)
    const std::string message = e.what();
    EXPECT_EQ(message.rfind("--model must be one of cnn, cifar_cnn, mlp, autoencoder, "
                            "conv_autoencoder, linear, fedavg_cnn",
                            0),
              0U)
        << message;
    EXPECT_TRUE(message.ends_with(", but got 'resnet18'")) << message;
  }
}

TEST(ModelRegistry, NamesOfAKindForErrors) {
  // the built-in models of each kind, in registry order (a model added later may join a list)
  EXPECT_EQ(head_model_names().rfind("cnn, cifar_cnn, mlp", 0), 0U) << head_model_names();
  EXPECT_NE(head_model_names().find("fedavg_cnn"), std::string::npos);
  EXPECT_EQ(head_model_names().find("autoencoder"), std::string::npos);
  EXPECT_EQ(reconstruction_model_names().rfind("autoencoder", 0), 0U);
  EXPECT_NE(reconstruction_model_names().find("conv_autoencoder"), std::string::npos);
  EXPECT_EQ(model_names_where([](const ModelEntry& entry) { return entry.name == "linear"; }),
            "linear");
  EXPECT_EQ(model_names_where([](const ModelEntry&) { return false; }), "");
}

}  // namespace
}  // namespace cflrun::model
