#include <cflrun/algo/fedproto.hpp>

#include <torch/nn/functional/loss.h>
#include <torch/types.h>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/local/batches.hpp>
#include <cflrun/local/client_schedule.hpp>
#include <cflrun/local/stacked_optimizer.hpp>

namespace cflrun::algo {
namespace {

constexpr std::int64_t kFloatBytes = 4;

class FedProtoClient : public ClientProcedure {
 public:
  FedProtoClient(double lambda, int num_classes, int feature_size)
      : lambda_(lambda), num_classes_(num_classes), feature_size_(feature_size) {}

  std::int64_t report_length() const override {
    return static_cast<std::int64_t>(num_classes_) * (feature_size_ + 1);
  }
  /// train(), report() and evaluate() touch only the client's view (its memory), its model and
  /// the read-only payload.
  bool runs_concurrently() const override { return true; }

  double train(LocalClient& client, model::Network& model,
               const local::LocalUpdateSettings& settings, const AlgorithmState& payload) override {
    const auto options = torch::TensorOptions(client.train_inputs.device()).dtype(torch::kFloat64);
    auto sums = torch::zeros({num_classes_, feature_size_}, options);
    auto counts = torch::zeros({num_classes_}, options);
    const auto optimizer = local::make_local_optimizer(model, settings);
    auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                                static_cast<std::uint64_t>(client.id),
                                                static_cast<std::uint64_t>(client.round));
    model.train();
    const double loss = local::run_batches(
        client.train_inputs.size(0), settings.batch_size, settings.local_epochs,
        /*drop_last=*/false, generator, client.train_inputs.device(),
        [&](const torch::Tensor& rows) {
          const auto inputs = client.train_inputs.index_select(0, rows);
          const auto labels = client.train_targets.index_select(0, rows);
          optimizer->zero_grad();
          const auto features = model.features(inputs);
          auto objective = torch::nn::functional::cross_entropy(model.head(features), labels);
          if (lambda_ > 0.0) {
            objective =
                objective +
                lambda_ * torch::mse_loss(features, prototype_targets(features, labels, payload));
          }
          objective.backward();
          optimizer->step();
          sums.index_add_(0, labels,
                          features.detach().to(torch::kFloat64));  // collected as trained
          counts.index_add_(0, labels, torch::ones({labels.size(0)}, options));
          return objective.item<double>();
        });
    const auto means = sums / counts.clamp_min(1.0).unsqueeze(1);
    (*client.memory)["report"] = torch::cat({means.flatten(), counts}).to(torch::kCPU);
    return loss;
  }

  std::vector<double> report(LocalClient& client, model::Network& /*model*/) override {
    return take_report(client);
  }

  std::string not_batched() const override { return ""; }

  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& payload) override {
    const auto g = batch.size();
    const auto options = torch::TensorOptions(batch.train_inputs.device()).dtype(torch::kFloat64);
    auto sums = torch::zeros({g, num_classes_, feature_size_}, options);
    auto counts = torch::zeros({g, num_classes_}, options);
    std::vector<std::size_t> last_epoch;
    const auto passes = local_update_passes(batch, settings, last_epoch);
    const auto schedule = training_schedule(batch, network, passes, core::Purpose::kLocalUpdate);
    local::StackedOptimizer optimizer(network.parameters(), settings);
    std::vector<torch::Tensor> losses;
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const auto step = schedule.gather(s);
      const auto features = network.features(step.inputs, step.pass);  // [g_s, w, d]
      const auto flat = features.reshape({step.clients * step.width, -1});
      auto objective = step.mean(torch::nn::functional::cross_entropy(
          network.head(features).reshape({flat.size(0), -1}), step.targets,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)));
      if (lambda_ > 0.0) {
        const auto targets = prototype_targets(flat, step.targets, payload);
        objective = objective + lambda_ * step.mean((flat - targets).square().mean(1));
      }
      network.set_gradients(objective.sum());
      optimizer.step(step.clients, static_cast<std::int64_t>(s) + 1);
      add_class_sums(sums, counts, features.detach(), step.targets, step.valid);
      losses.push_back(objective.detach());
    }
    const auto rows = class_mean_rows(sums, counts);
    for (std::int64_t c = 0; c < g; ++c) {
      (*batch.clients[static_cast<std::size_t>(c)]->memory)["report"] =
          torch::tensor(rows[static_cast<std::size_t>(c)], torch::kFloat64);
    }
    return local::last_epoch_means(losses, pass_counts(passes), last_epoch);
  }

  std::vector<std::vector<double>> report_batched(
      ClientBatch& batch, model::ClientBatchedNetwork& /*network*/) override {
    std::vector<std::vector<double>> rows;
    for (auto* client : batch.clients) {
      rows.push_back(take_report(*client));
    }
    return rows;
  }

  std::vector<ClientScore> evaluate_batched(ClientBatch& batch,
                                            model::ClientBatchedNetwork& network,
                                            const AlgorithmState& payload) override {
    auto scores = ClientProcedure::evaluate_batched(batch, network, payload);  // the head's CE
    const auto found = payload.find("prototypes");
    if (found == payload.end()) {
      for (auto& score : scores) {
        score.accuracy = 0.0;  // no prototypes yet (PFLlib reports 0)
      }
      return scores;
    }
    const auto device = batch.test_inputs.device();
    const auto g = batch.size();
    auto hits = torch::zeros({g}, torch::TensorOptions(device).dtype(torch::kFloat64));
    std::vector<std::int64_t> counts;
    for (std::int64_t c = 0; c < g; ++c) {
      counts.push_back(batch.test_count(c));
    }
    torch::NoGradGuard no_grad;
    local::for_each_padded_chunk(
        batch.test_inputs, batch.test_targets, batch.test_offsets, counts,
        std::max<std::int64_t>(1, local::eval_chunk(device) / g),
        [&](const torch::Tensor& inputs, const torch::Tensor& targets, const torch::Tensor& valid) {
          const auto features = network.features(inputs).flatten(0, 1).to(torch::kFloat64);
          const auto predicted = nearest_prototype(features, found->second.to(device),
                                                   payload.at("present").to(device));
          hits.add_(
              (predicted.eq(targets).to(torch::kFloat64).view_as(valid) * valid.to(torch::kFloat64))
                  .sum(1));
        });
    const auto on_cpu = hits.cpu();
    for (std::int64_t c = 0; c < g; ++c) {
      scores[static_cast<std::size_t>(c)].accuracy =
          on_cpu[c].item<double>() / static_cast<double>(counts[static_cast<std::size_t>(c)]);
    }
    return scores;
  }

  ClientScore evaluate(LocalClient& client, model::Network& model,
                       const AlgorithmState& payload) override {
    auto score = local::score(model, client.objective, client.test_inputs,
                              client.test_targets);  // the head's CE
    const auto found = payload.find("prototypes");
    if (found == payload.end()) {
      score.accuracy = 0.0;  // no prototypes yet: nothing to infer with (PFLlib reports 0)
      return score;
    }
    model.eval();
    torch::InferenceMode inference;
    const auto predicted = nearest_prototype(model.features(client.test_inputs).to(torch::kFloat64),
                                             found->second.to(client.test_inputs.device()),
                                             payload.at("present").to(client.test_inputs.device()));
    score.accuracy = predicted.eq(client.test_targets).to(torch::kFloat64).mean().item<double>();
    model.train();
    return score;
  }

 private:
  /// The prototypes and class counts train() left in the client's memory, taken out of it.
  static std::vector<double> take_report(LocalClient& client) {
    const auto report = client.memory->at("report").contiguous();
    client.memory->erase("report");
    return std::vector<double>(report.data_ptr<double>(),
                               report.data_ptr<double>() + report.numel());
  }

  double lambda_;
  int num_classes_;
  int feature_size_;
};

}  // namespace

void FedProtoOptions::visit(core::OptionVisitor& v) {
  v.option("fedproto-lambda", lambda,
           "fedproto: lambda, weight of the prototype regulariser (PFLlib: 1.0)",
           core::Range::at_least(0.0));
}

FedProto::FedProto(const FedProtoOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      prototypes_(kName, context.num_classes, context.feature_size) {
  context.require_classifier_with_head(kName);
}

ClientSide FedProto::client_side() const {
  return {std::make_shared<FedProtoClient>(options_.lambda, context_.num_classes,
                                           context_.feature_size),
          nullptr};
}

RoundPlan FedProto::plan(const RoundInput& input) {
  auto plan = hard_plan(input.participants, std::vector<int>(input.participants.size(), 0), 1,
                        context_.train_samples);
  plan.weights.zero_();  // no model is averaged
  for (int client : input.participants) {
    plan.start[static_cast<std::size_t>(client)] = kLocalModel;
  }
  plan.payload = prototypes_.payload();
  return plan;
}

AlgorithmState FedProto::receive_reports(int /*round*/, const std::vector<int>& /*clients*/,
                                         const torch::Tensor& reports) {
  prototypes_.average(reports);
  return prototypes_.payload();
}

RoundTraffic FedProto::traffic(const RoundFacts& facts) const {
  const std::int64_t prototypes =
      static_cast<std::int64_t>(context_.num_classes) * context_.feature_size;
  return {static_cast<std::int64_t>(context_.num_clients) * prototypes * kFloatBytes,
          facts.states * (prototypes + context_.num_classes) * kFloatBytes};
}

AlgorithmState FedProto::state() const { return prototypes_.payload(); }

void FedProto::restore(const AlgorithmState& state) { prototypes_.restore(state); }

}  // namespace cflrun::algo
