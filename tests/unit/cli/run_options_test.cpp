#include <cflrun/algo/cfl.hpp>
#include <cflrun/algo/clove.hpp>
#include <cflrun/algo/fedsoft.hpp>
#include <cflrun/algo/pacfl.hpp>
#include <cflrun/cli/option_kinds.hpp>
#include <cflrun/cli/run_options.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/printable.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include <gtest/gtest.h>

namespace cflrun::cli {
namespace {

ParsedCommandLine parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cflrun");
  std::vector<const char*> argv;
  for (const auto& a : args) {
    argv.push_back(a.c_str());
  }
  return parse_command_line(static_cast<int>(argv.size()), argv.data());
}

std::filesystem::path write_config(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("cflrun_cli_test_" + std::to_string(::getpid()) + ".cfg");
  std::ofstream(path) << text;
  return path;
}

TEST(RunOptions, DefaultsAreThePaperText) {
  const auto o = parse({}).options;
  EXPECT_EQ(o.algorithm, "clove");
  EXPECT_DOUBLE_EQ(o.lr, 1e-3);
  EXPECT_EQ(o.batch_size, 100);
  EXPECT_EQ(o.local_epochs, 1);
  EXPECT_EQ(o.rounds, 100);
  EXPECT_EQ(o.effective_data_seed(), o.seed);
}

TEST(RunOptions, CommandLineWinsOverConfigFile) {
  const auto cfg = write_config("# comment\nalgorithm = ifca\nclusters = 4\nlr = 0.01\nseed = 9\n");
  const auto o = parse({"--config", cfg.string(), "--clusters", "3", "--data-seed", "2"}).options;
  EXPECT_EQ(o.algorithm, "ifca");
  EXPECT_EQ(o.clusters, 3);
  EXPECT_DOUBLE_EQ(o.lr, 0.01);
  EXPECT_EQ(o.seed, 9U);
  EXPECT_EQ(o.effective_data_seed(), 2U);
  std::filesystem::remove(cfg);
}

TEST(RunOptions, OfficialFidelityPresetFillsOnlyWhatTheUserLeftAtDefault) {
  const auto official = parse({"--fidelity", "official", "--seed", "3"}).options;
  EXPECT_TRUE(official.official_fidelity());
  const auto& clove = official.algorithm_options.get<algo::CloveOptions>("clove");
  EXPECT_EQ(clove.kmeans_restarts, 1);
  EXPECT_EQ(clove.kmeans_init, algo::KMeansInit::kGreedy);
  EXPECT_EQ(official.effective_pool_seed(),
            1U);  // pools of seed 1, as the official code draws them
  EXPECT_EQ(official.effective_data_seed(), 3U);  // the client split follows the seed

  const auto cfg = write_config("fidelity = official\nkmeans-restarts = 4\n");
  const auto mixed = parse({"--config", cfg.string(), "--pool-seed", "5"}).options;
  EXPECT_EQ(mixed.algorithm_options.get<algo::CloveOptions>("clove").kmeans_restarts,
            4);  // the config's
  EXPECT_EQ(mixed.algorithm_options.get<algo::CloveOptions>("clove").kmeans_init,
            algo::KMeansInit::kGreedy);
  EXPECT_EQ(mixed.effective_pool_seed(), 5U);  // the command line's
  std::filesystem::remove(cfg);

  const auto plain = parse({"--seed", "3"}).options;
  EXPECT_FALSE(plain.official_fidelity());
  EXPECT_EQ(plain.algorithm_options.get<algo::CloveOptions>("clove").kmeans_restarts, 10);
  EXPECT_EQ(plain.effective_pool_seed(), 3U);
  EXPECT_THROW(parse({"--fidelity", "paper"}), ConfigError);
  EXPECT_THROW(parse({"--pool-seed", "-1"}), ConfigError);
  EXPECT_THROW(parse({"--label-sets", "0,1/2,3"}),
               ConfigError);  // only with --partition label_skew_2
  EXPECT_EQ(parse({"--partition", "label_skew_2", "--label-sets", "0,1/2,3"}).options.label_sets,
            "0,1/2,3");
  EXPECT_THROW(parse({"--train-class-counts", "1,2"}), ConfigError);  // only with label skew 2 or 3
  EXPECT_THROW(parse({"--partition", "label_skew_1", "--test-class-counts", "1,2"}), ConfigError);
  EXPECT_EQ(parse({"--partition", "label_skew_3", "--test-class-counts", "1,2"})
                .options.test_class_counts,
            "1,2");
}

TEST(RunOptions, RejectsUnknownOptionsInBothSources) {
  EXPECT_THROW(parse({"--clustres", "3"}), ConfigError);
  const auto cfg = write_config("clustres = 3\n");
  EXPECT_THROW(parse({"--config", cfg.string()}), ConfigError);
  std::filesystem::remove(cfg);
  EXPECT_THROW(parse({"--config", "/nonexistent/x.cfg"}), ConfigError);
  EXPECT_THROW(parse({"--rounds", "3", "stray"}), ConfigError);
  EXPECT_THROW(parse({"--version", "stray"}), ConfigError);
}

TEST(RunOptions, NamesTheFlagOfAnInvalidValue) {
  try {
    parse({"--clusters", "0"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_NE(std::string(e.what()).find("--clusters"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse({"--rounds", "many"}), ConfigError);
  EXPECT_THROW(parse({"--algorithm", "kmeans"}), ConfigError);
  EXPECT_THROW(parse({"--partition", "label_skew_9"}), ConfigError);
  EXPECT_THROW(parse({"--device", "tpu"}), ConfigError);
  EXPECT_THROW(parse({"--seed", "-1"}), ConfigError);
  EXPECT_THROW(parse({"--lr", "0"}), ConfigError);
}

TEST(RunOptions, FedSoftAndMixtureOptionsAreChecked) {
  const auto o = parse({"--algorithm", "fedsoft", "--partition", "mixture_10_90", "--clusters", "2",
                        "--fedsoft-optimizer", "persistent"})
                     .options;
  const auto& fedsoft = o.algorithm_options.get<algo::FedSoftOptions>("fedsoft");
  EXPECT_EQ(fedsoft.selection, 15);
  EXPECT_EQ(fedsoft.optimizer, algo::KeptOptimizer::kPersistent);
  EXPECT_NO_THROW(parse({"--dataset", "linreg", "--partition", "mixture_random"}));
  EXPECT_NO_THROW(parse({"--dataset", "linreg"}));
  EXPECT_THROW(parse({"--dataset", "linreg", "--partition", "concept_shift"}), ConfigError);
  // (FedSoft's incompatible run settings, e.g. --participation 0.5, are refused by its
  // constructor.)
  EXPECT_THROW(parse({"--fedsoft-optimizer", "sgd"}), ConfigError);
  EXPECT_THROW(parse({"--mixture-sources", "colour"}), ConfigError);
  EXPECT_THROW(parse({"--min-train-samples", "600", "--train-samples", "500"}), ConfigError);
  EXPECT_THROW(parse({"--model-std", "-1"}), ConfigError);
}

TEST(RunOptions, CflSolverIsFreshByDefaultOrTheNotebooks) {
  EXPECT_EQ(parse({}).options.algorithm_options.get<algo::CflOptions>("cfl").solver,
            algo::CflSolver::kFresh);
  const auto o = parse({"--algorithm", "cfl", "--cfl-solver", "notebook", "--optimizer", "sgd",
                        "--lr", "0.1", "--momentum", "0.9"})
                     .options;
  EXPECT_EQ(o.algorithm_options.get<algo::CflOptions>("cfl").solver, algo::CflSolver::kNotebook);
  EXPECT_THROW(parse({"--cfl-solver", "persistent"}), ConfigError);
}

TEST(RunOptions, AlgorithmOptionsAreDeclaredOnceAndParsedValidatedAndRecorded) {
  const auto cfg = write_config("kmeans-restarts = 3\npacfl-beta = 10.5\n");
  const auto o = parse({"--config", cfg.string(), "--fedsoft-mu", "0.5"}).options;
  std::filesystem::remove(cfg);
  EXPECT_EQ(o.algorithm_options.get<algo::CloveOptions>("clove").kmeans_restarts, 3);
  EXPECT_DOUBLE_EQ(o.algorithm_options.get<algo::PacflOptions>("pacfl").beta, 10.5);
  EXPECT_DOUBLE_EQ(o.algorithm_options.get<algo::FedSoftOptions>("fedsoft").mu, 0.5);
  auto attributes = o.to_attributes();
  const auto value = [&](const std::string& name) {
    for (const auto& [key, text] : attributes) {
      if (key == name) {
        return text;
      }
    }
    return std::string("missing");
  };
  EXPECT_EQ(value("kmeans-restarts"), "3");
  EXPECT_EQ(value("loss-transform"), "identity");
  EXPECT_EQ(value("pacfl-beta"), "missing");  // parsed, but not clove's: not recorded
  auto pacfl = o;
  pacfl.algorithm = "pacfl";
  attributes = pacfl.to_attributes();
  EXPECT_EQ(value("pacfl-beta"), "10.5");
  EXPECT_EQ(value("kmeans-restarts"), "missing");
  pacfl.algorithm = "fedsoft";
  attributes = pacfl.to_attributes();
  EXPECT_EQ(value("fedsoft-mu"), "0.5");
  try {
    parse({"--fedsoft-smoother", "0"});
    FAIL() << "expected ConfigError";
  } catch (const ConfigError& e) {
    EXPECT_EQ(std::string(e.what()), "--fedsoft-smoother must be > 0, but got 0");
  }
  EXPECT_THROW(parse({"--kmeans-restarts", "0"}), ConfigError);
  EXPECT_THROW(parse({"--matching", "greedy"}), ConfigError);
}

/// The message of the ConfigError that parsing `args` throws.
std::string error_of(std::vector<std::string> args) {
  try {
    parse(std::move(args));
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(RunOptions, ErrorsNameTheOptionTheUserGave) {
  EXPECT_EQ(error_of({"--train-samples", "-3"}), "--train-samples must be at least 1, but got -3");
  EXPECT_EQ(error_of({"--clients-per-cluster", "0"}),
            "--clients-per-cluster must be at least 1, but got 0");
  EXPECT_NE(error_of({"--threads", "100000"}).find("--threads must be 0 (auto) or at most the"),
            std::string::npos);
  EXPECT_NE(
      error_of({"--config", std::filesystem::temp_directory_path().string()}).find("a directory"),
      std::string::npos);
  EXPECT_NE(error_of({"--config", "/nonexistent/run.cfg"}).find("does not exist"),
            std::string::npos);
  EXPECT_NE(error_of({"--min-train-samples", "600"}).find("--min-train-samples must be between"),
            std::string::npos);
}

TEST(RunOptions, AnOptionWithoutItsValueOrAStrayWordIsNamed) {
  EXPECT_EQ(error_of({"--rounds", "--out", "x.h5"}),
            "--rounds needs a value, but the next word is --out; give it as --rounds VALUE or "
            "--rounds=VALUE");
  EXPECT_EQ(error_of({"--out", "--skip-complete"}),
            "--out needs a value, but the next word is --skip-complete; give it as --out VALUE or "
            "--out=VALUE");
  EXPECT_EQ(error_of({"--seed", "2", "--rounds"}),
            "--rounds needs a value, but it is the last word; give it as --rounds VALUE or "
            "--rounds=VALUE");
  EXPECT_EQ(error_of({"--rounds", "3", "4"}),
            "unexpected word '4' on the command line after 3; every option starts with -- (see "
            "cflrun --help)");
  EXPECT_NE(error_of({"--out", " "}).find("--out must be a file path, but got ' '"),
            std::string::npos);
  EXPECT_EQ(error_of({"--rounds", "3", "--", "4"}),
            "unexpected word '--' on the command line after 3; every option starts with -- (see "
            "cflrun --help)");
  EXPECT_NE(error_of({"--clustres", "3"}).find("unrecognised option '--clustres'"),
            std::string::npos);  // a typo is named, not its value
  // Still values: a negative number, --name=value, a switch followed by an option.
  EXPECT_EQ(error_of({"--train-samples", "-3"}), "--train-samples must be at least 1, but got -3");
  EXPECT_EQ(parse({"--rounds=7", "--skip-complete", "--seed", "5"}).options.rounds, 7);
}

TEST(RunOptions, AConfigFileWithANulByteIsRefusedNamingTheLine) {
  const auto path = write_config(std::string("rounds = 3\nout = \"a\0b.h5\"\n", 26));
  EXPECT_EQ(error_of({"--config", path.string()}),
            "config file " + path.string() +
                " line 2 holds a NUL byte, and a config file is text of `name = value` lines; "
                "remove it (is this the right file?)");
  std::filesystem::remove(path);
}

TEST(Printable, EscapesControlBytesAndInvalidUtf8AndKeepsValidUtf8) {
  EXPECT_EQ(core::printable("se\xff"
                            "ed \x1b[31m\x7f"),
            "se\\xffed \\x1b[31m\\x7f");
  EXPECT_EQ(core::printable("r\xc3\xa9sultat \xe2\x82\xac\tok\n"),
            "r\xc3\xa9sultat \xe2\x82\xac\tok\n");
  EXPECT_EQ(core::printable("cut \xe2\x82"), "cut \\xe2\\x82");  // a sequence cut short
  EXPECT_EQ(core::printable(std::string("a\0b", 3)), "a\\x00b");
}

TEST(RunOptions, HelpListsEveryOptionWithDefault) {
  const auto text = help_text();
  ASSERT_GT(default_option_values().size(), 90U);  // every algorithm's options too
  for (const auto& [name, value] : default_option_values()) {
    EXPECT_NE(text.find("--" + name), std::string::npos) << name;
  }
  EXPECT_NE(text.find("(=0.001)"), std::string::npos);
  // Each kind of option with its default as --help shows it, under its section's title.
  for (const char* line : {"--optimizer arg (=adam)", "--kmeans-init arg (=plus_plus)",
                           "--pacfl-proximity arg (=smallest)", "--device arg (=auto)",
                           "--kmeans-restarts arg (=10)", "--parallel-clients [=arg(=1)] (=1)",
                           "--seed arg (=1)", "CLoVE options:", "PACFL options:"}) {
    EXPECT_NE(text.find(line), std::string::npos) << line;
  }
  EXPECT_TRUE(parse({"--help"}).help);
}

/// The run options that do not change a run's results, as src/run/output_files.cpp listed them
/// before they were derived from the option kinds.
const std::set<std::string> kResultNeutralBefore{
    "out",           "threads",          "quiet",        "overwrite",        "skip-complete",
    "resume",        "config",           "device",       "checkpoint-every", "checkpoint-seconds",
    "round-timeout", "parallel-clients", "client-batch", "fused-kernels"};

TEST(OptionKinds, PlacementAndBookkeepingAreTheResultNeutralOptionsListedBefore) {
  using core::OptionKind;
  auto expected = kResultNeutralBefore;
  expected.insert("dry-run");  // never in /config: a dry run writes no file
  EXPECT_EQ(option_names({OptionKind::kPlacement, OptionKind::kBookkeeping}), expected);
  EXPECT_EQ(option_names({OptionKind::kPlacement}),
            (std::set<std::string>{"threads", "device", "parallel-clients", "client-batch",
                                   "fused-kernels"}));
  EXPECT_EQ(option_names({OptionKind::kSeed}),
            (std::set<std::string>{"seed", "data-seed", "pool-seed"}));
}

TEST(OptionKinds, EveryOptionHasOneKindAndAlgorithmOptionsDefineTheExperiment) {
  using core::OptionKind;
  const auto experiment = option_names({OptionKind::kExperiment});
  for (const char* name :
       {"algorithm", "dataset", "lr", "rounds", "precision", "flush-denormal",
        "server-hosts-clients", "data-dir", "models", "kmeans-restarts", "fedsoft-mu"}) {
    EXPECT_EQ(experiment.count(name), 1U) << name;
  }
  auto all = option_names({OptionKind::kExperiment, OptionKind::kSeed, OptionKind::kPlacement,
                           OptionKind::kBookkeeping});
  std::size_t kinds = 0;
  for (const auto kind : {OptionKind::kExperiment, OptionKind::kSeed, OptionKind::kPlacement,
                          OptionKind::kBookkeeping}) {
    kinds += option_names({kind}).size();
  }
  EXPECT_EQ(kinds, all.size());  // no option under two kinds
  for (const auto& [name, value] : default_option_values()) {
    EXPECT_EQ(all.erase(name), 1U) << name << " is recorded twice or has no kind";
  }
  EXPECT_EQ(all, (std::set<std::string>{"quiet", "dry-run"}));  // declared but not recorded
}

TEST(RunOptions, ConfigRecordsTheChosenAlgorithmsOptionsOnly) {
  const auto names_of = [](const std::vector<std::string>& args) {
    std::set<std::string> names;
    for (const auto& [name, value] : parse(args).options.to_attributes()) {
      names.insert(name);
    }
    return names;
  };
  const auto clove = names_of({});
  EXPECT_EQ(clove.count("kmeans-restarts"), 1U);
  EXPECT_EQ(clove.count("pacfl-beta"), 0U);
  EXPECT_EQ(clove.count("cfl-eps1"), 0U);
  const auto pacfl = names_of({"--algorithm", "pacfl", "--pacfl-beta", "7"});
  EXPECT_EQ(pacfl.count("pacfl-beta"), 1U);
  EXPECT_EQ(pacfl.count("kmeans-restarts"), 0U);
  const auto ifca = names_of({"--algorithm", "ifca"});  // no options of its own
  EXPECT_EQ(ifca.size(), clove.size() - 6);             // clove's six
}

/// `name = value` lines: a fixture written by the build before the run options were declared once.
std::map<std::string, std::string> read_attributes(const std::string& fixture) {
  std::ifstream file(std::string(CFLRUN_SOURCE_DIR) + "/tests/fixtures/" + fixture);
  std::map<std::string, std::string> attributes;
  for (std::string line; std::getline(file, line);) {
    const auto equals = line.find('=');
    attributes.emplace(line.substr(0, equals), line.substr(equals + 1));
  }
  return attributes;
}

TEST(RunOptions, RecordsTheAttributesEarlierBuildsRecorded) {
  // Defaults, and every kind of value away from its default (17-digit reals, an int64, seeds in
  // force, --model and --models in force, switches both ways, an algorithm option).
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases{
      {{}, "config_attributes_default.txt"},
      {{"--dataset",
        "linreg",
        "--seed",
        "7",
        "--data-seed",
        "3",
        "--lr",
        "0.0123456789",
        "--parallel-clients",
        "false",
        "--server-hosts-clients",
        "--quiet",
        "--overwrite",
        "--threads",
        "1",
        "--models",
        "3",
        "--kmeans-restarts",
        "2",
        "--noise",
        "0.3",
        "--round-timeout",
        "12.5",
        "--checkpoint-seconds",
        "1e-7",
        "--dimension",
        "123456789012"},
       "config_attributes_linreg.txt"},
      {{"--fidelity", "official", "--unsupervised", "--dataset", "cifar10", "--client-batch", "4",
        "--flush-denormal=false", "--precision", "bf16", "--participation", "0.3", "--algorithm",
        "fedsoft", "--partition", "mixture_10_90", "--pool-seed", "9"},
       "config_attributes_official.txt"}};
  for (const auto& [args, fixture] : cases) {
    const auto attributes = parse(args).options.to_attributes();
    const std::map<std::string, std::string> recorded(attributes.begin(), attributes.end());
    EXPECT_EQ(recorded.size(), attributes.size()) << fixture << ": a name recorded twice";
    EXPECT_EQ(recorded, read_attributes(fixture)) << fixture;
  }
}

TEST(RunOptions, RecordsAChangingPopulationsOptionsOnlyWhereSet) {
  const auto attributes =
      parse({"--dropout", "0.3", "--changes", "appear round=4"}).options.to_attributes();
  const std::map<std::string, std::string> recorded(attributes.begin(), attributes.end());
  EXPECT_EQ(recorded.at("dropout"), "0.29999999999999999");
  EXPECT_EQ(recorded.at("changes"), "appear round=4");
  EXPECT_EQ(recorded.count("round-deadline"), 0u);  // at its default: not recorded
  EXPECT_EQ(recorded.count("straggler-work"), 0u);
}

// Options added after result files existed are recorded only where set, so older files' /config
// and every run without them stay as they were.
TEST(RunOptions, RecordsLaterOptionsOnlyWhereSet) {
  const std::vector<std::pair<std::vector<std::string>, std::pair<std::string, std::string>>> cases{
      {{"--train-accuracy"}, {"train-accuracy", "true"}},
      {{"--init-scheme", "unit_sphere"}, {"init-scheme", "unit_sphere"}}};
  const auto without = parse({}).options.to_attributes();
  for (const auto& [arguments, attribute] : cases) {
    const auto with = parse(arguments).options.to_attributes();
    EXPECT_NE(std::find(with.begin(), with.end(), attribute), with.end()) << attribute.first;
    EXPECT_TRUE(std::none_of(without.begin(), without.end(), [&](const auto& entry) {
      return entry.first == attribute.first;
    })) << attribute.first;
  }
}

TEST(RunOptions, ChoicesAreWordsOutsideAndEnumsInside) {
  EXPECT_EQ(error_of({"--optimizer", "adamw"}),
            "--optimizer must be one of adam, sgd, but got 'adamw'");
  EXPECT_EQ(error_of({"--pacfl-proximity", "largest"}),
            "--pacfl-proximity must be one of smallest, sum, entrywise, but got 'largest'");
  const auto cfg = write_config("device = gpu\n");
  EXPECT_EQ(error_of({"--config", cfg.string()}),
            "--device must be one of auto, cpu, cuda, but got 'gpu'");
  std::filesystem::remove(cfg);
  const auto o = parse({"--optimizer", "sgd", "--aggregation", "gradient", "--pacfl-proximity",
                        "entrywise", "--mixture-sources", "label_groups", "--device", "cpu"})
                     .options;
  EXPECT_EQ(o.optimizer, local::Solver::kSgd);
  EXPECT_EQ(o.aggregation, Averaging::kGradient);
  EXPECT_EQ(o.algorithm_options.get<algo::PacflOptions>("pacfl").proximity,
            cluster::Proximity::kSmallestEntrywiseAngle);
  EXPECT_EQ(o.mixture_sources, data::SourceKind::kLabelGroups);
  EXPECT_EQ(o.device, DeviceChoice::kCpu);
  std::map<std::string, std::string> recorded;
  auto pacfl = o;
  pacfl.algorithm = "pacfl";
  for (const auto& [name, value] : pacfl.to_attributes()) {
    recorded.emplace(name, value);
  }
  EXPECT_EQ(recorded.at("optimizer"), "sgd");
  EXPECT_EQ(recorded.at("aggregation"), "gradient");
  EXPECT_EQ(recorded.at("pacfl-proximity"), "entrywise");
  EXPECT_EQ(recorded.at("mixture-sources"), "label_groups");
  EXPECT_EQ(recorded.at("device"), "cpu");
}

TEST(RunOptions, SwitchesAndOptionalValuesParseAsBefore) {
  EXPECT_TRUE(parse({}).options.parallel_clients);
  EXPECT_FALSE(parse({"--parallel-clients", "false"}).options.parallel_clients);
  EXPECT_TRUE(parse({"--parallel-clients"}).options.parallel_clients);
  EXPECT_FALSE(parse({"--flush-denormal=off"}).options.flush_denormal);
  EXPECT_TRUE(parse({"--quiet"}).options.quiet);
  EXPECT_FALSE(parse({}).options.quiet);
  EXPECT_THROW(parse({"--quiet", "true"}), ConfigError);  // a switch takes no value
  EXPECT_EQ(parse({"--seed", "18446744073"}).options.seed, 18446744073U);
  EXPECT_FALSE(parse({}).options.data_seed.has_value());
  EXPECT_EQ(error_of({"--seed", "-1"}), "--seed must be an integer >= 0, but got -1");
  EXPECT_EQ(error_of({"--data-seed", "-2"}), "--data-seed must be an integer >= 0, but got -2");
  EXPECT_EQ(error_of({"--client-batch", "-1"}),
            "--client-batch must be >= 0 (0 = auto, 1 = one client at a time), but got -1");
  EXPECT_EQ(error_of({"--lr", "10"}), "--lr must be in (0, 10), but got 10");
  EXPECT_EQ(error_of({"--momentum", "0.5"}),
            "--momentum must be 0 unless --optimizer sgd, but got 0.5");
  EXPECT_EQ(
      error_of({"--checkpoint-every", "-1"}),
      "--checkpoint-every must be 0 (only on a signal) or a positive count of rounds, but got -1");
  EXPECT_TRUE(parse({"--help", "--seed", "5"}).help);
  EXPECT_TRUE(parse({"--version"}).version);
  EXPECT_FALSE(parse({}).help);
}

}  // namespace
}  // namespace cflrun::cli
