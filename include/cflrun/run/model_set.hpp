#pragma once
/// @file
/// The server's K models as one flat [K, P] buffer, plus a working model to run any of them.

#include <cstdint>
#include <vector>

#include <torch/types.h>

#include <cflrun/model/conv_net.hpp>
#include <cflrun/model/flat_state.hpp>
#include <cflrun/model/network.hpp>

namespace cflrun::run {

/// Holds the flat states of all models of a run in one contiguous [K, P] float32 CPU tensor, the
/// buffer that one MPI broadcast moves per round (issue 2, MPI shape). Every rank keeps a copy;
/// a single working model on the compute device is loaded with whichever state is needed.
class ModelSet {
 public:
  /// @param num_models    K (1 for FedAvg, M for Local-only).
  /// @param architecture  the model every row holds (--model).
  /// @param shape         input sample shape and classes the models are built for.
  /// @param device        where the working model runs.
  /// @throws ConfigError from model::make_network if the architecture does not fit the shape.
  ModelSet(int num_models, model::Architecture architecture, model::NetworkShape shape,
           torch::Device device);

  /// K, the number of models.
  int size() const { return static_cast<int>(states_.size(0)); }
  /// P, the number of floats in one model's flat state.
  std::int64_t state_size() const { return states_.size(1); }

  /// [K, P] float32 CPU, contiguous: row j is model j's flat state.
  torch::Tensor& states() { return states_; }
  const torch::Tensor& states() const { return states_; }

  /// IFCA's weight sharing (IFCA Sec. 4.1): only the last `layers` layers stay per model; every
  /// other float of the state is shared by all models and averaged over all clients. Call before
  /// initialize(). @throws ConfigError as model::trailing_layers.
  void share_all_but_last_layers(int layers);

  /// Floats of one state shared by all models (0 without weight sharing).
  std::int64_t shared_size() const { return shared_ ? state_size() - cluster_part_.size : 0; }

  /// Draws every initial state (initialize(), fresh_state()) as g / |g|, g ~ N(0, I_P) from the
  /// same streams, instead of LibTorch's layer initialisation: the official CLoVE code's linear
  /// regression (utils/linear.py, initialize_weights_and_bias: a unit-norm theta; App. C.1.1).
  /// Call before initialize().
  void draw_on_unit_sphere() { unit_sphere_ = true; }

  /// Gives model j the initialisation (LibTorch's default, or draw_on_unit_sphere()'s) drawn from
  /// the (seed, kModelInit, j) stream,
  /// so every model starts different ("different" initialisation of the official code, Sec. 10)
  /// and independently of how many models or ranks there are; with `same`, every model gets
  /// model 0's parameters (the "same" initialisation of the paper's Fig. 2).
  void initialize(std::uint64_t seed, bool same = false);

  /// A freshly initialised flat state from the (seed, kModelInit, stream) stream, [P] float32 CPU
  /// (initialize() gives model j the stream j; FedSoft's client initial model uses stream K).
  torch::Tensor fresh_state(std::uint64_t seed, std::uint64_t stream) const;

  /// Loads model j's state into the working model and returns it (in train mode).
  /// @throws std::out_of_range if j is not in [0, K).
  model::Network& load(int j);

  /// The working model, whatever it currently holds.
  model::Network& working_model() { return *working_; }

  /// A new model of the same architecture on the same device (in train mode, initialised from
  /// LibTorch's global generator: load a state before use), e.g. a training thread's own model.
  std::shared_ptr<model::Network> make_network() const;

  /// Server averaging step, Option I (CLoVE Alg. 1 line 14): theta_j = sum_i n_i theta_i / sum_i
  /// n_i for every model with at least one client; other models keep their state. With weight
  /// sharing the shared floats of every model become the average over all clients instead.
  /// @param weighted_sums  K*P sample-weighted sums of client states (row-major), then K sample
  /// counts.
  /// @throws ShapeError if the size is not K*(P+1).
  void average(const std::vector<double>& weighted_sums);

  /// Sets the head part (`head`, a FlatRange of the state) of every model with a non-zero head
  /// weight to its own weighted average, and of every other model back to `previous_heads`, its
  /// head before average() (FedPAC's classifier collaboration: bodies averaged, heads combined
  /// per client, the heads of clients that did not take part kept).
  /// @param weighted_head_sums  K*H weighted sums of the clients' heads (row-major), then K
  /// weights.
  /// @param previous_heads      [K, H] float32, the heads before this round's average().
  /// @throws ShapeError if the size is not K*(H+1).
  void average_heads(const std::vector<double>& weighted_head_sums, model::FlatRange head,
                     const torch::Tensor& previous_heads);

  /// Replaces every model by `models`, the models an algorithm computed itself
  /// (algo::Aggregation::models, e.g. the CFL notebook's update-form aggregation).
  /// @param models  [K, P] float32 (another dtype is converted).
  /// @return        [K] whether model s changed.
  /// @throws ShapeError if models is not [K, P].
  std::vector<bool> replace(const torch::Tensor& models);

  /// Server step of Option II, gradient averaging (CLoVE Alg. 1 line 15; IFCA Alg. 1):
  /// theta_j -= learning_rate * sum_i n_i g_i / sum_i n_i for every model with a client.
  /// @param weighted_gradient_sums  K*P sample-weighted gradient sums, then K sample counts.
  /// @throws ShapeError if the size is not K*(P+1).
  void gradient_step(const std::vector<double>& weighted_gradient_sums, double learning_rate);

 private:
  void update(const std::vector<double>& weighted_sums, double learning_rate, bool gradient);
  /// Weight sharing: sets the shared floats of every model from the all-client sums.
  void update_shared(const torch::Tensor& sums, const torch::Tensor& counts, double learning_rate,
                     bool gradient);

  model::Architecture architecture_;
  model::NetworkShape shape_;
  torch::Tensor states_;
  std::shared_ptr<model::Network> working_;
  bool shared_ = false;
  bool unit_sphere_ = false;       // draw_on_unit_sphere()
  model::FlatRange cluster_part_;  // per-model floats under weight sharing
  torch::Device device_;
};

}  // namespace cflrun::run
