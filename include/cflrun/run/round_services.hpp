#pragma once
/// @file
/// What the run offers an algorithm's client statistic (algo::ClientServices) on one rank, for
/// the current round's models.

#include <functional>
#include <utility>
#include <vector>

#include <torch/types.h>

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/run/clients/client_group.hpp>
#include <cflrun/run/model_set.hpp>

namespace cflrun::run {

/// algo::ClientServices over the rank's hosted clients and the current server models. Made per
/// query; holds references only.
class RoundServices final : public algo::ClientServices {
 public:
  /// @param models          the server models, or null at set-up (before they exist): then
  ///                        per_sample_losses and for_each_client throw ConfigError.
  /// @param initial         [P] float32, the client initial model (undefined if the run has none).
  /// @param settings        the run's local solver.
  RoundServices(ClientGroup& clients, ModelSet* models, const torch::Tensor& initial,
                local::LocalUpdateSettings settings)
      : clients_(clients), models_(models), initial_(initial), settings_(std::move(settings)) {}

  /// ClientGroup::per_sample_losses of the clients. @throws ConfigError at set-up.
  torch::Tensor per_sample_losses(const std::vector<algo::LocalClient>& clients) override;
  /// ClientGroup::local_update.
  double local_update(const algo::LocalClient& client, model::Network& model,
                      const local::LocalUpdateSettings& settings, core::Purpose purpose) override;
  /// ClientGroup::local_updates_from. @throws ConfigError at set-up.
  torch::Tensor local_updates(std::vector<algo::LocalClient>& clients, const torch::Tensor& start,
                              const local::LocalUpdateSettings& settings,
                              core::Purpose purpose) override;
  /// ClientGroup::training_features. @throws ConfigError at set-up.
  torch::Tensor training_features(const std::vector<algo::LocalClient>& clients,
                                  const torch::Tensor& state) override;
  /// ClientGroup::for_each_client. @throws ConfigError at set-up.
  void for_each_client(std::size_t count, bool concurrent,
                       const std::function<void(std::size_t, model::Network&)>& work) override;
  /// The settings given at construction.
  const local::LocalUpdateSettings& local_solver() const override { return settings_; }
  /// The initial model given at construction. @throws ConfigError if it is undefined.
  const torch::Tensor& client_initial_model() const override;

 private:
  /// The server models. @throws ConfigError at set-up, naming `service`.
  ModelSet& models(const char* service) const;

  ClientGroup& clients_;
  ModelSet* models_;
  torch::Tensor initial_;  // a handle: shares the caller's storage
  local::LocalUpdateSettings settings_;
};

}  // namespace cflrun::run
