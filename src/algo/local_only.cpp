#include <cflrun/algo/local_only.hpp>

namespace cflrun::algo {

LocalOnly::LocalOnly(const NoOptions& /*options*/, const AlgorithmContext& context)
    : context_(context) {}

RoundPlan LocalOnly::plan(const RoundInput& input) {
  return hard_plan(input.participants, input.participants, context_.num_clients,
                   context_.train_samples);
}

}  // namespace cflrun::algo
