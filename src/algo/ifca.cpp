#include <cflrun/algo/ifca.hpp>

#include <torch/types.h>

#include <cflrun/algo/clove.hpp>

namespace cflrun::algo {

Ifca::Ifca(const NoOptions& /*options*/, const AlgorithmContext& context) : context_(context) {
  check_model_count(context);
}

std::vector<ClientQuery> Ifca::queries(int round, const std::vector<int>& participants) {
  return loss_vector_queries(round, participants, context_);
}

RoundPlan Ifca::plan(const RoundInput& input) {
  return loss_vector_plan(input, context_, [](const torch::Tensor& losses) {
    const auto best = losses.argmin(/*dim=*/1).contiguous();
    return std::vector<int>(best.data_ptr<std::int64_t>(),
                            best.data_ptr<std::int64_t>() + best.numel());
  });
}

}  // namespace cflrun::algo
