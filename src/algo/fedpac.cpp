#include <cflrun/algo/fedpac.hpp>

#include <algorithm>
#include <iterator>
#include <numeric>

#include <torch/nn/functional/loss.h>
#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/simplex_qp.hpp>
#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>
#include <cflrun/local/batches.hpp>
#include <cflrun/local/client_schedule.hpp>
#include <cflrun/local/stacked_optimizer.hpp>
#include <cflrun/model/flat_state.hpp>

namespace cflrun::algo {
namespace {

constexpr double kEigenvalueFloor = 0.01;  // PFLlib: the eigenpairs kept when repairing P
constexpr double kWeightFloor = 1e-3;      // PFLlib: weights at or below are set to 0
constexpr double kPsdTolerance = 1e-9;
// min V_j above this times tr(P_i) >= ||P_i||: P_i is positive definite with a margin far above the
// rounding of its construction (<= C d eps tr(P_i)) and of an eigensolver (about m eps ||P_i||).
constexpr double kDefiniteMargin = 1e-9;

/// The features of every training sample of a client, in eval mode without gradients, [n, d].
torch::Tensor all_features(model::Network& model, const torch::Tensor& inputs) {
  model.eval();
  torch::NoGradGuard no_grad;
  std::vector<torch::Tensor> chunks;
  const auto rows_per_pass = local::eval_chunk(inputs.device());
  for (std::int64_t start = 0; start < inputs.size(0); start += rows_per_pass) {
    chunks.push_back(
        model.features(inputs.narrow(0, start, std::min(rows_per_pass, inputs.size(0) - start))));
  }
  model.train();
  return torch::cat(chunks).to(torch::kFloat64);
}

/// The head's and the body's parameters (the head = the last layer, model::head_range).
std::pair<std::vector<torch::Tensor>, std::vector<torch::Tensor>> head_and_body(
    model::Network& model) {
  auto parameters = model.parameters();
  std::vector<torch::Tensor> head(parameters.end() - 2,
                                  parameters.end());  // the last Linear's weight and bias
  std::vector<torch::Tensor> body(parameters.begin(), parameters.end() - 2);
  return {head, body};
}

/// FedPAC Sec. 4.2, the client side of the query: V_i and h_i with the global body (server
/// model 0 of the round), [1 + C d] per client, from the features of all the rank's clients in
/// stacked forward passes (ClientServices::training_features).
class FeatureStatistics : public ClientStatistic {
 public:
  FeatureStatistics(int num_classes, int feature_size)
      : num_classes_(num_classes), feature_size_(feature_size) {}
  std::int64_t length(int /*num_models*/, std::int64_t /*state_size*/) const override {
    return 1 + static_cast<std::int64_t>(num_classes_) * feature_size_;
  }
  StatisticInput input() const override { return StatisticInput::kNothingNew; }

  std::vector<double> compute(std::vector<LocalClient>& clients,
                              ClientServices& services) override {
    std::vector<torch::Tensor> rows;
    const auto features =
        clients.empty() ? torch::Tensor()
                        : services.training_features(clients, (*clients.front().server_models)[0]);
    std::int64_t offset = 0;  // the clients' features, one after another
    for (const auto& client : clients) {
      const auto n = client.train_inputs.size(0);
      const auto [v, h] = feature_statistics(features.narrow(0, offset, n),
                                             client.train_targets.to(torch::kCPU), num_classes_);
      rows.push_back(torch::cat({v, h.flatten()}));
      offset += n;
    }
    const auto table =
        rows.empty() ? torch::empty({0}, torch::kFloat64) : torch::cat(rows).contiguous();
    return std::vector<double>(table.data_ptr<double>(), table.data_ptr<double>() + table.numel());
  }

 private:
  int num_classes_;
  int feature_size_;
};

class FedPacClient : public ClientProcedure {
 public:
  FedPacClient(double lambda, int num_classes, int feature_size)
      : lambda_(lambda), num_classes_(num_classes), feature_size_(feature_size) {}

  std::int64_t report_length() const override {
    return static_cast<std::int64_t>(num_classes_) * (feature_size_ + 1);
  }
  /// train(), report() and the standard evaluate() touch only the client's view, its model and
  /// the read-only payload.
  bool runs_concurrently() const override { return true; }

  double train(LocalClient& client, model::Network& model,
               const local::LocalUpdateSettings& settings, const AlgorithmState& payload) override {
    auto [head, body] = head_and_body(model);
    auto generator = core::make_torch_generator(client.seed, core::Purpose::kLocalUpdate,
                                                static_cast<std::uint64_t>(client.id),
                                                static_cast<std::uint64_t>(client.round));
    model.train();
    const auto step = [&](torch::optim::Optimizer& optimizer, bool align) {
      return [&, align](const torch::Tensor& rows) {
        const auto inputs = client.train_inputs.index_select(0, rows);
        const auto labels = client.train_targets.index_select(0, rows);
        optimizer.zero_grad();
        // The head's pass (align false) needs no gradient through the frozen body: the same forward
        // with its features detached skips the body's backward pass, whose gradients no one read.
        const auto features = align ? model.features(inputs) : model.features(inputs).detach();
        auto loss = torch::nn::functional::cross_entropy(model.head(features), labels);
        if (align && lambda_ > 0.0) {  // feature alignment to the global prototypes
          loss = loss +
                 lambda_ * torch::mse_loss(features, prototype_targets(features, labels, payload));
        }
        loss.backward();
        optimizer.step();
        return loss.item<double>();
      };
    };
    const auto n = client.train_inputs.size(0);
    const auto device = client.train_inputs.device();
    auto head_optimizer =
        local::make_local_optimizer(head, settings);  // body frozen: only the head steps
    local::run_batches(n, settings.batch_size, 1, /*drop_last=*/false, generator, device,
                       step(*head_optimizer, false));
    auto body_optimizer = local::make_local_optimizer(body, settings);  // head frozen
    const double loss = local::run_batches(n, settings.batch_size, settings.local_epochs, false,
                                           generator, device, step(*body_optimizer, true));
    model.zero_grad();
    return loss;
  }

  std::vector<double> report(LocalClient& client, model::Network& model) override {
    const auto [means, counts] =
        class_means(all_features(model, client.train_inputs), client.train_targets, num_classes_);
    const auto row = torch::cat({means.flatten(), counts}).to(torch::kCPU).contiguous();
    return std::vector<double>(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
  }

  std::string not_batched() const override { return ""; }

  /// train() of the batch's clients at once: every client's head epoch (its head phase), then
  /// every client's body epochs, each phase a lockstep schedule with its own stacked optimizer.
  std::vector<double> train_batched(ClientBatch& batch, model::ClientBatchedNetwork& network,
                                    const local::LocalUpdateSettings& settings,
                                    const AlgorithmState& payload) override {
    local::ClientPasses head_passes;
    local::ClientPasses body_passes;
    std::vector<std::size_t> last_epoch;
    for (auto& client : batched_clients(batch, core::Purpose::kLocalUpdate)) {
      std::vector<std::size_t> epochs;  // the same stream: the head's epoch, then the body's
      head_passes.push_back(local::shuffled_batches(
          client.offset, client.count, settings.batch_size,
          local::local_steps(client.count, one_epoch(settings)), client.generator, epochs));
      epochs.clear();
      body_passes.push_back(local::shuffled_batches(
          client.offset, client.count, settings.batch_size,
          local::local_steps(client.count, settings), client.generator, epochs));
      last_epoch.push_back(epochs.back());
    }
    auto [head_masks, body_masks] = phase_masks(batch, network, head_passes, body_passes);
    const auto head = network.head_parameters();
    std::vector<torch::Tensor> head_parameters;
    std::vector<torch::Tensor> body_parameters;
    for (std::size_t i = 0; i < network.parameters().size(); ++i) {
      const bool in_head = std::find(head.begin(), head.end(), i) != head.end();
      (in_head ? head_parameters : body_parameters).push_back(network.parameters()[i]);
    }
    run_phase(
        network,
        {head_passes, std::move(head_masks), network, batch.train_inputs, batch.train_targets},
        local::StackedOptimizer(head_parameters, settings), false, payload);
    const auto losses = run_phase(
        network,
        {body_passes, std::move(body_masks), network, batch.train_inputs, batch.train_targets},
        local::StackedOptimizer(body_parameters, settings), true, payload);
    return local::last_epoch_means(losses, pass_counts(body_passes), last_epoch);
  }

  std::vector<std::vector<double>> report_batched(ClientBatch& batch,
                                                  model::ClientBatchedNetwork& network) override {
    const auto g = batch.size();
    const auto device = batch.train_inputs.device();
    const auto options = torch::TensorOptions(device).dtype(torch::kFloat64);
    auto sums = torch::zeros({g, num_classes_, feature_size_}, options);
    auto counts = torch::zeros({g, num_classes_}, options);
    std::vector<std::int64_t> rows;
    for (std::int64_t c = 0; c < g; ++c) {
      rows.push_back(batch.train_count(c));
    }
    torch::NoGradGuard no_grad;  // eval mode: all_features
    local::for_each_padded_chunk(
        batch.train_inputs, batch.train_targets, batch.train_offsets, rows,
        std::max<std::int64_t>(1, local::eval_chunk(device) / g),
        [&](const torch::Tensor& inputs, const torch::Tensor& labels, const torch::Tensor& valid) {
          add_class_sums(sums, counts, network.features(inputs), labels, valid);
        });
    return class_mean_rows(sums, counts);
  }

 private:
  /// The settings of one epoch (the head phase's).
  static local::LocalUpdateSettings one_epoch(local::LocalUpdateSettings settings) {
    settings.local_epochs = 1;
    settings.max_steps = 0;
    return settings;
  }

  /// Each client's dropout masks for its head passes then its body passes, from its one stream,
  /// split into the two phases'.
  static std::pair<local::ClientMasks, local::ClientMasks> phase_masks(
      const ClientBatch& batch, const model::ClientBatchedNetwork& network,
      const local::ClientPasses& head_passes, const local::ClientPasses& body_passes) {
    local::ClientPasses all = head_passes;
    for (std::size_t c = 0; c < all.size(); ++c) {
      all[c].insert(all[c].end(), body_passes[c].begin(), body_passes[c].end());
    }
    auto masks =
        local::draw_dropout_masks(network, all, dropout_seeds(batch, core::Purpose::kLocalUpdate),
                                  batch.train_inputs.device());
    local::ClientMasks head_masks(masks.size());
    for (std::size_t c = 0; c < masks.size() && !masks[c].empty(); ++c) {
      const auto split = masks[c].begin() + static_cast<std::ptrdiff_t>(head_passes[c].size());
      head_masks[c].assign(std::make_move_iterator(masks[c].begin()),
                           std::make_move_iterator(split));
      masks[c].erase(masks[c].begin(), split);
    }
    return {std::move(head_masks), std::move(masks)};
  }

  /// One phase of train() for every client: the head's (align false: the body frozen, its
  /// features detached) or the body's (align true: the head frozen, the features aligned to the
  /// global prototypes), `optimizer` stepping only that part. Returns each step's [g_s] losses.
  std::vector<torch::Tensor> run_phase(model::ClientBatchedNetwork& network,
                                       const local::ClientSchedule& schedule,
                                       local::StackedOptimizer optimizer, bool align,
                                       const AlgorithmState& payload) const {
    std::vector<torch::Tensor> losses;
    for (std::size_t s = 0; s < schedule.size(); ++s) {
      const auto step = schedule.gather(s);
      auto features = network.features(step.inputs, step.pass);
      if (!align) {
        features = features.detach();
      }
      const auto flat = features.reshape({step.clients * step.width, -1});
      auto loss = step.mean(torch::nn::functional::cross_entropy(
          network.head(features).reshape({flat.size(0), -1}), step.targets,
          torch::nn::functional::CrossEntropyFuncOptions().reduction(torch::kNone)));
      if (align && lambda_ > 0.0) {
        const auto targets = prototype_targets(flat, step.targets, payload);
        loss = loss + lambda_ * step.mean((flat - targets).square().mean(1));
      }
      network.set_gradients(loss.sum());
      optimizer.step(step.clients, static_cast<std::int64_t>(s) + 1);
      losses.push_back(loss.detach());
    }
    return losses;
  }

  double lambda_;
  int num_classes_;
  int feature_size_;
};

/// P with PFLlib's repair: if it has a negative eigenvalue, rebuilt from the eigenpairs >= 0.01.
torch::Tensor repaired(const torch::Tensor& p) {
  const auto [values, vectors] = torch::linalg_eigh(p);
  if (values.min().item<double>() >= 0.0) {
    return p;
  }
  const auto kept = values.ge(kEigenvalueFloor);
  const auto v = vectors.index({torch::indexing::Slice(), kept});
  return v.matmul(torch::diag(values.index({kept}))).matmul(v.t());
}

/// The unit vector of client i among m: PFLlib's "no solution", the client keeps its own head.
torch::Tensor own_head(std::int64_t i, std::int64_t m) {
  auto own = torch::zeros({m}, torch::kFloat64);
  own[i] = 1.0;
  return own;
}

/// The weights of P's minimiser on the simplex, those <= 1e-3 set to 0 (PFLlib).
torch::Tensor floored_minimiser(const torch::Tensor& p) {
  auto weights = torch::tensor(minimise_on_simplex(p), torch::kFloat64);
  return weights.masked_fill(weights.le(kWeightFloor), 0.0);
}

/// Client i's weights as PFLlib computes them: P_i = diag(V) + A_i A_i^T from the differences
/// A_i [m, C d] (rows h_i - h_j), repaired from its eigenpairs if an eigenvalue is negative.
/// O(m^2 C d + m^3): the path of the matrices that are not safely positive definite.
torch::Tensor direct_weights(std::int64_t i, const torch::Tensor& variances,
                             const torch::Tensor& references) {
  const auto m = references.size(0);
  const auto a = (references[i].unsqueeze(0) - references).reshape({m, -1});
  const auto p = repaired(torch::diag(variances) + a.matmul(a.t()));
  if (torch::linalg_eigvalsh(p).min().item<double>() < -kPsdTolerance) {
    return own_head(i, m);
  }
  return floored_minimiser(p);
}

/// G = H H^T [m, m] of the references H [m, C d] less their mean: A_i A_i^T depends only on the
/// differences h_i - h_j, and centring keeps G's entries, and so the cancellation in
/// G_jj' - G_ij - G_ij' + G_ii, as small as the spread of the references.
torch::Tensor reference_gram(const torch::Tensor& references) {
  const auto h = references.reshape({references.size(0), -1});
  const auto centred = h - h.mean(/*dim=*/0, /*keepdim=*/true);
  const auto gram = centred.matmul(centred.t());
  return (gram + gram.t()) / 2.0;  // exactly symmetric
}

/// Client i's weights from G: P_i = diag(V) + G - g 1^T - 1 g^T + G_ii 1 1^T with g = G[i]
/// (= diag(V) + A_i A_i^T, O(m^2) instead of O(m^2 C d)). P_i is positive definite when every
/// V_j > 0, so PFLlib's eigenvalue test passes and its repair never applies; where min V_j is not
/// clear of P_i's rounding (1e-9 tr P_i), the client takes PFLlib's path with the test instead.
torch::Tensor collaboration_weights(int i, const torch::Tensor& variances,
                                    const torch::Tensor& references, const torch::Tensor& gram) {
  const auto g = gram[i];
  auto p = gram - g.unsqueeze(0) - g.unsqueeze(1) + g[i];
  p.diagonal().add_(variances);
  const auto margin = kDefiniteMargin * p.diagonal().sum().item<double>();
  if (!(variances.min().item<double>() > margin)) {
    return direct_weights(i, variances, references);
  }
  return floored_minimiser(p);
}

/// A random order of the positions 0..m-1: PFLlib's selection (stream 0) or upload (stream 1)
/// order.
torch::Tensor pflib_order(std::uint64_t seed, std::uint64_t stream, int round, std::int64_t m) {
  auto engine = core::make_engine(seed, core::Purpose::kHeadPairing, stream,
                                  static_cast<std::uint64_t>(round));
  std::vector<std::int64_t> order(static_cast<std::size_t>(m));
  std::iota(order.begin(), order.end(), std::int64_t{0});
  core::shuffle_prefix(engine, order, order.size());
  return torch::tensor(order, torch::kInt64);
}

}  // namespace

void FedPacOptions::visit(core::OptionVisitor& v) {
  v.option("fedpac-lambda", lambda,
           "fedpac: lambda, weight of the feature alignment to the global prototypes (PFLlib: 1.0)",
           core::Range::at_least(0.0));
  v.option(
      "fedpac-head-pairing", head_pairing,
      "fedpac: whose classifier-collaboration weights build a client's new head: paper (its own, "
      "Eq. 9) | pflib (the reference code's bug, PFLlib serverpac.py: the weights of the i-th "
      "client in the selection order combine the heads in a re-shuffled upload order and go to the "
      "i-th uploader; a client gets about a third of its own head and the rest of random others')",
      kHeadPairingWords);
}

torch::Tensor pflib_head_pairing(const torch::Tensor& weights, const torch::Tensor& selection,
                                 const torch::Tensor& upload) {
  const auto m = selection.numel();
  if (selection.dim() != 1 || upload.sizes() != selection.sizes() ||
      weights.sizes() != torch::IntArrayRef{m, m}) {
    throw ShapeError("pflib_head_pairing: expected [m, m] weights and two [m] orders, but got " +
                     c10::str(weights.sizes()) + ", " + c10::str(selection.sizes()) + " and " +
                     c10::str(upload.sizes()));
  }
  auto paired = torch::zeros_like(weights);
  paired.index_put_({upload.unsqueeze(1), upload.unsqueeze(0)},
                    weights.index({selection.unsqueeze(1), selection.unsqueeze(0)}));
  return paired;
}

std::pair<torch::Tensor, torch::Tensor> feature_statistics(const torch::Tensor& features,
                                                           const torch::Tensor& labels,
                                                           int num_classes) {
  const auto f = features.to(torch::kFloat64);
  const auto n = static_cast<double>(f.size(0));
  const auto [means, counts] = class_means(f, labels, num_classes);
  const auto shares = counts / n;  // p_k
  const auto h = shares.unsqueeze(1) * means;
  // sum_k p_k tr(F_k^T F_k) / n_k = sum_k p_k (sum of the squared class-k features) / n_k
  auto squares = torch::zeros({num_classes}, f.options());
  squares.index_add_(0, labels, f.pow(2).sum(/*dim=*/1));
  const auto v =
      (shares * squares / counts.clamp_min(1.0) - shares.pow(2) * means.pow(2).sum(1)).sum() / n;
  return {v.reshape({1}), h};
}

torch::Tensor combination_weights(int i, const torch::Tensor& variances,
                                  const torch::Tensor& references) {
  return collaboration_weights(i, variances, references, reference_gram(references));
}

torch::Tensor all_combination_weights(const torch::Tensor& variances,
                                      const torch::Tensor& references) {
  const auto m = references.size(0);
  const auto gram = reference_gram(references);
  std::vector<torch::Tensor> rows;
  rows.reserve(static_cast<std::size_t>(m));
  for (std::int64_t i = 0; i < m; ++i) {
    rows.push_back(collaboration_weights(static_cast<int>(i), variances, references, gram));
  }
  return torch::stack(rows);
}

FedPac::FedPac(const FedPacOptions& options, const AlgorithmContext& context)
    : options_(options),
      context_(context),
      prototypes_(kName, context.num_classes, context.feature_size) {
  context.require_classifier_with_head(kName);
}

ClientSide FedPac::client_side() const {
  return {
      std::make_shared<FedPacClient>(options_.lambda, context_.num_classes, context_.feature_size),
      std::make_shared<FeatureStatistics>(context_.num_classes, context_.feature_size)};
}

std::vector<ClientQuery> FedPac::queries(int /*round*/, const std::vector<int>& participants) {
  return {ClientQuery{QueryKind::kClientStatistics, participants}};
}

RoundPlan FedPac::plan(const RoundInput& input) {
  const auto& statistics = answer_of(input, QueryKind::kClientStatistics).values;
  const auto m = static_cast<std::int64_t>(input.participants.size());
  const auto c = static_cast<std::int64_t>(context_.num_classes);
  const auto d = static_cast<std::int64_t>(context_.feature_size);
  if (statistics.dim() != 2 || statistics.size(0) != m || statistics.size(1) != 1 + c * d) {
    throw ShapeError("fedpac: expected statistics [" + std::to_string(m) + ", " +
                     std::to_string(1 + c * d) + "], but got " + c10::str(statistics.sizes()));
  }
  auto plan = hard_plan(input.participants, input.participants, context_.num_clients,
                        context_.train_samples);
  // Bodies: every slot gets the FedAvg of the participants' bodies.
  const auto samples = plan.weights.sum(/*dim=*/0);  // [M] n_j of the participants, 0 elsewhere
  plan.weights = samples.unsqueeze(0).repeat({context_.num_clients, 1});
  // Heads: client i's head combines the participants' trained heads (Eq. 9).
  plan.head_weights = torch::zeros({context_.num_clients, context_.num_clients}, torch::kFloat64);
  const auto variances = statistics.select(1, 0).contiguous();
  const auto references = statistics.narrow(1, 1, c * d).reshape({m, c, d});
  const auto ids =
      torch::tensor(std::vector<std::int64_t>(input.participants.begin(), input.participants.end()),
                    torch::kInt64);
  auto weights = all_combination_weights(variances, references);
  if (options_.head_pairing == HeadPairing::kPflib) {
    weights = pflib_head_pairing(weights, pflib_order(context_.seed, 0, input.round, m),
                                 pflib_order(context_.seed, 1, input.round, m));
  }
  plan.head_weights.index_put_({ids.unsqueeze(1), ids.unsqueeze(0)}, weights);
  plan.payload = prototypes_.payload();
  return plan;
}

AlgorithmState FedPac::receive_reports(int /*round*/, const std::vector<int>& /*clients*/,
                                       const torch::Tensor& reports) {
  prototypes_.average(reports);
  return {};
}

AlgorithmState FedPac::state() const { return prototypes_.payload(); }

void FedPac::restore(const AlgorithmState& state) { prototypes_.restore(state); }

}  // namespace cflrun::algo
