#include <cflrun/cli/models_command.hpp>

#include <cstdint>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>

#include <cflrun/core/printable.hpp>
#include <cflrun/model/model_registry.hpp>

namespace cflrun::cli {
namespace {

constexpr int kExitUsage = 2;
constexpr const char* kUsage =
    "usage: cflrun models\n"
    "Prints every model --model accepts as a Markdown table (docs/models.md): its layers, its\n"
    "parameters at the paper's input shape, that shape and its datasets, the head's features,\n"
    "the forms it has (libtorch; client-batched: --client-batch; cpu-kernels) and its source.\n";

/// 5142 -> "5 142", the README's way of writing counts.
std::string grouped(std::int64_t count) {
  const auto digits = std::to_string(count);
  std::string text;
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) {
      text += ' ';
    }
    text += digits[i];
  }
  return text;
}

/// {1, 28, 28} with 10 classes -> "1x28x28, 10 classes" (the classes of classifiers only).
std::string shape_text(const model::ModelEntry& entry) {
  const auto& shape = entry.paper_shape;
  std::ostringstream text;
  for (std::size_t i = 0; i < shape.sample_shape.size(); ++i) {
    text << (i > 0 ? "x" : "") << shape.sample_shape[i];
  }
  if (shape.num_classes > 0 && !entry.reconstructs) {
    text << ", " << shape.num_classes << " classes";
  }
  return text.str();
}

std::string forms_text(const model::ModelForms& forms) {
  std::string text;
  for (const auto& [has, name] :
       {std::pair{forms.libtorch, "libtorch"}, std::pair{forms.client_batched, "client-batched"},
        std::pair{forms.cpu_kernels, "cpu-kernels"}}) {
    text += has ? std::string(text.empty() ? "" : ", ") + name : "";
  }
  return text;
}

void print_table(std::ostream& out) {
  out << "| model | layers | parameters | paper shape | datasets | head features | forms | "
         "source |\n| --- | --- | --- | --- | --- | --- | --- | --- |\n";
  for (const auto& entry : model::registered_models()) {
    out << "| `" << entry.name << "` | " << entry.description << " | "
        << grouped(model::paper_state_size(entry)) << " | " << shape_text(entry) << " | "
        << entry.paper_datasets << " | "
        << (entry.has_head() ? std::to_string(entry.feature_size) : "-") << " | "
        << forms_text(entry.forms) << " | " << entry.source << " |\n";
  }
}

}  // namespace

int run_models_command(int argc, const char* const argv[], std::ostream& out, std::ostream& err) {
  const std::string argument = argc > 1 ? argv[1] : "";
  if (argument == "--help" || argument == "-h") {
    out << kUsage;
    return 0;
  }
  if (argc > 1) {
    err << kUsage << "cflrun models: error: unknown argument '" << core::printable(argument)
        << "'\n";
    return kExitUsage;
  }
  print_table(out);
  return 0;
}

}  // namespace cflrun::cli
