#include <cflrun/algo/fedavg.hpp>

namespace cflrun::algo {

FedAvg::FedAvg(const NoOptions& /*options*/, const AlgorithmContext& context) : context_(context) {}

RoundPlan FedAvg::plan(const RoundInput& input) {
  return hard_plan(input.participants, std::vector<int>(input.participants.size(), 0), 1,
                   context_.train_samples);
}

}  // namespace cflrun::algo
