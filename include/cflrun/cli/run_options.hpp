#pragma once
/// @file
/// The options of one experiment run, from the command line and an optional config file.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <cflrun/algo/registry.hpp>
#include <cflrun/cli/run_choices.hpp>
#include <cflrun/data/mixture.hpp>
#include <cflrun/local/solver.hpp>
#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli {

/// Every setting of a run. Defaults are the CLoVE paper's text (Sec. 5.1: Adam, learning rate
/// 1e-3, batch 100, tau = 1 local epoch, T = 100 rounds); jobs/ configs set the official code's
/// values where they differ (learning rate 1e-2 for the MNIST/FMNIST CNN). A member's initial value
/// is its option's default; its flag, help text, range and kind are declared once, in visit().
struct RunOptions {
  std::string config_file;  ///< --config: path of a `key = value` file; "" for none.
  std::string algorithm =
      "clove";  ///< --algorithm: a registered algorithm (algo::registered_algorithms()).
  /// Every registered algorithm's own options (--kmeans-restarts, --pacfl-beta, --cfl-eps1, ...),
  /// declared in the algorithm's options struct (algo::CloveOptions, ...).
  algo::AlgorithmOptionSet algorithm_options;
  std::string dataset = "fmnist";  ///< --dataset: a registered dataset (data/dataset_registry.hpp).
  std::string data_dir;            ///< --data-dir: "" means the dataset's default directory.
  std::string partition =
      "label_skew_1";  ///< --partition: label_skew_1..4 | concept_shift | feature_skew | rotation |
                       ///< class_per_cluster (images only) | mixture_10_90 | mixture_30_70 |
                       ///< mixture_linear | mixture_random.
  std::string model = "auto";  ///< --model: auto or a registered model's name
                               ///< (model/model_registry.hpp).
  bool unsupervised =
      false;  ///< --unsupervised: train autoencoders on the MSE reconstruction loss (App. C.2).
  std::int64_t dimension = 20;  ///< --dimension: d of --dataset linreg.
  double separation =
      1.0;  ///< --separation: Delta of --dataset linreg (pairwise distances in [Delta, 5 Delta]).
  double noise = 0.001;    ///< --noise: sigma of the label noise of --dataset linreg.
  double model_std = 0.0;  ///< --model-std: linreg optimal models ~ N(0, std^2 I); 0 = unit sphere.
  int clusters = 5;        ///< --clusters: K, ground-truth clusters (and models unless --models).
  int models = 0;          ///< --models: K-hat, models the server keeps; 0 = --clusters.
  data::SourceKind mixture_sources =
      data::SourceKind::kRotation;      ///< --mixture-sources: rotation | label_groups (image
                                        ///< mixtures).
  std::int64_t min_train_samples = 0;   ///< --min-train-samples: mixtures draw n_k in [this,
                                        ///< --train-samples]; 0 = --train-samples.
  std::int64_t holdout_samples = 1000;  ///< --holdout-samples: per source of a mixture partition.
  int newcomers = 0;   ///< --newcomers: the last N clients of every cluster join late.
  int join_round = 2;  ///< --join-round: 1-based round in which newcomers first take part.
  // A changing population (issue 45; run/population/population_schedule.hpp).
  std::string changes;   ///< --changes: drift/shift/appear/merge/split events; "" = none.
  double dropout = 0.0;  ///< --dropout: per-client per-round probability of being away, [0, 1).
  std::string availability_periods;  ///< --availability-periods: "on=R off=R" mean lengths.
  std::string availability_trace;    ///< --availability-trace: client,first,last file; "" = none.
  std::string client_speeds = "equal";  ///< --client-speeds: equal | lognormal S | uniform A B.
  double round_deadline = 0.0;  ///< --round-deadline: simulated seconds per round; 0 = none.
  double step_seconds = 0.1;    ///< --step-seconds: simulated seconds of one step at speed 1.
  StragglerWork straggler_work = StragglerWork::kDrop;  ///< --straggler-work: drop | partial.
  int cluster_layers =
      0;  ///< --cluster-layers: IFCA weight sharing, last layers kept per cluster; 0 = off.
  int stable_rounds =
      0;  ///< --stable-rounds: rounds a client's model must stay unchanged to be stable; 0 = off.
  double stable_fraction =
      1.0;  ///< --stable-fraction: share of stable participants that switches clove to FedAvg.
  int clients_per_cluster = 5;       ///< --clients-per-cluster.
  std::int64_t train_samples = 500;  ///< --train-samples: per client.
  std::int64_t test_samples = 400;   ///< --test-samples: per client.
  std::int64_t min_cluster_train =
      0;  ///< --min-cluster-train: label skew 2/3 minimum train pool per cluster; 0 = official.
  std::int64_t min_cluster_test = 0;  ///< --min-cluster-test: same for the test pool; 0 = official.
  std::string
      label_sets;  ///< --label-sets: label skew 2's sets, "2,4,6,9/0,2,3,4/..."; "" = drawn.
  std::string train_class_counts;  ///< --train-class-counts: label skew 2/3 train pools' class
                                   ///< counts, K rows of C; "" = drawn.
  std::string test_class_counts;   ///< --test-class-counts: same for the test pools.
  int rounds = 100;                ///< --rounds: T.
  int local_epochs = 1;            ///< --local-epochs: tau, epochs per local update.
  int batch_size = 100;            ///< --batch-size: samples per mini-batch.
  double lr = 1e-3;                ///< --lr: learning rate of the local optimizer.
  local::Solver optimizer = local::Solver::kAdam;  ///< --optimizer: adam | sgd, the local solver.
  double momentum = 0.0;                           ///< --momentum: SGD momentum in [0, 1).
  double weight_decay = 0.0;  ///< --weight-decay: L2 coefficient of the local solver.
  double prox_mu =
      0.0;  ///< --prox-mu: FedProx's (mu/2)||w - w_start||^2 on local updates; 0 = off.
  std::uint64_t seed = 1;                  ///< --seed: model initialisation, training, clustering.
  std::optional<std::uint64_t> data_seed;  ///< --data-seed: data partition; defaults to --seed.
  std::optional<std::uint64_t> pool_seed;  ///< --pool-seed: cluster pools only; defaults to the
                                           ///< data seed (official fidelity: 1).
  /// --fidelity: cflrun | official. official = the official CLoVE code's choices where they differ
  /// (official_fidelity_preset() and data::PartitionSpec::official_fidelity; jobs/paper/README.md).
  Fidelity fidelity = Fidelity::kCflrun;
  /// --first-assignment: evaluation | random.
  FirstAssignment first_assignment = FirstAssignment::kEvaluation;
  Averaging aggregation = Averaging::kModel;  ///< --aggregation: model (I) | gradient (II).
  ModelInit init = ModelInit::kDifferent;     ///< --init: different | same initial K models.
  /// --init-scheme: libtorch | unit_sphere (--model linear only: the official CLoVE code's linear
  /// regression draws each initial theta as N(0, I_d) normalised to unit length).
  InitScheme init_scheme = InitScheme::kLibtorch;
  double participation = 1.0;  ///< --participation: fraction of clients per round (Alg. 1 line 2).
  int threads = 0;             ///< --threads: torch intra-op threads per rank; 0 = auto.
  /// --train-accuracy: also record each client's accuracy on its training samples at the start of
  /// every round (/rounds/accuracy_train).
  bool train_accuracy = false;
  bool server_hosts_clients =
      false;  ///< --server-hosts-clients: rank 0 hosts clients too (run/rank_layout.hpp).
  bool parallel_clients =
      true;  ///< --parallel-clients: train a rank's clients on its threads at once.
  bool flush_denormal =
      true;  ///< --flush-denormal: denormal floats flushed to zero in every thread.
  Precision precision = Precision::kFp32;  ///< --precision: fp32 | tf32 | bf16 (GPU arithmetic).
  int client_batch =
      0;  ///< --client-batch: clients per client-batched local update; 0 = auto, 1 = off.
  bool fused_kernels = true;  ///< --fused-kernels: cflrun's CPU kernels (model/cpu_kernels.hpp).
  DeviceChoice device = DeviceChoice::kAuto;  ///< --device: auto | cpu | cuda.
  std::string out = "results/run.h5";         ///< --out: HDF5 result file.
  bool overwrite = false;                     ///< --overwrite: replace an existing --out file.
  bool skip_complete =
      false;  ///< --skip-complete: exit 0 at once if --out is a complete run of these options.
  bool resume = false;       ///< --resume: continue from <out>.checkpoint if there is one.
  int checkpoint_every = 1;  ///< --checkpoint-every: rounds between checkpoints; 0 = none.
  double checkpoint_seconds =
      0.0;  ///< --checkpoint-seconds: also after this many seconds; 0 = off.
  std::string round_timeout =
      "auto";            ///< --round-timeout: auto | off | seconds a rank may wait for another.
  bool quiet = false;    ///< --quiet: no per-round lines.
  bool dry_run = false;  ///< --dry-run: load data, build partition and models, print, exit.

  /// The data seed in force: --data-seed if given, else --seed.
  std::uint64_t effective_data_seed() const { return data_seed.value_or(seed); }

  /// The seed of the cluster pools in force: --pool-seed if given, else the data seed.
  std::uint64_t effective_pool_seed() const { return pool_seed.value_or(effective_data_seed()); }

  /// Whether --fidelity official is in force.
  bool official_fidelity() const { return fidelity == Fidelity::kOfficial; }

  /// The model in force: --model, or for auto the --dataset source's default_model(--unsupervised)
  /// (linear for linreg; with --unsupervised conv_autoencoder for cifar10 and autoencoder
  /// otherwise; cifar_cnn for cifar10, cnn otherwise).
  /// @throws ConfigError for --model auto with an unknown --dataset (data::find_dataset).
  std::string effective_model() const;

  /// K-hat, the number of models clove and ifca keep: --models if set, else --clusters.
  int effective_models() const { return models > 0 ? models : clusters; }

  /// Every recorded option (all but --quiet and --dry-run; the options of --algorithm last, no
  /// other algorithm's) as (name, value text), in visit() order, for the result file's /config
  /// group: numbers with 17 significant digits, switches as true | false, --model and --models as
  /// in force, the data and pool seeds as in force. Files of builds before 2026-11-28 also hold
  /// every other algorithm's options; readers ignore those (run::config_differences). A changing
  /// population's options (--changes, --dropout, ...) are recorded only where not at their
  /// default.
  /// @throws ConfigError if --algorithm names no registered algorithm.
  std::vector<std::pair<std::string, std::string>> to_attributes() const;

  /// Declares every run option to `visitor`, in --help order: core::OptionVisitor::section for
  /// "Generic" (--config, command line only), "Experiment", "Training", "System" and each
  /// algorithm's options, and core::OptionVisitor::declare once per option with its flag, help,
  /// kind, range or choices and the member holding it (src/cli/run_option_table.cpp). The single
  /// place a run option is declared: a new option is a member here and one declaration there.
  void visit(core::OptionVisitor& visitor);
  /// Declares the run's own options as visit() does, without any algorithm's.
  void visit_run_options(core::OptionVisitor& visitor);
};

/// What the command line asked for.
struct ParsedCommandLine {
  RunOptions options;
  bool help = false;     ///< --help was given: print `help_text()` and exit 0.
  bool version = false;  ///< --version was given: print version facts and exit 0.
};

/// Parses the command line, then the --config file if given (the command line wins), then
/// validates every value.
/// @throws ConfigError for an unknown option, a malformed value, a missing or unreadable config
///         file, or a value out of range; the message names the option and the accepted values.
ParsedCommandLine parse_command_line(int argc, const char* const argv[]);

/// The options `--fidelity official` sets unless given on the command line or in the config file,
/// as `--name=value` words: --kmeans-restarts=1 and --kmeans-init=greedy (scikit-learn's KMeans
/// with n_init "auto" as the official code calls it, clove-official-setup.md Sec. 11) and
/// --pool-seed=1 (the official code draws the cluster pools once, with the first seed's state: Sec.
/// 0 step 4).
std::vector<std::string> official_fidelity_preset();

/// The --help text: every option with its default and unit.
std::string help_text();

/// Checks value ranges and choices that do not depend on the data.
/// @throws ConfigError naming the first offending option.
void validate(const RunOptions& options);

}  // namespace cflrun::cli
