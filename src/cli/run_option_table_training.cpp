// The optimizer, round, compute and file options (RunOptions::visit, run_option_table.cpp).
#include "run_option_groups.hpp"

#include <algorithm>
#include <thread>

#include <cflrun/model/model_registry.hpp>

namespace cflrun::cli::detail {

using core::OptionKind;
using core::Range;

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
             .help = "learning rate of the local optimizer (paper text 1e-3; official code 1e-2 "
                     "for the (F)MNIST CNN)",
             .range = interval(0.0, 10.0, /*minimum_open=*/true, /*maximum_open=*/true)},
            &o.lr);
  v.choice({.flag = "optimizer",
            .help = "adam | sgd: the local solver (sgd: PFLlib's and the CFL code's baselines)"},
           o.optimizer, local::kSolverWords);
  v.declare({.flag = "momentum",
             .help = "--optimizer sgd: momentum in [0, 1)",
             .range = interval(0.0, 1.0, /*minimum_open=*/false, /*maximum_open=*/true)},
            &o.momentum);
  v.declare({.flag = "weight-decay",
             .help = "L2 coefficient added to the local gradients (torch weight_decay), >= 0",
             .range = Range::at_least(0.0)},
            &o.weight_decay);
  v.declare({.flag = "prox-mu",
             .help = "FedProx (Li et al. 2020): local updates minimise the loss plus (mu/2) ||w - "
                     "w_start||^2, w_start the model the update starts from (0 = off; any "
                     "algorithm whose clients train a server model)",
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
  v.choice({.flag = "first-assignment",
            .help = "evaluation | random: how clove/ifca assign clients in round 1"},
           o.first_assignment, kFirstAssignmentWords);
  v.choice({.flag = "aggregation",
            .help = "model | gradient: Option I model averaging (clients train tau epochs with "
                    "Adam) or Option II gradient averaging (clients send their full-batch "
                    "gradient; the server steps by --lr)"},
           o.aggregation, kAveragingWords);
  v.choice({.flag = "init",
            .help = "different | same: initial parameters of the K models (paper Fig. 2)"},
           o.init, kModelInitWords);
  v.declare({.flag = "participation",
             .help = "fraction of clients sampled (seeded) to take part in each round, in (0, 1]",
             .range = fraction},
            &o.participation);
  v.declare({.flag = "models",
             .help = "K-hat: models clove, ifca, fedsoft, flexcfl and fesem keep (count; 0 = "
                     "--clusters; the others refuse it); with --select-k silhouette an upper "
                     "bound",
             .range = Range::at_least(0),
             .expected = "0 (= --clusters) or a positive count",
             .recorded_as = std::to_string(o.effective_models())},
            &o.models);
  v.declare({.flag = "newcomers",
             .help = "the last N clients of every cluster are absent until --join-round (PACFL "
                     "Alg. 2 newcomers)",
             .range = Range::at_least(0)},
            &o.newcomers);
  v.declare({.flag = "join-round",
             .help = "1-based round in which the --newcomers first take part",
             .range = Range::at_least(1),
             .expected = kAtLeastOne},
            &o.join_round);
  v.declare(
      {.flag = "cluster-layers",
       .help =
           "weight sharing (IFCA Sec. 4.1): only the last N layers are per cluster, all others are "
           "shared and averaged over all clients, and the server sends one copy of them (0 = off)",
       .range = Range::at_least(0),
       .expected = kOffOrCount},
      &o.cluster_layers);
  v.declare({.flag = "stable-rounds",
             .help = "clove: a client is stable once its model is unchanged for this many rounds; "
                     "when --stable-fraction of the participants are stable, clove stops loss "
                     "vectors and runs per-cluster FedAvg (0 = never)",
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
  v.declare(
      {.flag = "threads",
       .help = "torch intra-op threads per rank (count; 0 = cores on the node / ranks on the node)",
       .kind = OptionKind::kPlacement,
       .range = Range::between(0, cores),
       .expected =
           "0 (auto) or at most the " + std::to_string(cores) + " logical CPUs of this node"},
      &o.threads);
  v.declare({.flag = "parallel-clients",
             .help = "true: train a rank's clients on its --threads at once, each on one thread "
                     "(plain local updates and FedPAC's clients): "
                     "faster, robust on shared cores, results equal those of --threads 1; false: "
                     "clients one after another on all threads (low bits then depend on --threads)",
             .kind = OptionKind::kPlacement},
            &o.parallel_clients);
  v.declare(
      {.flag = "client-batch",
       .help =
           "clients whose local updates run as one client-batched model (stacked parameters, "
           "grouped convolutions, batched matrix products; --model " +
           model::model_names_where(
               [](const model::ModelEntry& entry) { return entry.forms.client_batched; }) +
           "): 0 = auto (all of a rank's clients up to 1024 on a GPU, 1 on a CPU), 1 = one client "
           "at a time, N = up to N at once. Equal to one at a time up to float rounding",
       .kind = OptionKind::kPlacement,
       .range = Range::at_least(0),
       .expected = ">= 0 (0 = auto, 1 = one client at a time)"},
      &o.client_batch);
  // precision, flush-denormal and server-hosts-clients change the results' low bits: experiment
  // options, which --skip-complete and --resume compare (`cflrun report` groups over
  // server-hosts-clients nonetheless, report/group_statistics.cpp).
  v.choice(
      {.flag = "precision",
       .help =
           "fp32 | tf32 | bf16: arithmetic of the forward and backward passes on a GPU (--device "
           "cuda). fp32: float32 throughout (cuDNN's TF32 off too); tf32: float32 tensors, TF32 "
           "tensor-core matrix products and convolutions; bf16: autocast of matrix products and "
           "convolutions to bfloat16, float32 parameters, optimizer and losses"},
      o.precision, kPrecisionWords);
  v.declare({.flag = "flush-denormal",
             .help = "flush denormal floats to zero (x86 FTZ/DAZ) in every thread: late rounds' "
                     "tiny gradients made local updates up to 3x slower; losses then agree to "
                     "about 1e-5, accuracies and assignments were unchanged"},
            &o.flush_denormal);
  v.declare(
      {.flag = "server-hosts-clients",
       .help = "with several ranks, rank 0 hosts a share of the clients besides serving (by "
               "default it only serves), for when the server's core would otherwise wait; same "
               "assignments, with the per-cluster sums added in another order (low bits)"},
      &o.server_hosts_clients);
  v.choice({.flag = "device",
            .help = "auto | cpu | cuda (cuda: GPU = local rank modulo GPUs on the node)",
            .kind = OptionKind::kPlacement},
           o.device, kDeviceChoiceWords);
}

void declare_initial_models(RunOptions& o, core::OptionVisitor& v) {
  v.choice({.flag = "init-scheme",
            .help = "libtorch | unit_sphere: how an initial model is drawn; unit_sphere (--model "
                    "linear only): theta = g / |g|, g ~ N(0, I_d), as the official CLoVE code's "
                    "linear regression"},
           o.init_scheme, kInitSchemeWords);
}

void declare_measurements(RunOptions& o, core::OptionVisitor& v) {
  v.declare({.flag = "train-accuracy",
             .help = "also record /rounds/accuracy_train: the clients' accuracy on their training "
                     "samples at the round's start (the CLoVE notebook's FedAvg accuracy)"},
            &o.train_accuracy);
}

void declare_kernels(RunOptions& o, core::OptionVisitor& v) {
  v.declare({.flag = "fused-kernels",
             .help = "true: cflrun's own CPU kernels where it has them (a 5x5 convolution fused "
                     "with ReLU and 2x2 max-pooling, equal to LibTorch's within float rounding; "
                     "ReLU fused with 2x2 max-pooling, bit-identical: --model " +
                     model::model_names_where(
                         [](const model::ModelEntry& entry) { return entry.forms.cpu_kernels; }) +
                     "); false: LibTorch's everywhere (the reference)",
             .kind = OptionKind::kPlacement},
            &o.fused_kernels);
}

void declare_files(RunOptions& o, core::OptionVisitor& v) {
  constexpr auto kBookkeeping = OptionKind::kBookkeeping;
  v.declare({.flag = "out", .help = "HDF5 result file (path)", .kind = kBookkeeping}, &o.out);
  v.declare({.flag = "overwrite", .help = "replace --out if it exists", .kind = kBookkeeping},
            &o.overwrite);
  v.declare({.flag = "skip-complete",
             .help = "exit 0 at once if --out holds a complete run (idempotent resubmission; with "
                     "--overwrite an incomplete file is run again)",
             .kind = kBookkeeping},
            &o.skip_complete);
  v.declare({.flag = "resume",
             .help = "continue an interrupted run from <out>.checkpoint (the same options and rank "
                     "count); without a checkpoint the run starts from round 1",
             .kind = kBookkeeping},
            &o.resume);
  v.declare({.flag = "checkpoint-every",
             .help = "write <out>.checkpoint after every this many rounds (count; 0 = only when "
                     "interrupted by a signal)",
             .kind = kBookkeeping,
             .range = Range::at_least(0),
             .expected = "0 (only on a signal) or a positive count of rounds"},
            &o.checkpoint_every);
  v.declare({.flag = "checkpoint-seconds",
             .help = "also write it after the first round that ends this many seconds after the "
                     "last checkpoint (0 = off)",
             .kind = kBookkeeping,
             .range = Range::at_least(0.0),
             .expected = "0 (off) or a positive number of seconds"},
            &o.checkpoint_seconds);
  // auto | off | seconds: checked by validate().
  v.declare({.flag = "round-timeout",
             .help = "watchdog: seconds a rank may wait for another before the job ends with a "
                     "message naming it; auto = 30 min until the first round ends, then max(2 min, "
                     "10 x the median round time); off = never",
             .kind = kBookkeeping},
            &o.round_timeout);
  v.declare({.flag = "quiet",
             .help = "do not print a line per round",
             .kind = kBookkeeping,
             .recorded = false},
            &o.quiet);
  v.declare({.flag = "dry-run",
             .help = "load the data, build the partition and the models, print what the run would "
                     "do, and exit without training or writing --out",
             .kind = kBookkeeping,
             .recorded = false},
            &o.dry_run);
}

}  // namespace cflrun::cli::detail
