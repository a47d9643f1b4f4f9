// Set-up of an experiment on every rank: compute, data, the algorithm's set-up round, models,
// result file.
#include "experiment_state.hpp"

#include <cflrun/data/dataset_registry.hpp>
#include <cflrun/model/cpu_kernels.hpp>

namespace cflrun::run::detail {
namespace {

/// --train-accuracy scores a client's assigned server model on its training labels: refused where
/// there are no labels or the algorithm scores the clients' own models.
void check_train_accuracy(const cli::RunOptions& options, const algo::Algorithm& algorithm) {
  if (!options.train_accuracy) {
    return;
  }
  if (objective_of(options) != model::Objective::kClassification) {
    throw ConfigError(
        "--train-accuracy counts correctly classified training samples, but this run has no class "
        "labels (--unsupervised or a regression dataset); remove --train-accuracy");
  }
  if (algorithm.traits().evaluates_local_models) {
    throw ConfigError("--train-accuracy scores the server model each client is assigned, but " +
                      options.algorithm +
                      " scores the clients' own models; remove --train-accuracy");
  }
}

/// --init-scheme unit_sphere draws the whole flat state on the unit sphere: meaningful for the
/// linear model's one weight vector (the official CLoVE code's), not for layers of other scales.
void check_unit_sphere_init(model::Architecture architecture) {
  if (architecture != model::Architecture::kLinear) {
    throw ConfigError(
        "--init-scheme unit_sphere draws one unit-norm parameter vector, which only "
        "--model linear (--dataset linreg) has; remove --init-scheme or use "
        "--init-scheme libtorch");
  }
}

}  // namespace

void RunSetUp::set_up_compute() {
  run_.threads = threads_per_rank(run_.options.threads, run_.comm.local_size());
  torch::set_num_threads(run_.threads);
  // FTZ/DAZ of this thread; threads made later (LibTorch's OpenMP pool, the clients' training
  // threads) inherit its floating-point environment. Measured on jobs/fmnist_label_skew1.cfg: the
  // local updates took 0.35 s at round 2 and 1.16 s at round 91 with denormals, 0.38-0.44 s
  // throughout without; accuracies and assignments identical over 100 rounds, losses within 2e-5.
  at::globalContext().setFlushDenormal(run_.options.flush_denormal);
  model::set_fused_kernels(run_.options.fused_kernels);
  run_.device = select_device(run_.options.device, run_.comm.local_rank());
  set_up_precision(run_.options.precision, run_.device);
  if (run_.comm.is_root() && !run_.options.dry_run) {
    check_output_files();
    run_.checkpointer.read_if_resuming();
  }
}

void RunSetUp::check_output_files() const {
  if (!run_.options.overwrite && std::filesystem::exists(run_.paths.out)) {
    throw ConfigError("--out " + run_.options.out +
                      " already exists; pass --overwrite to replace it (only when this "
                      "run completes) or choose another --out");
  }
  if (run_.options.resume || run_.options.overwrite) {
    return;
  }
  if (std::filesystem::exists(run_.paths.checkpoint)) {
    throw ConfigError("an interrupted run left " + run_.paths.partial.string() +
                      " and its checkpoint; pass --resume to "
                      "continue it, or --overwrite to start again");
  }
  if (std::filesystem::exists(run_.paths.partial)) {
    throw ConfigError("a run that failed or was killed before its first checkpoint left " +
                      run_.paths.partial.string() +
                      " (nothing to resume); pass --overwrite to start again");
  }
}

void RunSetUp::set_up_data() {
  run_.architecture =
      architecture_of(run_.options);  // an unknown --model fails before any data is read
  auto population = population_spec(run_.options);  // bad population options fail before data
  const auto data = std::make_shared<const data::ClientData>(load_client_data(run_.options));
  run_.network_shape = network_shape_of(*data);
  run_.num_clients = data->num_clients();
  run_.recorder.set_up(*data,
                       run_.device);  // the true clusters; rank 0 also the sources' holdout sets
  const auto hosted = run_.hosted_by(run_.comm.rank());
  run_.clients = std::make_unique<ClientGroup>(*data, hosted.first, hosted.end,
                                               objective_of(run_.options), run_.device);
  if (population.changing()) {
    run_.population_spec = std::move(population);
    run_.client_data = data;
  }
}

void RunSetUp::set_up_population() {
  if (!run_.population_spec) {
    return;
  }
  local::LocalUpdateSettings settings;  // the steps of a plain local update: the deadline's work
  settings.local_epochs = run_.options.local_epochs;
  settings.batch_size = run_.options.batch_size;
  std::vector<std::int64_t> steps;
  for (const auto n : run_.train_samples) {
    steps.push_back(local::local_steps(n, settings));
  }
  run_.population =
      std::make_unique<PopulationTracker>(*run_.population_spec, run_.client_data, steps);
  run_.population->move_hosted_clients(0, run_.clients->hosted());
  run_.clients->hosted().set_step_limits(run_.population->schedule().step_limits());
  run_.recorder.set_population(&run_.population->schedule());
}

void RunSetUp::share_train_samples() {
  const auto& hosted = run_.clients->hosted().train().counts();
  auto counts = run_.comm.gather(std::vector<double>(hosted.begin(), hosted.end()));
  counts.resize(static_cast<std::size_t>(run_.num_clients));
  run_.comm.broadcast(counts.data(), static_cast<std::int64_t>(counts.size()));
  run_.train_samples.assign(counts.begin(), counts.end());
}

algo::AlgorithmContext RunSetUp::algorithm_context() const {
  algo::AlgorithmContext context;
  context.num_clients = run_.num_clients;
  context.num_models = run_.options.effective_models();
  context.models_given = run_.options.models > 0;
  context.train_samples = run_.train_samples;
  context.seed = run_.options.seed;
  context.random_first_assignment = run_.options.first_assignment == cli::FirstAssignment::kRandom;
  context.gradient_averaging = run_.options.aggregation == cli::Averaging::kGradient;
  context.participation = run_.options.participation;
  context.newcomers = run_.options.newcomers;
  context.absences = absence_option(run_.options);
  context.cluster_layers = run_.options.cluster_layers;
  context.stable_rounds = run_.options.stable_rounds;
  context.batch_size = run_.options.batch_size;
  context.optimizer = run_.options.optimizer;
  context.num_classes = objective_of(run_.options) == model::Objective::kClassification
                            ? run_.network_shape.num_classes
                            : 0;
  context.classifier_with_head = context.num_classes > 0 && model::has_head(run_.architecture);
  context.feature_size = context.classifier_with_head ? model::feature_size(run_.architecture) : 0;
  context.sample_size = run_.network_shape.sample_size();
  return context;
}

void RunSetUp::set_up_algorithm() {
  run_.algorithm = algo::make_algorithm(run_.options.algorithm, run_.options.algorithm_options,
                                        algorithm_context());
  if (run_.options.prox_mu > 0.0 && run_.algorithm->traits().proximal_mu > 0.0) {
    throw ConfigError("--prox-mu (FedProx) cannot be combined with " + run_.options.algorithm +
                      ", which has its own proximal term; remove --prox-mu");
  }
  check_train_accuracy(run_.options, *run_.algorithm);
  if (run_.algorithm->traits().local_lr_decay != 1.0 &&
      !run_.algorithm->traits().keeps_optimizers) {
    throw Error(run_.options.algorithm +
                ": a local learning-rate decay is kept with the clients' optimizers; the algorithm "
                "must declare keeps_optimizers");
  }
  run_.num_models = run_.algorithm->num_models();
  const auto side = run_.algorithm->client_side();
  if (run_.options.straggler_work == cli::StragglerWork::kPartial &&
      (side.procedure || run_.options.aggregation == cli::Averaging::kGradient)) {
    throw ConfigError(
        "--straggler-work partial sends the steps of the standard local update a "
        "straggler finished, but " +
        (side.procedure ? run_.options.algorithm + " has its own client procedure"
                        : std::string("--aggregation gradient sends a gradient")) +
        "; use --straggler-work drop");
  }
  run_.procedure = side.procedure ? side.procedure : std::make_shared<algo::StandardClient>();
  run_.statistic = side.statistic;
  const auto hosted = run_.hosted_by(run_.comm.rank());
  run_.stability =
      std::make_unique<StabilityMonitor>(run_.comm, hosted.first, hosted.end,
                                         run_.options.stable_rounds, run_.options.stable_fraction);
}

ClientRange RunState::hosted_by(int rank) const {
  return hosted_clients(rank, comm.size(), num_clients, options.server_hosts_clients);
}

bool RunState::is_newcomer(int client) const {
  return client % options.clients_per_cluster >= options.clients_per_cluster - options.newcomers;
}

std::vector<int> RunSetUp::initial_clients() const {
  std::vector<int> initial;
  for (int c = 0; c < run_.num_clients; ++c) {
    const bool present =
        !run_.population || run_.population->schedule().available(0)[static_cast<std::size_t>(c)];
    if (!run_.is_newcomer(c) && present) {
      initial.push_back(c);
    }
  }
  return initial;
}

void RunSetUp::set_up_round() {
  std::vector<algo::ClientQuery> queries;
  collective_step(run_.comm, [&] {
    if (run_.comm.is_root()) {
      queries = run_.algorithm->set_up_queries(initial_clients());
    }
  });
  queries = share_queries(run_.comm, queries);
  if (queries.empty()) {
    return;
  }
  std::vector<std::vector<double>>
      local;                        // computed in a collective step: a client that cannot answer
  collective_step(run_.comm, [&] {  // (e.g. too few samples) ends every rank, not only its own
    for (const auto& query : queries) {
      local.push_back(QueryExchange(run_).answer_locally(query, /*round=*/0));
    }
  });
  collective_step(run_.comm, [&] {
    const auto answers = QueryExchange(run_).gather_answers(
        queries, local);  // every rank gathers before rank 0 may throw
    if (run_.comm.is_root()) {
      run_.algorithm->set_up(answers);
      run_.num_models = run_.algorithm->num_models();
    }
  });
  run_.comm.broadcast(&run_.num_models,
                      1);  // the other ranks size their models by what set-up decided
}

void RunSetUp::set_up_models() {
  const int per_round = participants_per_round(run_.num_clients, run_.options.participation);
  if (run_.algorithm->traits().clusters_clients && per_round < run_.num_models) {
    throw ConfigError("--participation " + std::to_string(run_.options.participation) + " gives " +
                      std::to_string(per_round) + " clients per round, fewer than the " +
                      std::to_string(run_.num_models) + " models to assign; raise --participation");
  }
  run_.models = std::make_unique<ModelSet>(run_.num_models, run_.architecture, run_.network_shape,
                                           run_.device);
  if (run_.options.init_scheme == cli::InitScheme::kUnitSphere) {
    check_unit_sphere_init(run_.architecture);
    run_.models->draw_on_unit_sphere();
  }
  if (run_.options.cluster_layers > 0) {  // allowed by algo::check_run_options
    run_.models->share_all_but_last_layers(run_.options.cluster_layers);
  }
  if (run_.algorithm->traits()
          .builds_client_initial_model()) {  // one client initial model, separate from the K models
    run_.client_initial_model =
        run_.models->fresh_state(run_.options.seed, static_cast<std::uint64_t>(run_.num_models));
  }
  if (run_.algorithm->traits().keeps_local_models &&
      !run_.algorithm->traits().local_models_start_from_server_model) {
    run_.clients->hosted().init_local_models(
        run_.client_initial_model);  // local models start there
  }
  if (run_.algorithm->traits().keeps_optimizers) {  // FedSoft's official client, the CFL notebook
    run_.clients->hosted().keep_optimizers(run_.local_update_settings().solver,
                                           run_.algorithm->traits().local_lr_decay);
  }
  const auto settings = run_.local_update_settings();
  const auto& hosted = run_.clients->hosted();
  for (int i = 0; i < hosted.size(); ++i) {  // at set-up, not in round 1 on some rank
    run_.procedure->check_client(hosted.first_client() + i, hosted.train().count(i), settings);
  }
  ExecutionSettings execution;
  execution.threads = run_.options.parallel_clients ? run_.threads : 1;
  execution.client_batch = client_batch_for(run_.options.client_batch, run_.device);
  execution.client_batch_bytes = run_.options.client_batch == 0 ? kGpuClientBatchBytes : 0;
  run_.clients->set_up(run_.procedure, execution, run_.models->working_model());
}

void RunSetUp::open_result_file() {
  if (!run_.comm.is_root()) {
    return;
  }
  // --resume: the partial file is written afresh from the checkpoint's rounds, so a file a kill
  // left half written (or that is damaged or swapped) cannot carry into the result.
  const auto old_partial = run_.checkpointer.partial_difference();
  run_.checkpointer.note_build();
  run_.recorder.open(*run_.algorithm, run_.num_models, config_attributes());
  run_.checkpointer.append_rows(run_.recorder, old_partial);
}

std::vector<std::pair<std::string, std::string>> RunSetUp::config_attributes() const {
  auto attributes = run_.options.to_attributes();
  attributes.emplace_back("version", core::version());
  attributes.emplace_back("git_commit", core::git_commit());
  attributes.emplace_back("torch_version", core::torch_version());
  attributes.emplace_back("cuda", core::cuda_support());
  attributes.emplace_back("cpu_kernels", core::cpu_kernels());
  attributes.emplace_back("ranks", std::to_string(run_.comm.size()));
  attributes.emplace_back("threads_per_rank", std::to_string(run_.threads));
  attributes.emplace_back("device", run_.device.str());
  attributes.emplace_back("clients", std::to_string(run_.num_clients));
  attributes.emplace_back("build_history", run_.checkpointer.build_history());
  // The algorithm's model count is the root attribute num_models; /config/models stays the option
  // (--models, or --clusters when 0), so that --skip-complete and --resume compare like with like.
  return attributes;
}

void RunSetUp::announce() const {
  const auto& options = run_.options;
  std::cout << "cflrun " << core::version() << " (" << core::git_commit() << "), LibTorch "
            << core::torch_version() << ", CPU kernels " << core::cpu_kernels() << "\n"
            << options.algorithm << " on " << options.dataset << " "
            << data::find_dataset(options.dataset).layout(data_request(options)) << ": "
            << run_.num_clients << " clients in " << options.clusters << " clusters, "
            << run_.num_models << " models (" << options.effective_model() << ", "
            << run_.models->state_size() << " floats each), " << run_.comm.size() << " rank(s) x "
            << run_.threads << " thread(s) on " << run_.device.str() << ", clients "
            << run_.clients->execution() << " -> "
            << (options.dry_run ? "nothing (--dry-run)" : options.out) << std::endl;
}

void RunSetUp::set_up() {
  collective_step(run_.comm, [&] { set_up_compute(); });
  run_.checkpointer.share_first_round();
  collective_step(run_.comm, [&] { set_up_data(); });
  share_train_samples();
  collective_step(run_.comm, [&] { set_up_population(); });
  collective_step(run_.comm, [&] { set_up_algorithm(); });
  set_up_round();
  collective_step(run_.comm, [&] { set_up_models(); });
  if (run_.comm.is_root()) {
    run_.models->initialize(run_.options.seed, run_.options.init == cli::ModelInit::kSame ||
                                                   run_.algorithm->traits().same_initial_models);
    announce();
  }
  run_.comm.broadcast(run_.models->states().data_ptr<float>(), run_.models->states().numel());
  if (run_.algorithm->traits().keeps_local_models &&
      run_.algorithm->traits().local_models_start_from_server_model) {
    run_.clients->hosted().init_local_models(run_.models->states()[0]);  // FedALA: the global model
  }
  if (!run_.options.dry_run) {
    // The checkpoint first: a resume that fails to restore leaves the interrupted file untouched.
    collective_step(run_.comm, [&] { run_.checkpointer.restore(run_.checkpoint_parts()); });
    collective_step(run_.comm, [&] { open_result_file(); });
  }
}

}  // namespace cflrun::run::detail
