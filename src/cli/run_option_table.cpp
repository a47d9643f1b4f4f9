// The run options, each declared once (RunOptions::visit): flag, member (whose initial value is the
// default), help text, range or choices, kind and /config text. The order is --help's; the result
// file's /config records them in the same order (HDF5 lists attributes by name, and --resume and
// --skip-complete compare them by name).
#include <cflrun/cli/run_options.hpp>

#include <algorithm>
#include <thread>

#include "dataset_help.hpp"

#include <cflrun/data/dataset_registry.hpp>

namespace cflrun::cli {
namespace {

using core::OptionKind;
using core::Range;

/// The --algorithm help: every registered algorithm's name and summary.
std::string algorithm_help() {
  std::string help = "one of:";
  for (const auto& entry : algo::registered_algorithms()) {
    help += "\n  " + entry.name + ": " + entry.summary;
  }
  return help;
}

constexpr const char* kAtLeastOne = "at least 1";
constexpr const char* kSeedRange = "an integer >= 0";

/// [minimum, maximum] with either end open, e.g. (0, 1].
Range interval(double minimum, double maximum, bool minimum_open, bool maximum_open) {
  auto range = Range::between(minimum, maximum);
  range.min_open = minimum_open;
  range.max_open = maximum_open;
  return range;
}

void declare_data(RunOptions& o, core::OptionVisitor& v) {
  v.section("Experiment");
  v.declare({.flag = "algorithm", .help = algorithm_help()}, &o.algorithm);  // checked by algo::find_algorithm
  v.declare({.flag = "dataset", .help = dataset_help(), .choices = data::registered_dataset_names()},
            &o.dataset);
  // An experiment option: --skip-complete and --resume compare it (other files may hold other data),
  // but `cflrun report` groups runs over it (report/group_statistics.cpp).
  v.declare({.flag = "data-dir", .help = data_dir_help()},
            &o.data_dir);
  v.declare({.flag = "partition",
             .help = "label_skew_1 | concept_shift | feature_skew | label_skew_2 | label_skew_3 | label_skew_4 | "
                     "rotation | class_per_cluster (image datasets) | mixture_10_90 | mixture_30_70 | mixture_linear | "
                     "mixture_random (every client a mixture of --clusters source distributions, FedSoft Sec. 5)",
             .choices = partition_choices()},
            &o.partition);
  v.declare({.flag = "mixture-sources",
             .help = "image mixtures: rotation (source s = images rotated by s x 90 degrees) | label_groups (source "
                     "s = the s-th contiguous group of classes)",
             .choices = {"rotation", "label_groups"}},
            &o.mixture_sources);
  v.declare({.flag = "min-train-samples",
             .help = "mixtures: each client's training samples are uniform in [this, --train-samples] (count; 0 = "
                     "--train-samples; FedSoft: 100..200)",
             .range = Range::at_least(0),
             .expected = ">= 0 (0 = --train-samples)"},
            &o.min_train_samples);
  v.declare({.flag = "holdout-samples",
             .help = "mixtures: holdout samples per source on which every model is scored each round (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.holdout_samples);
  v.declare({.flag = "model",
             .help = model_help(),
             .choices = model_choices(),
             .recorded_as = o.effective_model()},
            &o.model);
  v.declare({.flag = "unsupervised",
             .help = "train autoencoders on the mean squared reconstruction error (paper App. C.2, Table 5)"},
            &o.unsupervised);
  v.declare({.flag = "dimension", .help = "linreg: input dimension d (count)"}, &o.dimension);
  v.declare({.flag = "separation",
             .help = "linreg: Delta, optimal models pairwise between Delta and 5 Delta apart on the unit sphere"},
            &o.separation);
  v.declare({.flag = "noise", .help = "linreg: sigma, standard deviation of the label noise"}, &o.noise);
  v.declare({.flag = "model-std",
             .help = "linreg: > 0 draws the optimal models from N(0, std^2 I) instead of the unit sphere "
                     "(FedSoft's synthetic data: 3.1623, i.e. variance 10; --separation is then unused)",
             .range = Range::at_least(0.0),
             .expected = ">= 0 (0 = unit sphere)"},
            &o.model_std);
}

void declare_clients(RunOptions& o, core::OptionVisitor& v) {
  v.declare({.flag = "clusters",
             .help = "K: ground-truth clusters, and models for clove/ifca unless --models (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.clusters);
  v.declare({.flag = "clients-per-cluster",
             .help = "clients in each cluster (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.clients_per_cluster);
  v.declare({.flag = "train-samples",
             .help = "training samples per client (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.train_samples);
  v.declare({.flag = "test-samples",
             .help = "test samples per client (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.test_samples);
  constexpr const char* kOfficialOrCount = "0 (official) or a positive count";
  v.declare({.flag = "min-cluster-train",
             .help = "label skew 2/3: minimum training samples per cluster pool (count; 0 = official 5 100 / 6 000)",
             .range = Range::at_least(0),
             .expected = kOfficialOrCount},
            &o.min_cluster_train);
  v.declare({.flag = "min-cluster-test",
             .help = "label skew 2/3: minimum test samples per cluster pool (count; 0 = official 510 / 750)",
             .range = Range::at_least(0),
             .expected = kOfficialOrCount},
            &o.min_cluster_test);
  v.declare({.flag = "label-sets",
             .help = "label skew 2: the clusters' label sets instead of drawn ones, sets separated by / and labels "
                     "by , (e.g. the official code's draw for seed 1: 2,4,6,9/0,2,3,4/0,4,6,7/3,4,5,6/2,3,6,7)",
             .show_default = false},
            &o.label_sets);
  v.declare({.flag = "train-class-counts",
             .help = "label skew 2/3: the train pools' class counts instead of the reserve + Dirichlet draw, one row "
                     "of C counts per cluster, rows separated by / and counts by , (e.g. the official code's draw for "
                     "seed 1)",
             .show_default = false},
            &o.train_class_counts);
  v.declare({.flag = "test-class-counts",
             .help = "label skew 2/3: the test pools' class counts, as --train-class-counts",
             .show_default = false},
            &o.test_class_counts);
  v.declare({.flag = "data-seed",
             .help = "seed of the data partition (integer >= 0; default: --seed)",
             .kind = OptionKind::kSeed,
             .range = Range::at_least(0),
             .expected = kSeedRange,
             .recorded_as = std::to_string(o.effective_data_seed())},
            &o.data_seed);
  v.declare({.flag = "pool-seed",
             .help = "seed of the cluster pools alone (which samples and labels each cluster holds), the client "
                     "split keeping --data-seed (integer >= 0; default: the data seed; --fidelity official: 1)",
             .kind = OptionKind::kSeed,
             .range = Range::at_least(0),
             .expected = kSeedRange,
             .recorded_as = std::to_string(o.effective_pool_seed())},
            &o.pool_seed);
  v.declare({.flag = "fidelity",
             .help = "cflrun | official: official = the official CLoVE code's choices where they depart from the "
                     "paper: k-means with 1 greedy k-means++ start, pools shared across seeds (--pool-seed 1), test "
                     "samples per client min(test pool / clients per cluster, --train-samples), concept shift pools "
                     "of 1 250 / 200 per class, CIFAR-10 in a random class order with feature skew as label "
                     "permutations (jobs/paper/README.md)",
             .choices = {"cflrun", "official"}},
            &o.fidelity);
}

void declare_optimizer(RunOptions& o, core::OptionVisitor& v) {
  v.section("Training");
  v.declare({.flag = "rounds",
             .help = "T: communication rounds (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.rounds);
  v.declare({.flag = "local-epochs",
             .help = "tau: epochs over the client's data per local update (count)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.local_epochs);
  v.declare({.flag = "batch-size",
             .help = "mini-batch size (samples)",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.batch_size);
  v.declare({.flag = "lr",
             .help = "learning rate of the local optimizer (paper text 1e-3; official code 1e-2 for the (F)MNIST CNN)",
             .range = interval(0.0, 10.0, /*minimum_open=*/true, /*maximum_open=*/true)},
            &o.lr);
  v.declare({.flag = "optimizer",
             .help = "adam | sgd: the local solver (sgd: PFLlib's and the CFL code's baselines)",
             .choices = {"adam", "sgd"}},
            &o.optimizer);
  v.declare({.flag = "momentum",
             .help = "--optimizer sgd: momentum in [0, 1)",
             .range = interval(0.0, 1.0, /*minimum_open=*/false, /*maximum_open=*/true)},
            &o.momentum);
  v.declare({.flag = "weight-decay",
             .help = "L2 coefficient added to the local gradients (torch weight_decay), >= 0",
             .range = Range::at_least(0.0)},
            &o.weight_decay);
  v.declare({.flag = "prox-mu",
             .help = "FedProx (Li et al. 2020): local updates minimise the loss plus (mu/2) ||w - w_start||^2, "
                     "w_start the model the update starts from (0 = off; any algorithm whose clients train a server "
                     "model)",
             .range = Range::at_least(0.0),
             .expected = ">= 0 (0 = off)"},
            &o.prox_mu);
  v.declare({.flag = "seed",
             .help = "seed of model initialisation, training order and clustering (integer >= 0)",
             .kind = OptionKind::kSeed,
             .range = Range::at_least(0),
             .expected = kSeedRange},
            &o.seed);
}

void declare_rounds(RunOptions& o, core::OptionVisitor& v) {
  const auto fraction = interval(0.0, 1.0, /*minimum_open=*/true, /*maximum_open=*/false);
  constexpr const char* kOffOrCount = "0 (off) or a positive count";
  v.declare({.flag = "first-assignment",
             .help = "evaluation | random: how clove/ifca assign clients in round 1",
             .choices = {"evaluation", "random"}},
            &o.first_assignment);
  v.declare({.flag = "aggregation",
             .help = "model | gradient: Option I model averaging (clients train tau epochs with Adam) or Option II "
                     "gradient averaging (clients send their full-batch gradient; the server steps by --lr)",
             .choices = {"model", "gradient"}},
            &o.aggregation);
  v.declare({.flag = "init",
             .help = "different | same: initial parameters of the K models (paper Fig. 2)",
             .choices = {"different", "same"}},
            &o.init);
  v.declare({.flag = "participation",
             .help = "fraction of clients sampled (seeded) to take part in each round, in (0, 1]",
             .range = fraction},
            &o.participation);
  v.declare({.flag = "models",
             .help = "K-hat: models clove/ifca keep (count; 0 = --clusters); with --select-k silhouette an upper bound",
             .range = Range::at_least(0),
             .expected = "0 (= --clusters) or a positive count",
             .recorded_as = std::to_string(o.effective_models())},
            &o.models);
  v.declare({.flag = "newcomers",
             .help = "the last N clients of every cluster are absent until --join-round (PACFL Alg. 2 newcomers)",
             .range = Range::at_least(0)},
            &o.newcomers);
  v.declare({.flag = "join-round",
             .help = "1-based round in which the --newcomers first take part",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.join_round);
  v.declare({.flag = "cluster-layers",
             .help = "weight sharing (IFCA Sec. 4.1): only the last N layers are per cluster, all others are shared "
                     "and averaged over all clients, and the server sends one copy of them (0 = off)",
             .range = Range::at_least(0),
             .expected = kOffOrCount},
            &o.cluster_layers);
  v.declare({.flag = "stable-rounds",
             .help = "clove: a client is stable once its model is unchanged for this many rounds; when "
                     "--stable-fraction of the participants are stable, clove stops loss vectors and runs "
                     "per-cluster FedAvg (0 = never)",
             .range = Range::at_least(0),
             .expected = kOffOrCount},
            &o.stable_rounds);
  v.declare({.flag = "stable-fraction",
             .help = "share of stable participants that triggers the switch, in (0, 1]",
             .range = fraction},
            &o.stable_fraction);
}

void declare_compute(RunOptions& o, core::OptionVisitor& v) {
  v.section("System");
  const int cores = static_cast<int>(std::max(1U, std::thread::hardware_concurrency()));
  v.declare({.flag = "threads",
             .help = "torch intra-op threads per rank (count; 0 = cores on the node / ranks on the node)",
             .kind = OptionKind::kPlacement,
             .range = Range::between(0, cores),
             .expected = "0 (auto) or at most the " + std::to_string(cores) + " logical CPUs of this node"},
            &o.threads);
  v.declare({.flag = "parallel-clients",
             .help = "true: train a rank's clients on its --threads at once, each on one thread (plain local updates "
                     "and FedPAC's clients, of models without dropout): faster, robust on shared cores, results equal "
                     "those of --threads 1; false: clients one after another on all threads (low bits then depend on "
                     "--threads)",
             .kind = OptionKind::kPlacement},
            &o.parallel_clients);
  v.declare({.flag = "client-batch",
             .help = "clients whose local updates run as one client-batched model (stacked parameters, grouped "
                     "convolutions, batched matrix products; cnn, mlp, linear, autoencoders): 0 = auto (all of a "
                     "rank's clients up to 1024 on a GPU, 1 on a CPU), 1 = one client at a time, N = up to N at once. "
                     "Equal to one at a time up to float rounding",
             .kind = OptionKind::kPlacement,
             .range = Range::at_least(0),
             .expected = ">= 0 (0 = auto, 1 = one client at a time)"},
            &o.client_batch);
  // precision, flush-denormal and server-hosts-clients change the results' low bits: experiment
  // options, which --skip-complete and --resume compare (`cflrun report` groups over
  // server-hosts-clients nonetheless, report/group_statistics.cpp).
  v.declare({.flag = "precision",
             .help = "fp32 | tf32 | bf16: arithmetic of the forward and backward passes on a GPU (--device cuda). "
                     "fp32: float32 throughout (cuDNN's TF32 off too); tf32: float32 tensors, TF32 tensor-core matrix "
                     "products and convolutions; bf16: autocast of matrix products and convolutions to bfloat16, "
                     "float32 parameters, optimizer and losses",
             .choices = {"fp32", "tf32", "bf16"}},
            &o.precision);
  v.declare({.flag = "flush-denormal",
             .help = "flush denormal floats to zero (x86 FTZ/DAZ) in every thread: late rounds' tiny gradients made "
                     "local updates up to 3x slower; losses then agree to about 1e-5, accuracies and assignments "
                     "were unchanged"},
            &o.flush_denormal);
  v.declare({.flag = "server-hosts-clients",
             .help = "with several ranks, rank 0 hosts a share of the clients besides serving (by default it only "
                     "serves), for when the server's core would otherwise wait; same assignments, with the "
                     "per-cluster sums added in another order (low bits)"},
            &o.server_hosts_clients);
  v.declare({.flag = "device",
             .help = "auto | cpu | cuda (cuda: GPU = local rank modulo GPUs on the node)",
             .kind = OptionKind::kPlacement,
             .choices = {"auto", "cpu", "cuda"}},
            &o.device);
}

void declare_files(RunOptions& o, core::OptionVisitor& v) {
  constexpr auto kBookkeeping = OptionKind::kBookkeeping;
  v.declare({.flag = "out", .help = "HDF5 result file (path)", .kind = kBookkeeping}, &o.out);
  v.declare({.flag = "overwrite", .help = "replace --out if it exists", .kind = kBookkeeping}, &o.overwrite);
  v.declare({.flag = "skip-complete",
             .help = "exit 0 at once if --out holds a complete run (idempotent resubmission; with --overwrite an "
                     "incomplete file is run again)",
             .kind = kBookkeeping},
            &o.skip_complete);
  v.declare({.flag = "resume",
             .help = "continue an interrupted run from <out>.checkpoint (the same options and rank count); without "
                     "a checkpoint the run starts from round 1",
             .kind = kBookkeeping},
            &o.resume);
  v.declare({.flag = "checkpoint-every",
             .help = "write <out>.checkpoint after every this many rounds (count; 0 = only when interrupted by a "
                     "signal)",
             .kind = kBookkeeping,
             .range = Range::at_least(0),
             .expected = "0 (only on a signal) or a positive count of rounds"},
            &o.checkpoint_every);
  v.declare({.flag = "checkpoint-seconds",
             .help = "also write it after the first round that ends this many seconds after the last checkpoint "
                     "(0 = off)",
             .kind = kBookkeeping,
             .range = Range::at_least(0.0),
             .expected = "0 (off) or a positive number of seconds"},
            &o.checkpoint_seconds);
  // auto | off | seconds: checked by validate().
  v.declare({.flag = "round-timeout",
             .help = "watchdog: seconds a rank may wait for another before the job ends with a message naming it; "
                     "auto = 30 min until the first round ends, then max(2 min, 10 x the median round time); off = "
                     "never",
             .kind = kBookkeeping},
            &o.round_timeout);
  v.declare({.flag = "quiet", .help = "do not print a line per round", .kind = kBookkeeping, .recorded = false},
            &o.quiet);
  v.declare({.flag = "dry-run",
             .help = "load the data, build the partition and the models, print what the run would do, and exit "
                     "without training or writing --out",
             .kind = kBookkeeping,
             .recorded = false},
            &o.dry_run);
}

}  // namespace

void RunOptions::visit(core::OptionVisitor& visitor) {
  visitor.section("Generic");  // command line only: a config file cannot name another
  visitor.declare({.flag = "config",
                   .help = "config file of `name = value` lines (# comments); the command line wins",
                   .kind = OptionKind::kBookkeeping,
                   .show_default = false},
                  &config_file);
  declare_data(*this, visitor);
  declare_clients(*this, visitor);
  declare_optimizer(*this, visitor);
  declare_rounds(*this, visitor);
  declare_compute(*this, visitor);
  declare_files(*this, visitor);
  algorithm_options.for_each([&](const std::string& /*name*/, core::OptionGroup& group) {
    if (!group.title().empty()) {  // untitled: an algorithm without options of its own
      visitor.section(group.title() + " options");
      group.visit(visitor);
    }
  });
}

}  // namespace cflrun::cli
