// Set-up of an experiment on every rank: compute, data, the algorithm's set-up round, models,
// result file.
#include "experiment_state.hpp"

#include <cflrun/data/dataset_registry.hpp>

namespace cflrun::run::detail {

void Experiment::set_up_compute() {
  threads_ = threads_per_rank(options_.threads, comm_.local_size());
  torch::set_num_threads(threads_);
  // FTZ/DAZ of this thread; threads made later (LibTorch's OpenMP pool, the clients' training
  // threads) inherit its floating-point environment. Measured on jobs/fmnist_label_skew1.cfg: the
  // local updates took 0.35 s at round 2 and 1.16 s at round 91 with denormals, 0.38-0.44 s
  // throughout without; accuracies and assignments identical over 100 rounds, losses within 2e-5.
  at::globalContext().setFlushDenormal(options_.flush_denormal);
  device_ = select_device(options_.device, comm_.local_rank());
  set_up_precision(options_.precision, device_);
  if (comm_.is_root() && !options_.dry_run) {
    check_output_files();
    checkpointer_.read_if_resuming();
  }
}

void Experiment::check_output_files() const {
  if (!options_.overwrite && std::filesystem::exists(paths_.out)) {
    throw ConfigError("--out " + options_.out +
                      " already exists; pass --overwrite to replace it (only when this "
                      "run completes) or choose another --out");
  }
  if (options_.resume || options_.overwrite) {
    return;
  }
  if (std::filesystem::exists(paths_.checkpoint)) {
    throw ConfigError("an interrupted run left " + paths_.partial.string() +
                      " and its checkpoint; pass --resume to "
                      "continue it, or --overwrite to start again");
  }
  if (std::filesystem::exists(paths_.partial)) {
    throw ConfigError("a run that failed or was killed before its first checkpoint left " +
                      paths_.partial.string() +
                      " (nothing to resume); pass --overwrite to start again");
  }
}

void Experiment::set_up_data() {
  architecture_ = architecture_of(options_);  // an unknown --model fails before any data is read
  const auto data = load_client_data(options_);
  network_shape_ = network_shape_of(data);
  num_clients_ = data.num_clients();
  recorder_.set_up(data, device_);  // the true clusters; rank 0 also the sources' holdout sets
  const auto hosted = hosted_by(comm_.rank());
  clients_ = std::make_unique<ClientGroup>(data, hosted.first, hosted.end, objective_of(options_),
                                           device_);
}

void Experiment::share_train_samples() {
  const auto& hosted = clients_->hosted().train().counts();
  auto counts = comm_.gather(std::vector<double>(hosted.begin(), hosted.end()));
  counts.resize(static_cast<std::size_t>(num_clients_));
  comm_.broadcast(counts.data(), static_cast<std::int64_t>(counts.size()));
  train_samples_.assign(counts.begin(), counts.end());
}

algo::AlgorithmContext Experiment::algorithm_context() const {
  algo::AlgorithmContext context;
  context.num_clients = num_clients_;
  context.num_models = options_.effective_models();
  context.train_samples = train_samples_;
  context.seed = options_.seed;
  context.random_first_assignment = options_.first_assignment == "random";
  context.gradient_averaging = options_.aggregation == "gradient";
  context.participation = options_.participation;
  context.newcomers = options_.newcomers;
  context.cluster_layers = options_.cluster_layers;
  context.stable_rounds = options_.stable_rounds;
  context.batch_size = options_.batch_size;
  context.optimizer = options_.optimizer;
  context.num_classes =
      objective_of(options_) == model::Objective::kClassification ? network_shape_.num_classes : 0;
  context.classifier_with_head = context.num_classes > 0 && model::has_head(architecture_);
  context.feature_size = context.classifier_with_head ? model::feature_size(architecture_) : 0;
  context.sample_size = network_shape_.sample_size();
  return context;
}

void Experiment::set_up_algorithm() {
  algorithm_ =
      algo::make_algorithm(options_.algorithm, options_.algorithm_options, algorithm_context());
  if (options_.prox_mu > 0.0 && algorithm_->traits().proximal_mu > 0.0) {
    throw ConfigError("--prox-mu (FedProx) cannot be combined with " + options_.algorithm +
                      ", which has its own proximal term; remove --prox-mu");
  }
  if (algorithm_->traits().local_lr_decay != 1.0 && !algorithm_->traits().keeps_optimizers) {
    throw Error(options_.algorithm +
                ": a local learning-rate decay is kept with the clients' optimizers; the algorithm "
                "must declare keeps_optimizers");
  }
  num_models_ = algorithm_->num_models();
  const auto side = algorithm_->client_side();
  procedure_ = side.procedure ? side.procedure : std::make_shared<algo::StandardClient>();
  statistic_ = side.statistic;
  const auto hosted = hosted_by(comm_.rank());
  stability_ = std::make_unique<StabilityMonitor>(comm_, hosted.first, hosted.end,
                                                  options_.stable_rounds, options_.stable_fraction);
}

ClientRange Experiment::hosted_by(int rank) const {
  return hosted_clients(rank, comm_.size(), num_clients_, options_.server_hosts_clients);
}

bool Experiment::is_newcomer(int client) const {
  return client % options_.clients_per_cluster >= options_.clients_per_cluster - options_.newcomers;
}

std::vector<int> Experiment::initial_clients() const {
  std::vector<int> initial;
  for (int c = 0; c < num_clients_; ++c) {
    if (!is_newcomer(c)) {
      initial.push_back(c);
    }
  }
  return initial;
}

void Experiment::set_up_round() {
  std::vector<algo::ClientQuery> queries;
  collective_step(comm_, [&] {
    if (comm_.is_root()) {
      queries = algorithm_->set_up_queries(initial_clients());
    }
  });
  queries = share_queries(comm_, queries);
  if (queries.empty()) {
    return;
  }
  std::vector<std::vector<double>>
      local;                    // computed in a collective step: a client that cannot answer
  collective_step(comm_, [&] {  // (e.g. too few samples) ends every rank, not only its own
    for (const auto& query : queries) {
      local.push_back(answer_locally(query, /*round=*/0));
    }
  });
  collective_step(comm_, [&] {
    const auto answers =
        gather_answers(queries, local);  // every rank gathers before rank 0 may throw
    if (comm_.is_root()) {
      algorithm_->set_up(answers);
      num_models_ = algorithm_->num_models();
    }
  });
  comm_.broadcast(&num_models_, 1);  // the other ranks size their models by what set-up decided
}

void Experiment::set_up_models() {
  const int per_round = participants_per_round(num_clients_, options_.participation);
  if (algorithm_->traits().clusters_clients && per_round < num_models_) {
    throw ConfigError("--participation " + std::to_string(options_.participation) + " gives " +
                      std::to_string(per_round) + " clients per round, fewer than the " +
                      std::to_string(num_models_) + " models to assign; raise --participation");
  }
  models_ = std::make_unique<ModelSet>(num_models_, architecture_, network_shape_, device_);
  if (options_.cluster_layers > 0) {  // allowed by algo::check_run_options
    models_->share_all_but_last_layers(options_.cluster_layers);
  }
  if (algorithm_->traits()
          .builds_client_initial_model()) {  // one client initial model, separate from the K models
    client_initial_model_ =
        models_->fresh_state(options_.seed, static_cast<std::uint64_t>(num_models_));
  }
  if (algorithm_->traits().keeps_local_models &&
      !algorithm_->traits().local_models_start_from_server_model) {
    clients_->hosted().init_local_models(client_initial_model_);  // local models start there
  }
  if (algorithm_->traits().keeps_optimizers) {  // FedSoft's official client, the CFL notebook
    clients_->hosted().keep_optimizers(local_update_settings().solver,
                                       algorithm_->traits().local_lr_decay);
  }
  const auto settings = local_update_settings();
  const auto& hosted = clients_->hosted();
  for (int i = 0; i < hosted.size(); ++i) {  // at set-up, not in round 1 on some rank
    procedure_->check_client(hosted.first_client() + i, hosted.train().count(i), settings);
  }
  ExecutionSettings execution;
  execution.threads = options_.parallel_clients ? threads_ : 1;
  execution.client_batch = client_batch_for(options_.client_batch, device_);
  execution.client_batch_bytes = options_.client_batch == 0 ? kGpuClientBatchBytes : 0;
  clients_->set_up(procedure_, execution, models_->working_model());
}

void Experiment::open_result_file() {
  if (!comm_.is_root()) {
    return;
  }
  // --resume: the partial file is written afresh from the checkpoint's rounds, so a file a kill
  // left half written (or that is damaged or swapped) cannot carry into the result.
  const auto old_partial = checkpointer_.partial_difference();
  checkpointer_.note_build();
  recorder_.open(*algorithm_, num_models_, config_attributes());
  checkpointer_.append_rows(recorder_, old_partial);
}

std::vector<std::pair<std::string, std::string>> Experiment::config_attributes() const {
  auto attributes = options_.to_attributes();
  attributes.emplace_back("version", core::version());
  attributes.emplace_back("git_commit", core::git_commit());
  attributes.emplace_back("torch_version", core::torch_version());
  attributes.emplace_back("cuda", core::cuda_support());
  attributes.emplace_back("cpu_kernels", core::cpu_kernels());
  attributes.emplace_back("ranks", std::to_string(comm_.size()));
  attributes.emplace_back("threads_per_rank", std::to_string(threads_));
  attributes.emplace_back("device", device_.str());
  attributes.emplace_back("clients", std::to_string(num_clients_));
  attributes.emplace_back("build_history", checkpointer_.build_history());
  // The algorithm's model count is the root attribute num_models; /config/models stays the option
  // (--models, or --clusters when 0), so that --skip-complete and --resume compare like with like.
  return attributes;
}

void Experiment::set_up() {
  collective_step(comm_, [&] { set_up_compute(); });
  checkpointer_.share_first_round();
  collective_step(comm_, [&] { set_up_data(); });
  share_train_samples();
  collective_step(comm_, [&] { set_up_algorithm(); });
  set_up_round();
  collective_step(comm_, [&] { set_up_models(); });
  if (comm_.is_root()) {
    models_->initialize(options_.seed,
                        options_.init == "same" || algorithm_->traits().same_initial_models);
    std::cout << "cflrun " << core::version() << " (" << core::git_commit() << "), LibTorch "
              << core::torch_version() << ", CPU kernels " << core::cpu_kernels() << "\n"
              << options_.algorithm << " on " << options_.dataset << " "
              << data::find_dataset(options_.dataset).layout(data_request(options_)) << ": "
              << num_clients_ << " clients in " << options_.clusters << " clusters, " << num_models_
              << " models (" << options_.effective_model() << ", " << models_->state_size()
              << " floats each), " << comm_.size() << " rank(s) x " << threads_ << " thread(s) on "
              << device_.str() << ", clients " << clients_->execution() << " -> "
              << (options_.dry_run ? "nothing (--dry-run)" : options_.out) << std::endl;
  }
  comm_.broadcast(models_->states().data_ptr<float>(), models_->states().numel());
  if (algorithm_->traits().keeps_local_models &&
      algorithm_->traits().local_models_start_from_server_model) {
    clients_->hosted().init_local_models(models_->states()[0]);  // FedALA: the global model
  }
  if (!options_.dry_run) {
    // The checkpoint first: a resume that fails to restore leaves the interrupted file untouched.
    collective_step(comm_, [&] { checkpointer_.restore(checkpoint_parts()); });
    collective_step(comm_, [&] { open_result_file(); });
  }
}

}  // namespace cflrun::run::detail
