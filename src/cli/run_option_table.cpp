// The run options, each declared once (RunOptions::visit): flag, member (whose initial value is the
// default), help text, range or choices, kind and /config text. The order is --help's; the result
// file's /config records them in the same order (HDF5 lists attributes by name, and --resume and
// --skip-complete compare them by name). This file: the data and client options, and the order;
// run_option_table_training.cpp: the optimizer, round, compute and file options.
#include <cflrun/cli/run_options.hpp>

#include <algorithm>
#include <thread>

#include "dataset_help.hpp"
#include "run_option_groups.hpp"

#include <cflrun/data/dataset_registry.hpp>

namespace cflrun::cli {
namespace {

/// The --algorithm help: every registered algorithm's name and summary.
std::string algorithm_help() {
  std::string help = "one of:";
  for (const auto& entry : algo::registered_algorithms()) {
    help += "\n  " + entry.name + ": " + entry.summary;
  }
  return help;
}

}  // namespace

namespace detail {

using core::OptionKind;
using core::Range;

void declare_data(RunOptions& o, core::OptionVisitor& v) {
  v.section("Experiment");
  v.declare({.flag = "algorithm", .help = algorithm_help()},
            &o.algorithm);  // checked by algo::find_algorithm
  v.declare(
      {.flag = "dataset", .help = dataset_help(), .choices = data::registered_dataset_names()},
      &o.dataset);
  // An experiment option: --skip-complete and --resume compare it (other files may hold other
  // data), but `cflrun report` groups runs over it (report/group_statistics.cpp).
  v.declare({.flag = "data-dir", .help = data_dir_help()}, &o.data_dir);
  v.declare({.flag = "partition",
             .help = "label_skew_1 | concept_shift | feature_skew | label_skew_2 | label_skew_3 | "
                     "label_skew_4 | rotation | class_per_cluster (image datasets) | mixture_10_90 "
                     "| mixture_30_70 | mixture_linear | mixture_random (every client a mixture of "
                     "--clusters source distributions, FedSoft Sec. 5)",
             .choices = partition_choices()},
            &o.partition);
  v.choice({.flag = "mixture-sources",
            .help = "image mixtures: rotation (source s = images rotated by s x 90 degrees) | "
                    "label_groups (source s = the s-th contiguous group of classes)"},
           o.mixture_sources, data::kSourceKindWords);
  v.declare({.flag = "min-train-samples",
             .help = "mixtures: each client's training samples are uniform in [this, "
                     "--train-samples] (count; 0 = --train-samples; FedSoft: 100..200)",
             .range = Range::at_least(0),
             .expected = ">= 0 (0 = --train-samples)"},
            &o.min_train_samples);
  v.declare(
      {.flag = "holdout-samples",
       .help =
           "mixtures: holdout samples per source on which every model is scored each round (count)",
       .range = Range::at_least(1),
       .expected = kAtLeastOne},
      &o.holdout_samples);
  v.declare({.flag = "model",
             .help = model_help(),
             .choices = model_choices(),
             .recorded_as = o.effective_model()},
            &o.model);
  v.declare(
      {.flag = "unsupervised",
       .help =
           "train autoencoders on the mean squared reconstruction error (paper App. C.2, Table 5)"},
      &o.unsupervised);
  v.declare({.flag = "dimension", .help = "linreg: input dimension d (count)"}, &o.dimension);
  v.declare({.flag = "separation",
             .help = "linreg: Delta, optimal models pairwise between Delta and 5 Delta apart on "
                     "the unit sphere"},
            &o.separation);
  v.declare({.flag = "noise", .help = "linreg: sigma, standard deviation of the label noise"},
            &o.noise);
  v.declare(
      {.flag = "model-std",
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
             .help = "label skew 2/3: minimum training samples per cluster pool (count; 0 = "
                     "official 5 100 / 6 000)",
             .range = Range::at_least(0),
             .expected = kOfficialOrCount},
            &o.min_cluster_train);
  v.declare(
      {.flag = "min-cluster-test",
       .help =
           "label skew 2/3: minimum test samples per cluster pool (count; 0 = official 510 / 750)",
       .range = Range::at_least(0),
       .expected = kOfficialOrCount},
      &o.min_cluster_test);
  v.declare({.flag = "label-sets",
             .help = "label skew 2: the clusters' label sets instead of drawn ones, sets separated "
                     "by / and labels by , (e.g. the official code's draw for seed 1: "
                     "2,4,6,9/0,2,3,4/0,4,6,7/3,4,5,6/2,3,6,7)",
             .show_default = false},
            &o.label_sets);
  v.declare({.flag = "train-class-counts",
             .help = "label skew 2/3: the train pools' class counts instead of the reserve + "
                     "Dirichlet draw, one row of C counts per cluster, rows separated by / and "
                     "counts by , (e.g. the official code's draw for seed 1)",
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
             .help = "seed of the cluster pools alone (which samples and labels each cluster "
                     "holds), the client split keeping --data-seed (integer >= 0; default: the "
                     "data seed; --fidelity official: 1)",
             .kind = OptionKind::kSeed,
             .range = Range::at_least(0),
             .expected = kSeedRange,
             .recorded_as = std::to_string(o.effective_pool_seed())},
            &o.pool_seed);
  v.choice(
      {.flag = "fidelity",
       .help = "cflrun | official: official = the official CLoVE code's choices where they depart "
               "from the paper: k-means with 1 greedy k-means++ start, pools shared across seeds "
               "(--pool-seed 1), test samples per client min(test pool / clients per cluster, "
               "--train-samples), concept shift pools of 1 250 / 200 per class, CIFAR-10 in a "
               "random class order with feature skew as label permutations (jobs/paper/README.md)"},
      o.fidelity, kFidelityWords);
}

}  // namespace detail

void RunOptions::visit(core::OptionVisitor& visitor) {
  visit_run_options(visitor);
  algorithm_options.for_each([&](const std::string& /*name*/, core::OptionGroup& group) {
    if (!group.title().empty()) {  // untitled: an algorithm without options of its own
      visitor.section(group.title() + " options");
      group.visit(visitor);
    }
  });
}

void RunOptions::visit_run_options(core::OptionVisitor& visitor) {
  visitor.section("Generic");  // command line only: a config file cannot name another
  visitor.declare(
      {.flag = "config",
       .help = "config file of `name = value` lines (# comments); the command line wins",
       .kind = core::OptionKind::kBookkeeping,
       .show_default = false},
      &config_file);
  detail::declare_data(*this, visitor);
  detail::declare_clients(*this, visitor);
  detail::declare_optimizer(*this, visitor);
  detail::declare_rounds(*this, visitor);
  detail::declare_initial_models(*this, visitor);
  detail::declare_measurements(*this, visitor);
  detail::declare_population(*this, visitor);
  detail::declare_compute(*this, visitor);
  detail::declare_kernels(*this, visitor);
  detail::declare_files(*this, visitor);
}

}  // namespace cflrun::cli
