#include <cflrun/cli/run_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <boost/program_options.hpp>

#include <cflrun/cli/option_kinds.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/data/partition.hpp>
#include <cflrun/model/model_registry.hpp>
#include <cflrun/model/network.hpp>

#include "option_visitors.hpp"
#include "run_option_groups.hpp"

namespace po = boost::program_options;

namespace cflrun::cli {
namespace {

/// The options as Boost descriptions, bound to `parsed` (RunOptions::visit).
struct Descriptions {
  po::options_description command_line_only;  ///< "Generic": --help, --version, --config.
  po::options_description run;                ///< every option a config file may set too.
};

Descriptions describe(ParsedCommandLine& parsed) {
  OptionDescriber describer;
  describer.section("Generic");
  describer.declare({.flag = "help,h",
                     .help = "print this help and exit",
                     .kind = core::OptionKind::kBookkeeping,
                     .recorded = false},
                    &parsed.help);
  describer.declare({.flag = "version",
                     .help = "print version, git commit, LibTorch version and BLAS, and exit",
                     .kind = core::OptionKind::kBookkeeping,
                     .recorded = false},
                    &parsed.version);
  parsed.options.visit(
      describer);  // --config joins the Generic section, which the visit names first
  auto sections = describer.take();
  Descriptions descriptions{sections.front(), {}};
  for (std::size_t i = 1; i < sections.size(); ++i) {
    descriptions.run.add(sections[i]);
  }
  return descriptions;
}

template <typename T>
void require(bool ok, const std::string& flag, const std::string& expectation, const T& got) {
  if (!ok) {
    std::ostringstream message;
    message << "--" << flag << " must be " << expectation << ", but got " << got;
    throw ConfigError(message.str());
  }
}

constexpr const char* kUtf8ByteOrderMark = "\xef\xbb\xbf";

void store_config_file(const std::string& path, const po::options_description& description,
                       po::variables_map& vm) {
  if (!std::filesystem::is_regular_file(path)) {
    throw ConfigError("--config " + path + ": not a regular file" +
                      (std::filesystem::is_directory(path) ? " but a directory"
                                                           : std::string(", it does not exist")) +
                      "; give the path of a config file of `name = value` lines");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw ConfigError("--config " + path + ": cannot open the file; check the path");
  }
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (text.rfind(kUtf8ByteOrderMark, 0) == 0) {
    text.erase(0, std::string(kUtf8ByteOrderMark)
                      .size());  // as Python's utf-8-sig: editors on Windows add it
  }
  if (const auto nul = text.find('\0'); nul != std::string::npos) {
    const auto line =
        1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n');
    throw ConfigError("config file " + path + " line " + std::to_string(line) +
                      " holds a NUL byte, and a config file is text of `name = value` lines; "
                      "remove it (is this the right file?)");
  }
  std::istringstream lines(text);
  try {
    po::store(po::parse_config_file(lines, description, /*allow_unregistered=*/false), vm);
  } catch (const po::error& e) {
    throw ConfigError("config file " + path + ": " + e.what() +
                      " (see cflrun --help for the options)");
  }
}

/// Stores `preset` words as one more source after the command line and the config file: Boost keeps
/// the values those already gave and replaces only defaults.
void store_preset(const std::vector<std::string>& preset,
                  const po::options_description& description, po::variables_map& vm) {
  po::store(po::command_line_parser(preset).options(description).positional({}).run(), vm);
}

}  // namespace

std::vector<std::string> official_fidelity_preset() {
  return {"--kmeans-restarts=1", "--kmeans-init=greedy", "--pool-seed=1"};
}

namespace {

/// Every real-valued option finite: "inf" and "nan" parse as doubles, but no option means them.
/// @throws ConfigError naming the first option that holds one.
void require_finite(const po::variables_map& vm) {
  for (const auto& [name, value] : vm) {
    const auto* number = boost::any_cast<double>(&value.value());
    if (number != nullptr && !std::isfinite(*number)) {
      throw ConfigError("--" + name + " must be a finite number, but got " + option_text(*number));
    }
  }
}

/// Walks the command line as Boost will, and names what Boost's messages leave unnamed: an option
/// that needs a value followed by another option or by nothing (Boost takes "--out --x" as the
/// value "--x", and "--rounds --out f" makes "f" a stray word), and a stray word with the word
/// before it. Unknown options are left to Boost's own message.
/// @throws ConfigError naming the option or the word, and the fix.
void require_option_values(int argc, const char* const argv[],
                           const po::options_description& options) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word.rfind("--", 0) != 0 || word == "--") {  // no positional words, no "--" before them
      throw ConfigError("unexpected word '" + word + "' on the command line" +
                        (i > 1 ? " after " + std::string(argv[i - 1]) : std::string()) +
                        "; every option starts with -- (see cflrun --help)");
    }
    const std::string name = word.substr(2, word.find('=') - 2);
    const po::option_description* option = options.find_nothrow(name, /*approx=*/false);
    if (word.find('=') != std::string::npos ||
        (option != nullptr && option->semantic()->max_tokens() == 0)) {
      continue;  // a --name=value or a switch
    }
    const bool next_is_value = i + 1 < argc && std::string(argv[i + 1]).rfind("--", 0) != 0;
    // An unknown option (Boost names it) or an optional value (--parallel-clients false): a word
    // after it is its value.
    if (option == nullptr || option->semantic()->min_tokens() == 0) {
      i += next_is_value ? 1 : 0;
      continue;
    }
    if (!next_is_value) {
      throw ConfigError("--" + name + " needs a value, but " +
                        (i + 1 == argc ? std::string("it is the last word")
                                       : "the next word is " + std::string(argv[i + 1])) +
                        "; give it as --" + name + " VALUE or --" + name + "=VALUE");
    }
    ++i;  // its value
  }
}

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const argv[]) {
  ParsedCommandLine parsed;
  const auto descriptions = describe(parsed);
  po::options_description everything;
  everything.add(descriptions.command_line_only).add(descriptions.run);
  po::variables_map vm;
  require_option_values(argc, argv, everything);
  try {
    // No positional arguments (require_option_values has named any stray word).
    po::store(po::command_line_parser(argc, argv).options(everything).positional({}).run(), vm);
    if (vm.count("config") != 0) {
      store_config_file(vm["config"].as<std::string>(), descriptions.run, vm);
    }
    if (vm.count("fidelity") != 0 &&
        core::value_of(vm["fidelity"].as<std::string>(), kFidelityWords) == Fidelity::kOfficial) {
      store_preset(official_fidelity_preset(), descriptions.run, vm);
    }
    po::notify(vm);  // also checks the seeds (OptionDescriber)
    require_finite(vm);
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see cflrun --help)");
  }
  if (!parsed.help && !parsed.version) {
    validate(parsed.options);
  }
  return parsed;
}

void validate(const RunOptions& o) {
  algo::find_algorithm(o.algorithm);
  OptionValidator validator;
  auto visited = o;
  visited.visit(
      validator);  // each option on its own; then the combinations, named by the option given
  require(o.momentum == 0.0 || o.optimizer == local::Solver::kSgd, "momentum",
          "0 unless --optimizer sgd", o.momentum);
  require(o.prox_mu == 0.0 || o.aggregation == Averaging::kModel, "prox-mu",
          "0 with --aggregation gradient (a gradient at the start model has no proximal part)",
          o.prox_mu);
  require(
      o.min_train_samples <= o.train_samples, "min-train-samples",
      "between 0 (= --train-samples) and --train-samples (" + std::to_string(o.train_samples) + ")",
      o.min_train_samples);
  require(o.newcomers < o.clients_per_cluster, "newcomers",
          "below --clients-per-cluster (" + std::to_string(o.clients_per_cluster) +
              "): some clients of every cluster must be there from the start",
          o.newcomers);
  const data::DatasetSource& dataset = data::find_dataset(o.dataset);
  require(dataset.accepts_partition(o.partition), "partition", dataset.partition_requirement(),
          o.partition);
  const auto is_partition = [&](data::PartitionKind kind) {
    return o.partition == data::partition_name(kind);
  };
  require(o.label_sets.empty() || is_partition(data::PartitionKind::kLabelSkew2), "label-sets",
          "left out unless --partition label_skew_2", o.label_sets);
  const bool class_split = is_partition(data::PartitionKind::kLabelSkew2) ||
                           is_partition(data::PartitionKind::kLabelSkew3);
  require(o.train_class_counts.empty() || class_split, "train-class-counts",
          "left out unless --partition label_skew_2 or label_skew_3", o.train_class_counts);
  require(o.test_class_counts.empty() || class_split, "test-class-counts",
          "left out unless --partition label_skew_2 or label_skew_3", o.test_class_counts);
  require(!o.unsupervised || dataset.supports_unsupervised(), "unsupervised",
          "off for --dataset " + o.dataset + " (it has labels only)", "--unsupervised");
  const auto model = o.effective_model();
  require(model::model_entry(model).reconstructs == o.unsupervised, "model",
          o.unsupervised
              ? "an autoencoder (" + model::reconstruction_model_names() + ") with --unsupervised"
              : "a supervised model without --unsupervised (add --unsupervised for autoencoders)",
          o.effective_model());
  require(o.out.find_first_not_of(" \t\n\r\f\v") != std::string::npos, "out", "a file path",
          "'" + o.out + "'");
  if (o.out.back() == '/' || std::filesystem::is_directory(o.out)) {
    throw ConfigError("--out must name a file, but " + o.out +
                      " is a directory; give a file in it, e.g. --out " +
                      (std::filesystem::path(o.out) / "result.h5").lexically_normal().string());
  }
  parse_round_timeout(o.round_timeout);
}

std::optional<double> parse_round_timeout(const std::string& text) {
  if (const auto word = core::value_of(text, kRoundTimeoutWords)) {
    return *word == RoundTimeoutWord::kOff ? std::optional<double>(0.0) : std::nullopt;
  }
  double seconds = 0.0;
  try {
    std::size_t used = 0;
    seconds = std::stod(text, &used);
    seconds = used == text.size() ? seconds : 0.0;
  } catch (const std::exception&) {
  }
  require(seconds > 0.0 && std::isfinite(seconds), "round-timeout",
          "auto, off or a positive number of seconds", text);
  return seconds;
}

std::string help_text() {
  ParsedCommandLine defaults;
  const auto descriptions = describe(defaults);
  po::options_description everything(
      "cflrun: clustered federated learning experiments\n\n"
      "Usage: cflrun [options]            (one rank hosts the server and all clients)\n"
      "       mpirun -np P cflrun [options] (rank 0 = server, ranks 1..P-1 host the "
      "clients)\n"
      "       cflrun check | report | sweep | models ...  (subcommands, each with --help)\n\n"
      "Options");
  everything.add(descriptions.command_line_only).add(descriptions.run);
  std::ostringstream text;
  text << everything;
  return text.str();
}

std::string RunOptions::effective_model() const {
  if (model != "auto") {
    return model;
  }
  return data::find_dataset(dataset).default_model(unsupervised);
}

std::vector<std::pair<std::string, std::string>> RunOptions::to_attributes() const {
  OptionRecorder recorder;
  auto visited = *this;
  visited.visit_run_options(recorder);
  visited.algorithm_options.of(algorithm).visit(recorder);
  auto attributes = recorder.take();
  // A changing population's options, --init-scheme, --train-accuracy and --fused-kernels only
  // where set: a run's /config stays as before they existed (what a missing option means:
  // run::config_differences).
  OptionRecorder recorded_where_set;
  detail::declare_population(visited, recorded_where_set);
  detail::declare_initial_models(visited, recorded_where_set);
  detail::declare_measurements(visited, recorded_where_set);
  detail::declare_kernels(visited, recorded_where_set);
  for (const auto& [name, value] : recorded_where_set.take()) {
    if (default_option_values().at(name) == value) {
      attributes.erase(std::remove(attributes.begin(), attributes.end(),
                                   std::pair<std::string, std::string>(name, value)),
                       attributes.end());
    }
  }
  return attributes;
}

const std::map<std::string, std::string>& default_option_values() {
  static const auto values = [] {
    OptionRecorder recorder;
    RunOptions{}.visit(recorder);  // every algorithm's options too
    const auto attributes = recorder.take();
    return std::map<std::string, std::string>(attributes.begin(), attributes.end());
  }();
  return values;
}

std::set<std::string> other_algorithms_options(const std::string& algorithm) {
  RunOptions defaults;
  OptionKinds every_option;
  defaults.visit(every_option);
  OptionKinds run_options;
  defaults.visit_run_options(run_options);
  OptionKinds own;
  defaults.algorithm_options.of(algorithm).visit(own);
  std::set<std::string> names;
  for (const auto& entry : every_option.kinds()) {
    if (run_options.kinds().count(entry.first) == 0 && own.kinds().count(entry.first) == 0) {
      names.insert(entry.first);
    }
  }
  return names;
}

std::set<std::string> option_names(std::initializer_list<core::OptionKind> kinds) {
  OptionKinds collector;
  RunOptions defaults;
  defaults.visit(collector);
  std::set<std::string> names;
  for (const auto& [flag, kind] : collector.kinds()) {
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) {
      names.insert(flag);
    }
  }
  return names;
}

}  // namespace cflrun::cli
