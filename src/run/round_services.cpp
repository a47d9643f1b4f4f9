// What the run offers an algorithm's client statistic: the hosted clients' batched per-sample
// losses, the standard local update and a working model per client.
#include <cflrun/run/round_services.hpp>

#include <string>

#include <cflrun/core/error.hpp>

namespace cflrun::run {

ModelSet& RoundServices::models(const char* service) const {
  if (models_ == nullptr) {
    throw ConfigError(
        std::string("a client statistic used ") + service +
        " at set-up, before the server models exist; a set-up statistic may use only the "
        "clients' data");
  }
  return *models_;
}

torch::Tensor RoundServices::per_sample_losses(const std::vector<algo::LocalClient>& clients) {
  std::vector<int> ids;
  for (const auto& client : clients) {
    ids.push_back(client.id);
  }
  return clients_.per_sample_losses(models("per_sample_losses"), ids);
}

double RoundServices::local_update(const algo::LocalClient& client, model::Network& model,
                                   const local::LocalUpdateSettings& settings,
                                   core::Purpose purpose) {
  return clients_.local_update(client, model, settings, purpose);
}

torch::Tensor RoundServices::local_updates(std::vector<algo::LocalClient>& clients,
                                           const torch::Tensor& start,
                                           const local::LocalUpdateSettings& settings,
                                           core::Purpose purpose) {
  return clients_.local_updates_from(models("local_updates"), clients, start, settings, purpose);
}

torch::Tensor RoundServices::training_features(const std::vector<algo::LocalClient>& clients,
                                               const torch::Tensor& state) {
  std::vector<int> ids;
  for (const auto& client : clients) {
    ids.push_back(client.id);
  }
  return clients_.training_features(models("training_features"), ids, state);
}

void RoundServices::for_each_client(std::size_t count, bool concurrent,
                                    const std::function<void(std::size_t, model::Network&)>& work) {
  clients_.for_each_client(models("for_each_client"), count, concurrent, work);
}

const torch::Tensor& RoundServices::client_initial_model() const {
  if (!initial_.defined()) {
    throw ConfigError(
        "a client statistic asked for the client initial model, but the algorithm's traits do not "
        "ask the run to build one (Traits::builds_client_initial_model)");
  }
  return initial_;
}

}  // namespace cflrun::run
