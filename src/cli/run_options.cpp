#include <cflrun/cli/run_options.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>
#include <sstream>

#include <boost/program_options.hpp>

#include <cflrun/core/error.hpp>
#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/data/mixture.hpp>
#include <cflrun/data/partition.hpp>

#include "option_visitors.hpp"

namespace po = boost::program_options;

namespace cflrun::cli {
namespace {

/// Signed holders for the seeds: Boost's lexical_cast would silently wrap "-1" into an unsigned.
struct SeedHolders {
  std::int64_t seed = 1;
  std::int64_t data_seed = -1;
  std::int64_t pool_seed = -1;
};

/// The --algorithm help: every registered algorithm's name and summary.
std::string algorithm_help() {
  std::string help = "one of:";
  for (const auto& entry : algo::registered_algorithms()) {
    help += "\n  " + entry.name + ": " + entry.summary;
  }
  return help;
}

/// The --dataset help: every registered dataset's name, with its summary if it has one.
std::string dataset_help() {
  std::string help;
  for (const auto& source : data::registered_datasets()) {
    const auto summary = source->summary();
    help += (help.empty() ? "" : " | ") + source->name() + (summary.empty() ? "" : " (" + summary + ")");
  }
  return help;
}

/// Every --partition value: the hard partitions, then the mixtures (data/partition.hpp, data/mixture.hpp).
std::vector<std::string> partition_choices() {
  auto choices = data::partition_names();
  const auto mixtures = data::mixture_partition_names();
  choices.insert(choices.end(), mixtures.begin(), mixtures.end());
  return choices;
}

/// The --data-dir help: the default directory of every dataset that reads files.
std::string data_dir_help() {
  std::string defaults;
  for (const auto& source : data::registered_datasets()) {
    if (!source->default_data_dir().empty()) {
      defaults += (defaults.empty() ? "" : ", ") + source->default_data_dir().string() + " for " + source->name();
    }
  }
  return "directory of the data files (\"\" = " + defaults + ")";
}

/// The --model help: the architectures, and what auto means on each registered dataset (datasets
/// with the same default model are named together).
std::string model_help() {
  std::vector<std::pair<std::string, std::string>> defaults;  // (model, datasets), in registration order
  for (const auto& source : data::registered_datasets()) {
    const auto model = source->default_model(/*unsupervised=*/false);
    auto same = std::find_if(defaults.begin(), defaults.end(), [&](const auto& entry) { return entry.first == model; });
    if (same == defaults.end()) {
      defaults.emplace_back(model, source->name());
    } else {
      same->second += " and " + source->name();
    }
  }
  std::string help = "auto | cnn | cifar_cnn | mlp | autoencoder | conv_autoencoder | linear (auto: ";
  for (const auto& [model, datasets] : defaults) {
    help += model + " for " + datasets + ", ";
  }
  return help + "autoencoders with --unsupervised)";
}

po::options_description describe(RunOptions& o, SeedHolders& seeds) {
  po::options_description experiment("Experiment");
  experiment.add_options()
      ("algorithm", po::value(&o.algorithm)->default_value(o.algorithm), algorithm_help().c_str())
      ("dataset", po::value(&o.dataset)->default_value(o.dataset), dataset_help().c_str())
      ("data-dir", po::value(&o.data_dir)->default_value(o.data_dir), data_dir_help().c_str())
      ("partition", po::value(&o.partition)->default_value(o.partition),
       "label_skew_1 | concept_shift | feature_skew | label_skew_2 | label_skew_3 | label_skew_4 | "
       "rotation | class_per_cluster (image datasets) | mixture_10_90 | mixture_30_70 | mixture_linear | "
       "mixture_random (every client a mixture of --clusters source distributions, FedSoft Sec. 5)")
      ("mixture-sources", po::value(&o.mixture_sources)->default_value(o.mixture_sources),
       "image mixtures: rotation (source s = images rotated by s x 90 degrees) | label_groups (source s = "
       "the s-th contiguous group of classes)")
      ("min-train-samples", po::value(&o.min_train_samples)->default_value(o.min_train_samples),
       "mixtures: each client's training samples are uniform in [this, --train-samples] (count; 0 = "
       "--train-samples; FedSoft: 100..200)")
      ("holdout-samples", po::value(&o.holdout_samples)->default_value(o.holdout_samples),
       "mixtures: holdout samples per source on which every model is scored each round (count)")
      ("model", po::value(&o.model)->default_value(o.model), model_help().c_str())
      ("unsupervised", po::bool_switch(&o.unsupervised),
       "train autoencoders on the mean squared reconstruction error (paper App. C.2, Table 5)")
      ("dimension", po::value(&o.dimension)->default_value(o.dimension), "linreg: input dimension d (count)")
      ("separation", po::value(&o.separation)->default_value(o.separation),
       "linreg: Delta, optimal models pairwise between Delta and 5 Delta apart on the unit sphere")
      ("noise", po::value(&o.noise)->default_value(o.noise, "0.001"),
       "linreg: sigma, standard deviation of the label noise")
      ("model-std", po::value(&o.model_std)->default_value(o.model_std),
       "linreg: > 0 draws the optimal models from N(0, std^2 I) instead of the unit sphere "
       "(FedSoft's synthetic data: 3.1623, i.e. variance 10; --separation is then unused)")
      ("clusters", po::value(&o.clusters)->default_value(o.clusters),
       "K: ground-truth clusters, and models for clove/ifca unless --models (count)")
      ("clients-per-cluster", po::value(&o.clients_per_cluster)->default_value(o.clients_per_cluster),
       "clients in each cluster (count)")
      ("train-samples", po::value(&o.train_samples)->default_value(o.train_samples),
       "training samples per client (count)")
      ("test-samples", po::value(&o.test_samples)->default_value(o.test_samples),
       "test samples per client (count)")
      ("min-cluster-train", po::value(&o.min_cluster_train)->default_value(o.min_cluster_train),
       "label skew 2/3: minimum training samples per cluster pool (count; 0 = official 5 100 / 6 000)")
      ("min-cluster-test", po::value(&o.min_cluster_test)->default_value(o.min_cluster_test),
       "label skew 2/3: minimum test samples per cluster pool (count; 0 = official 510 / 750)")
      ("label-sets", po::value(&o.label_sets),
       "label skew 2: the clusters' label sets instead of drawn ones, sets separated by / and labels by , "
       "(e.g. the official code's draw for seed 1: 2,4,6,9/0,2,3,4/0,4,6,7/3,4,5,6/2,3,6,7)")
      ("train-class-counts", po::value(&o.train_class_counts),
       "label skew 2/3: the train pools' class counts instead of the reserve + Dirichlet draw, one row of "
       "C counts per cluster, rows separated by / and counts by , (e.g. the official code's draw for seed 1)")
      ("test-class-counts", po::value(&o.test_class_counts),
       "label skew 2/3: the test pools' class counts, as --train-class-counts")
      ("data-seed", po::value(&seeds.data_seed),
       "seed of the data partition (integer >= 0; default: --seed)")
      ("pool-seed", po::value(&seeds.pool_seed),
       "seed of the cluster pools alone (which samples and labels each cluster holds), the client split "
       "keeping --data-seed (integer >= 0; default: the data seed; --fidelity official: 1)")
      ("fidelity", po::value(&o.fidelity)->default_value(o.fidelity),
       "cflrun | official: official = the official CLoVE code's choices where they depart from the paper: "
       "k-means with 1 greedy k-means++ start, pools shared across seeds (--pool-seed 1), test samples per "
       "client min(test pool / clients per cluster, --train-samples), concept shift pools of 1 250 / 200 per "
       "class, CIFAR-10 in a random class order with feature skew as label permutations (jobs/paper/README.md)");

  po::options_description training("Training");
  training.add_options()
      ("rounds", po::value(&o.rounds)->default_value(o.rounds), "T: communication rounds (count)")
      ("local-epochs", po::value(&o.local_epochs)->default_value(o.local_epochs),
       "tau: epochs over the client's data per local update (count)")
      ("batch-size", po::value(&o.batch_size)->default_value(o.batch_size), "mini-batch size (samples)")
      ("lr", po::value(&o.lr)->default_value(o.lr, "0.001"), "learning rate of the local optimizer (paper "
       "text 1e-3; official code 1e-2 for the (F)MNIST CNN)")
      ("optimizer", po::value(&o.optimizer)->default_value(o.optimizer),
       "adam | sgd: the local solver (sgd: PFLlib's and the CFL code's baselines)")
      ("momentum", po::value(&o.momentum)->default_value(o.momentum), "--optimizer sgd: momentum in [0, 1)")
      ("weight-decay", po::value(&o.weight_decay)->default_value(o.weight_decay),
       "L2 coefficient added to the local gradients (torch weight_decay), >= 0")
      ("prox-mu", po::value(&o.prox_mu)->default_value(o.prox_mu),
       "FedProx (Li et al. 2020): local updates minimise the loss plus (mu/2) ||w - w_start||^2, w_start the "
       "model the update starts from (0 = off; any algorithm whose clients train a server model)")
      ("seed", po::value(&seeds.seed)->default_value(seeds.seed),
       "seed of model initialisation, training order and clustering (integer >= 0)")
      ("first-assignment", po::value(&o.first_assignment)->default_value(o.first_assignment),
       "evaluation | random: how clove/ifca assign clients in round 1")
      ("aggregation", po::value(&o.aggregation)->default_value(o.aggregation),
       "model | gradient: Option I model averaging (clients train tau epochs with Adam) or Option II "
       "gradient averaging (clients send their full-batch gradient; the server steps by --lr)")
      ("init", po::value(&o.init)->default_value(o.init),
       "different | same: initial parameters of the K models (paper Fig. 2)")
      ("participation", po::value(&o.participation)->default_value(o.participation),
       "fraction of clients sampled (seeded) to take part in each round, in (0, 1]")
      ("models", po::value(&o.models)->default_value(o.models),
       "K-hat: models clove/ifca keep (count; 0 = --clusters); with --select-k silhouette an upper bound")
      ("newcomers", po::value(&o.newcomers)->default_value(o.newcomers),
       "the last N clients of every cluster are absent until --join-round (PACFL Alg. 2 newcomers)")
      ("join-round", po::value(&o.join_round)->default_value(o.join_round),
       "1-based round in which the --newcomers first take part")
      ("cluster-layers", po::value(&o.cluster_layers)->default_value(o.cluster_layers),
       "weight sharing (IFCA Sec. 4.1): only the last N layers are per cluster, all others are shared "
       "and averaged over all clients, and the server sends one copy of them (0 = off)")
      ("stable-rounds", po::value(&o.stable_rounds)->default_value(o.stable_rounds),
       "clove: a client is stable once its model is unchanged for this many rounds; when "
       "--stable-fraction of the participants are stable, clove stops loss vectors and runs "
       "per-cluster FedAvg (0 = never)")
      ("stable-fraction", po::value(&o.stable_fraction)->default_value(o.stable_fraction),
       "share of stable participants that triggers the switch, in (0, 1]");

  po::options_description system("System");
  system.add_options()
      ("threads", po::value(&o.threads)->default_value(o.threads),
       "torch intra-op threads per rank (count; 0 = cores on the node / ranks on the node)")
      ("parallel-clients", po::value(&o.parallel_clients)->default_value(true)->implicit_value(true),
       "true: train a rank's clients on its --threads at once, each on one thread (plain local updates "
       "and FedPAC's clients, of models without dropout): faster, robust on shared cores, results equal those of --threads 1; "
       "false: clients one after another on all threads (low bits then depend on --threads)")
      ("client-batch", po::value(&o.client_batch)->default_value(o.client_batch),
       "clients whose local updates run as one client-batched model (stacked parameters, grouped "
       "convolutions, batched matrix products; cnn, mlp, linear, autoencoders): 0 = auto (all of a "
       "rank's clients up to 1024 on a GPU, 1 on a CPU), 1 = one client at a time, N = up to N at once. "
       "Equal to one at a time up to float rounding")
      ("precision", po::value(&o.precision)->default_value(o.precision),
       "fp32 | tf32 | bf16: arithmetic of the forward and backward passes on a GPU (--device cuda). "
       "fp32: float32 throughout (cuDNN's TF32 off too); tf32: float32 tensors, TF32 tensor-core matrix "
       "products and convolutions; bf16: autocast of matrix products and convolutions to bfloat16, "
       "float32 parameters, optimizer and losses")
      ("flush-denormal", po::value(&o.flush_denormal)->default_value(true)->implicit_value(true),
       "flush denormal floats to zero (x86 FTZ/DAZ) in every thread: late rounds' tiny gradients made "
       "local updates up to 3x slower; losses then agree to about 1e-5, accuracies and assignments "
       "were unchanged")
      ("server-hosts-clients", po::bool_switch(&o.server_hosts_clients),
       "with several ranks, rank 0 hosts a share of the clients besides serving (by default it only "
       "serves), for when the server's core would otherwise wait; same assignments, with the per-cluster "
       "sums added in another order (low bits)")
      ("device", po::value(&o.device)->default_value(o.device),
       "auto | cpu | cuda (cuda: GPU = local rank modulo GPUs on the node)")
      ("out", po::value(&o.out)->default_value(o.out), "HDF5 result file (path)")
      ("overwrite", po::bool_switch(&o.overwrite), "replace --out if it exists")
      ("skip-complete", po::bool_switch(&o.skip_complete),
       "exit 0 at once if --out holds a complete run (idempotent resubmission; with --overwrite an "
       "incomplete file is run again)")
      ("resume", po::bool_switch(&o.resume),
       "continue an interrupted run from <out>.checkpoint (the same options and rank count); without a "
       "checkpoint the run starts from round 1")
      ("checkpoint-every", po::value(&o.checkpoint_every)->default_value(o.checkpoint_every),
       "write <out>.checkpoint after every this many rounds (count; 0 = only when interrupted by a signal)")
      ("checkpoint-seconds", po::value(&o.checkpoint_seconds)->default_value(o.checkpoint_seconds),
       "also write it after the first round that ends this many seconds after the last checkpoint (0 = off)")
      ("round-timeout", po::value(&o.round_timeout)->default_value(o.round_timeout),
       "watchdog: seconds a rank may wait for another before the job ends with a message naming it; auto = "
       "30 min until the first round ends, then max(2 min, 10 x the median round time); off = never")
      ("quiet", po::bool_switch(&o.quiet), "do not print a line per round")
      ("dry-run", po::bool_switch(&o.dry_run),
       "load the data, build the partition and the models, print what the run would do, and exit "
       "without training or writing --out");

  po::options_description all;
  all.add(experiment).add(training).add(system);
  o.algorithm_options.for_each([&](const std::string& /*name*/, core::OptionGroup& group) {
    if (group.title().empty()) {
      return;
    }
    po::options_description own(group.title() + " options");
    OptionDescriber describer(own);
    group.visit(describer);
    all.add(own);
  });
  return all;
}

po::options_description command_line_only(std::string& config_file) {
  po::options_description generic("Generic");
  generic.add_options()
      ("help,h", "print this help and exit")
      ("version", "print version, git commit, LibTorch version and BLAS, and exit")
      ("config", po::value(&config_file), "config file of `name = value` lines (# comments); "
       "the command line wins");
  return generic;
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
                      (std::filesystem::is_directory(path) ? " but a directory" : std::string(", it does not exist")) +
                      "; give the path of a config file of `name = value` lines");
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    throw ConfigError("--config " + path + ": cannot open the file; check the path");
  }
  std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  if (text.rfind(kUtf8ByteOrderMark, 0) == 0) {
    text.erase(0, std::string(kUtf8ByteOrderMark).size());  // as Python's utf-8-sig: editors on Windows add it
  }
  std::istringstream lines(text);
  try {
    po::store(po::parse_config_file(lines, description, /*allow_unregistered=*/false), vm);
  } catch (const po::error& e) {
    throw ConfigError("config file " + path + ": " + e.what() + " (see cflrun --help for the options)");
  }
}

/// Stores `preset` words as one more source after the command line and the config file: Boost keeps
/// the values those already gave and replaces only defaults.
void store_preset(const std::vector<std::string>& preset, const po::options_description& description,
                  po::variables_map& vm) {
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

}  // namespace

ParsedCommandLine parse_command_line(int argc, const char* const argv[]) {
  ParsedCommandLine parsed;
  SeedHolders seeds;
  const auto run_description = describe(parsed.options, seeds);
  po::options_description everything;
  everything.add(command_line_only(parsed.options.config_file)).add(run_description);
  po::variables_map vm;
  try {
    // No positional arguments: a stray word is an error, not silently ignored.
    po::store(po::command_line_parser(argc, argv).options(everything).positional({}).run(), vm);
    if (vm.count("config") != 0) {
      store_config_file(vm["config"].as<std::string>(), run_description, vm);
    }
    if (vm.count("fidelity") != 0 && vm["fidelity"].as<std::string>() == "official") {
      store_preset(official_fidelity_preset(), run_description, vm);
    }
    po::notify(vm);
    require_finite(vm);
  } catch (const po::too_many_positional_options_error&) {
    throw ConfigError("unexpected word on the command line; every option starts with -- (see cflrun --help)");
  } catch (const po::error& e) {
    throw ConfigError(std::string(e.what()) + " (see cflrun --help)");
  }
  parsed.help = vm.count("help") != 0;
  parsed.version = vm.count("version") != 0;
  require(seeds.seed >= 0, "seed", "an integer >= 0", seeds.seed);
  parsed.options.seed = static_cast<std::uint64_t>(seeds.seed);
  if (vm.count("data-seed") != 0) {
    require(seeds.data_seed >= 0, "data-seed", "an integer >= 0", seeds.data_seed);
    parsed.options.data_seed = static_cast<std::uint64_t>(seeds.data_seed);
  }
  if (vm.count("pool-seed") != 0) {
    require(seeds.pool_seed >= 0, "pool-seed", "an integer >= 0", seeds.pool_seed);
    parsed.options.pool_seed = static_cast<std::uint64_t>(seeds.pool_seed);
  }
  if (!parsed.help && !parsed.version) {
    validate(parsed.options);
  }
  return parsed;
}

namespace {

/// A positive number of seconds in `text`, or 0 if it is not one.
double parse_seconds(const std::string& text) {
  try {
    std::size_t used = 0;
    const double seconds = std::stod(text, &used);
    return used == text.size() && seconds > 0.0 && std::isfinite(seconds) ? seconds : 0.0;
  } catch (const std::exception&) {
    return 0.0;
  }
}

/// Checks each option on its own; validate() then checks the combinations, so that an error names
/// the option the user gave.
void validate_each(const RunOptions& o) {
  algo::find_algorithm(o.algorithm);
  OptionValidator validator;
  auto algorithm_options = o.algorithm_options;
  algorithm_options.for_each([&](const std::string& /*name*/, core::OptionGroup& group) { group.visit(validator); });
  require_choice("mixture-sources", o.mixture_sources, {"rotation", "label_groups"});
  require(o.holdout_samples >= 1, "holdout-samples", "at least 1", o.holdout_samples);
  require(o.model_std >= 0.0, "model-std", ">= 0 (0 = unit sphere)", o.model_std);
  require(o.join_round >= 1, "join-round", "at least 1", o.join_round);
  data::find_dataset(o.dataset);
  require_choice("partition", o.partition, partition_choices());
  require_choice("model", o.model, {"auto", "cnn", "cifar_cnn", "mlp", "autoencoder", "conv_autoencoder", "linear"});
  require_choice("first-assignment", o.first_assignment, {"evaluation", "random"});
  require_choice("device", o.device, {"auto", "cpu", "cuda"});
  require_choice("precision", o.precision, {"fp32", "tf32", "bf16"});
  require(o.client_batch >= 0, "client-batch", ">= 0 (0 = auto, 1 = one client at a time)", o.client_batch);
  require_choice("aggregation", o.aggregation, {"model", "gradient"});
  require_choice("optimizer", o.optimizer, {"adam", "sgd"});
  require(o.momentum >= 0.0 && o.momentum < 1.0, "momentum", "in [0, 1)", o.momentum);
  require(o.momentum == 0.0 || o.optimizer == "sgd", "momentum", "0 unless --optimizer sgd", o.momentum);
  require(o.weight_decay >= 0.0, "weight-decay", ">= 0", o.weight_decay);
  require(o.prox_mu >= 0.0, "prox-mu", ">= 0 (0 = off)", o.prox_mu);
  require(o.prox_mu == 0.0 || o.aggregation == "model", "prox-mu",
          "0 with --aggregation gradient (a gradient at the start model has no proximal part)", o.prox_mu);
  require_choice("init", o.init, {"different", "same"});
  require_choice("fidelity", o.fidelity, {"cflrun", "official"});
  require(o.clusters >= 1, "clusters", "at least 1", o.clusters);
  require(o.clients_per_cluster >= 1, "clients-per-cluster", "at least 1", o.clients_per_cluster);
  require(o.train_samples >= 1, "train-samples", "at least 1", o.train_samples);
  require(o.test_samples >= 1, "test-samples", "at least 1", o.test_samples);
  require(o.min_cluster_train >= 0, "min-cluster-train", "0 (official) or a positive count", o.min_cluster_train);
  require(o.min_cluster_test >= 0, "min-cluster-test", "0 (official) or a positive count", o.min_cluster_test);
  require(o.rounds >= 1, "rounds", "at least 1", o.rounds);
  require(o.local_epochs >= 1, "local-epochs", "at least 1", o.local_epochs);
  require(o.batch_size >= 1, "batch-size", "at least 1", o.batch_size);
  require(o.lr > 0.0 && o.lr < 10.0, "lr", "in (0, 10)", o.lr);
  require(o.participation > 0.0 && o.participation <= 1.0, "participation", "in (0, 1]", o.participation);
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  require(o.threads >= 0 && o.threads <= cores, "threads",
          "0 (auto) or at most the " + std::to_string(cores) + " logical CPUs of this node", o.threads);
  require(o.models >= 0, "models", "0 (= --clusters) or a positive count", o.models);
  require(o.cluster_layers >= 0, "cluster-layers", "0 (off) or a positive count", o.cluster_layers);
  require(o.stable_rounds >= 0, "stable-rounds", "0 (off) or a positive count", o.stable_rounds);
  require(o.stable_fraction > 0.0 && o.stable_fraction <= 1.0, "stable-fraction", "in (0, 1]", o.stable_fraction);
  require(o.min_train_samples >= 0, "min-train-samples", ">= 0 (0 = --train-samples)", o.min_train_samples);
  require(o.newcomers >= 0, "newcomers", ">= 0", o.newcomers);
}

}  // namespace

void validate(const RunOptions& o) {
  validate_each(o);
  require(o.min_train_samples <= o.train_samples, "min-train-samples",
          "between 0 (= --train-samples) and --train-samples (" + std::to_string(o.train_samples) + ")",
          o.min_train_samples);
  require(o.newcomers < o.clients_per_cluster, "newcomers",
          "below --clients-per-cluster (" + std::to_string(o.clients_per_cluster) +
              "): some clients of every cluster must be there from the start",
          o.newcomers);
  const data::DatasetSource& dataset = data::find_dataset(o.dataset);
  require(dataset.accepts_partition(o.partition), "partition", dataset.partition_requirement(), o.partition);
  require(o.label_sets.empty() || o.partition == "label_skew_2", "label-sets",
          "left out unless --partition label_skew_2", o.label_sets);
  const bool class_split = o.partition == "label_skew_2" || o.partition == "label_skew_3";
  require(o.train_class_counts.empty() || class_split, "train-class-counts",
          "left out unless --partition label_skew_2 or label_skew_3", o.train_class_counts);
  require(o.test_class_counts.empty() || class_split, "test-class-counts",
          "left out unless --partition label_skew_2 or label_skew_3", o.test_class_counts);
  require(!o.unsupervised || dataset.supports_unsupervised(), "unsupervised",
          "off for --dataset " + o.dataset + " (it has labels only)", "--unsupervised");
  const bool autoencoder = o.effective_model() == "autoencoder" || o.effective_model() == "conv_autoencoder";
  require(autoencoder == o.unsupervised, "model",
          o.unsupervised ? "an autoencoder (autoencoder | conv_autoencoder) with --unsupervised"
                         : "a supervised model without --unsupervised (add --unsupervised for autoencoders)",
          o.effective_model());
  require(!o.out.empty(), "out", "a file path", "''");
  if (o.out.back() == '/' || std::filesystem::is_directory(o.out)) {
    throw ConfigError("--out must name a file, but " + o.out + " is a directory; give a file in it, e.g. --out " +
                      (std::filesystem::path(o.out) / "result.h5").lexically_normal().string());
  }
  require(o.checkpoint_every >= 0, "checkpoint-every", "0 (only on a signal) or a positive count of rounds",
          o.checkpoint_every);
  require(o.checkpoint_seconds >= 0.0, "checkpoint-seconds", "0 (off) or a positive number of seconds",
          o.checkpoint_seconds);
  require(o.round_timeout == "auto" || o.round_timeout == "off" || parse_seconds(o.round_timeout) > 0.0, "round-timeout",
          "auto, off or a positive number of seconds", o.round_timeout);
}

std::string help_text() {
  RunOptions defaults;
  SeedHolders seeds;
  std::string config_file;
  po::options_description everything(
      "cflrun: clustered federated learning experiments\n\n"
      "Usage: cflrun [options]            (one rank hosts the server and all clients)\n"
      "       mpirun -np P cflrun [options] (rank 0 = server, ranks 1..P-1 host the clients)\n\nOptions");
  everything.add(command_line_only(config_file)).add(describe(defaults, seeds));
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
  auto text = [](const auto& value) {
    std::ostringstream s;
    s.precision(17);
    s << value;
    return s.str();
  };
  std::vector<std::pair<std::string, std::string>> attributes{
          {"config", config_file},
          {"algorithm", algorithm},
          {"dataset", dataset},
          {"data-dir", data_dir},
          {"partition", partition},
          {"model", effective_model()},
          {"unsupervised", unsupervised ? "true" : "false"},
          {"dimension", text(dimension)},
          {"separation", text(separation)},
          {"noise", text(noise)},
          {"model-std", text(model_std)},
          {"clusters", text(clusters)},
          {"models", text(effective_models())},
          {"mixture-sources", mixture_sources},
          {"min-train-samples", text(min_train_samples)},
          {"holdout-samples", text(holdout_samples)},
          {"newcomers", text(newcomers)},
          {"join-round", text(join_round)},
          {"cluster-layers", text(cluster_layers)},
          {"stable-rounds", text(stable_rounds)},
          {"stable-fraction", text(stable_fraction)},
          {"clients-per-cluster", text(clients_per_cluster)},
          {"train-samples", text(train_samples)},
          {"test-samples", text(test_samples)},
          {"min-cluster-train", text(min_cluster_train)},
          {"min-cluster-test", text(min_cluster_test)},
          {"label-sets", label_sets},
          {"train-class-counts", train_class_counts},
          {"test-class-counts", test_class_counts},
          {"rounds", text(rounds)},
          {"local-epochs", text(local_epochs)},
          {"batch-size", text(batch_size)},
          {"lr", text(lr)},
          {"optimizer", optimizer},
          {"momentum", text(momentum)},
          {"weight-decay", text(weight_decay)},
          {"prox-mu", text(prox_mu)},
          {"seed", text(seed)},
          {"data-seed", text(effective_data_seed())},
          {"pool-seed", text(effective_pool_seed())},
          {"fidelity", fidelity},
          {"first-assignment", first_assignment},
          {"aggregation", aggregation},
          {"init", init},
          {"participation", text(participation)},
          {"threads", text(threads)},
          {"server-hosts-clients", server_hosts_clients ? "true" : "false"},
          {"parallel-clients", parallel_clients ? "true" : "false"},
          {"flush-denormal", flush_denormal ? "true" : "false"},
          {"client-batch", text(client_batch)},
          {"precision", precision},
          {"device", device},
          {"out", out},
          {"overwrite", overwrite ? "true" : "false"},
          {"skip-complete", skip_complete ? "true" : "false"},
          {"resume", resume ? "true" : "false"},
          {"checkpoint-every", text(checkpoint_every)},
          {"checkpoint-seconds", text(checkpoint_seconds)},
          {"round-timeout", round_timeout}};
  OptionRecorder recorder;
  auto own = algorithm_options;
  own.for_each([&](const std::string& /*name*/, core::OptionGroup& group) { group.visit(recorder); });
  for (auto& attribute : recorder.take()) {
    attributes.push_back(std::move(attribute));
  }
  return attributes;
}

}  // namespace cflrun::cli
