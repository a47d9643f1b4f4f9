// `cflrun models`: one table row per registered model, with the counts the model builds to.
#include <cflrun/cli/models_command.hpp>

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include <cflrun/model/model_registry.hpp>

namespace cflrun::cli {
namespace {

struct Printed {
  int code = 0;
  std::string out;
  std::string err;
};

Printed run(std::vector<const char*> argv) {
  argv.insert(argv.begin(), "models");
  std::ostringstream out;
  std::ostringstream err;
  const int code = run_models_command(static_cast<int>(argv.size()), argv.data(), out, err);
  return {code, out.str(), err.str()};
}

TEST(ModelsCommand, OneRowPerModelWithItsParameters) {
  const auto printed = run({});
  ASSERT_EQ(printed.code, 0) << printed.err;
  std::istringstream lines(printed.out);
  std::vector<std::string> rows;
  for (std::string line; std::getline(lines, line);) {
    rows.push_back(line);
  }
  ASSERT_EQ(rows.size(), 2 + model::registered_models().size());
  EXPECT_EQ(rows[2].rfind("| `cnn` | conv 6 -> conv 16", 0), 0U) << rows[2];
  EXPECT_NE(rows[2].find("| 5 142 | 1x28x28, 10 classes | mnist, fmnist | 256 | libtorch, "
                         "client-batched, cpu-kernels |"),
            std::string::npos)
      << rows[2];
  EXPECT_NE(rows.back().find("`fedavg_cnn`"), std::string::npos);
  EXPECT_NE(rows.back().find("| 582 026 |"), std::string::npos) << rows.back();
  EXPECT_NE(printed.out.find("| `linear` | y = <theta, x>, no bias | 20 | 20 | linreg | - |"),
            std::string::npos)
      << printed.out;
}

TEST(ModelsCommand, HelpAndUnknownArguments) {
  const auto help = run({"--help"});
  EXPECT_EQ(help.code, 0);
  EXPECT_NE(help.out.find("usage: cflrun models"), std::string::npos);
  const auto unknown = run({"--markdown"});
  EXPECT_EQ(unknown.code, 2);
  EXPECT_TRUE(unknown.out.empty());
  EXPECT_NE(unknown.err.find("error: unknown argument '--markdown'"), std::string::npos);
}

}  // namespace
}  // namespace cflrun::cli
