// The dataset registry (data/dataset_registry.hpp) and what each registered source says of itself.
#include <cflrun/data/dataset_registry.hpp>

#include <set>
#include <string>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::data {
namespace {

TEST(DatasetRegistry, EveryRegisteredNameResolvesToItsSourceOnce) {
  std::set<std::string> names;
  for (const auto& source : registered_datasets()) {
    EXPECT_EQ(&find_dataset(source->name()), source.get()) << source->name();
    EXPECT_EQ(find_dataset_or_null(source->name()), source.get()) << source->name();
    EXPECT_TRUE(names.insert(source->name()).second) << "registered twice: " << source->name();
  }
  EXPECT_EQ(names, (std::set<std::string>{"fmnist", "mnist", "cifar10", "linreg"}));
  EXPECT_EQ(dataset_names(), "fmnist | mnist | cifar10 | linreg");
}

TEST(DatasetRegistry, UnknownNameListsTheChoices) {
  EXPECT_THROW(find_dataset("cifar100"), ConfigError);
  try {
    find_dataset("x");
    ADD_FAILURE() << "expected a ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_STREQ(e.what(), "--dataset must be one of fmnist, mnist, cifar10, linreg, but got 'x'");
  }
  EXPECT_EQ(find_dataset_or_null("synthetic"), nullptr);
}

TEST(DatasetRegistry, ImageSourcesClassifyTenClassesFromTheirDefaultDirectories) {
  EXPECT_EQ(find_dataset("fmnist").default_data_dir(), "/usr/share/datasets/fashion-mnist");
  EXPECT_EQ(find_dataset("mnist").default_data_dir(), "datasets/mnist");
  EXPECT_EQ(find_dataset("cifar10").default_data_dir(), "datasets/cifar-10-batches-bin");
  for (const std::string name : {"fmnist", "mnist", "cifar10"}) {
    const DatasetSource& source = find_dataset(name);
    EXPECT_EQ(source.targets(), TargetKind::kClassLabels) << name;
    EXPECT_EQ(source.num_classes(), 10) << name;
    EXPECT_TRUE(source.supports_unsupervised()) << name;
    EXPECT_TRUE(source.accepts_partition("concept_shift")) << name;
    EXPECT_TRUE(source.accepts_partition("mixture_10_90")) << name;
    EXPECT_EQ(source.summary(), "") << name;
    DataRequest request;
    request.partition = "feature_skew";
    EXPECT_EQ(source.layout(request), "feature_skew") << name;
  }
}

TEST(DatasetRegistry, DefaultModelsFollowThePaper) {
  EXPECT_EQ(find_dataset("fmnist").default_model(false), "cnn");
  EXPECT_EQ(find_dataset("mnist").default_model(false), "cnn");
  EXPECT_EQ(find_dataset("cifar10").default_model(false), "cifar_cnn");
  EXPECT_EQ(find_dataset("linreg").default_model(false), "linear");
  EXPECT_EQ(find_dataset("fmnist").default_model(true), "autoencoder");
  EXPECT_EQ(find_dataset("mnist").default_model(true), "autoencoder");
  EXPECT_EQ(find_dataset("cifar10").default_model(true), "conv_autoencoder");
}

TEST(DatasetRegistry, OnlyCifar10TakesTheOfficialCodesLabelPermutations) {
  for (const auto& source : registered_datasets()) {
    EXPECT_EQ(source->official_code_permutes_labels(), source->name() == "cifar10")
        << source->name();
  }
}

TEST(DatasetRegistry, LinregIsGeneratedRegressionWithoutPartitions) {
  const DatasetSource& linreg = find_dataset("linreg");
  EXPECT_EQ(linreg.targets(), TargetKind::kRealValues);
  EXPECT_EQ(linreg.num_classes(), 0);
  EXPECT_TRUE(linreg.default_data_dir().empty());
  EXPECT_FALSE(linreg.supports_unsupervised());
  EXPECT_EQ(linreg.summary(), "synthetic mixed linear regression");
  EXPECT_TRUE(linreg.accepts_partition("label_skew_1"));
  EXPECT_TRUE(linreg.accepts_partition("mixture_random"));
  EXPECT_FALSE(linreg.accepts_partition("concept_shift"));
  EXPECT_EQ(
      linreg.partition_requirement(),
      "a mixture_* partition or none with --dataset linreg (its clusters are its optimal models)");
  DataRequest request;
  request.regression.separation = 0.5;
  EXPECT_EQ(linreg.layout(request), "(Delta 0.500000)");
}

TEST(DatasetRegistry, LinregGeneratesTheRequestedClients) {
  DataRequest request;
  request.regression.clusters = 2;
  request.regression.clients_per_cluster = 3;
  request.regression.train_samples = 4;
  request.regression.test_samples = 2;
  request.regression.dimension = 5;
  const ClientData data = find_dataset("linreg").client_data(request);
  EXPECT_EQ(data.num_clients(), 6);
  EXPECT_EQ(data.num_classes, 0);
  EXPECT_EQ(data.sample_shape, (std::vector<std::int64_t>{5}));
  EXPECT_EQ(data.samples(5, true).inputs.sizes().vec(), (std::vector<std::int64_t>{4, 5}));
}

}  // namespace
}  // namespace cflrun::data
