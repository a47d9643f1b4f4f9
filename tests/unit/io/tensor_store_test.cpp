#include <cflrun/io/tensor_store.hpp>
#include <cflrun/core/error.hpp>

#include <filesystem>

#include <gtest/gtest.h>
#include <torch/types.h>

namespace cflrun::io {
namespace {

TEST(TensorStore, GroupsOfNamedTensorsRoundTripInDtypeShapeAndValue) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cflrun_tensor_store_" + std::to_string(::getpid()) + ".h5");
  const std::map<std::string, NamedTensors> written{
      {"models", {{"states", torch::randn({3, 7})}}},
      {"pacfl",
       {{"cluster", torch::tensor({0, 1, -1}, torch::kInt64)},
        {"proximity", torch::rand({3, 3}, torch::kFloat64)}}},
      {"clients",
       {{"trained", torch::tensor({true, false, true})},
        {"counts", torch::tensor({4, 5}, torch::kInt32)},
        {"none_yet", torch::zeros({0, 7})}}}};
  write_tensor_groups(path, written);
  const auto read = read_tensor_groups(path);
  ASSERT_EQ(read.size(), written.size());
  for (const auto& [group, tensors] : written) {
    ASSERT_EQ(read.at(group).size(), tensors.size()) << group;
    for (const auto& [name, tensor] : tensors) {
      const auto& back = read.at(group).at(name);
      EXPECT_EQ(back.scalar_type(), tensor.scalar_type()) << group << "/" << name;
      EXPECT_TRUE(torch::equal(back, tensor)) << group << "/" << name;
    }
  }
  std::filesystem::remove(path);
  EXPECT_THROW(read_tensor_groups(path), DataError);
  EXPECT_THROW(write_tensor_groups(path, {{"g", {{"half", torch::zeros({2}, torch::kHalf)}}}}),
               ShapeError);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace cflrun::io
