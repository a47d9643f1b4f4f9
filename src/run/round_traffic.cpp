#include <cflrun/run/round_traffic.hpp>

namespace cflrun::run {
namespace {
constexpr std::int64_t kFloatBytes = 4;
constexpr std::int64_t kAssignmentBytes = 4;
constexpr std::int64_t kSampleCountBytes = 8;
}  // namespace

RoundTraffic round_traffic(int participants, int models_per_client, std::int64_t state_size,
                           int loss_vector_length, std::int64_t shared_size) {
  const std::int64_t m = participants;
  const std::int64_t model_floats = shared_size + models_per_client * (state_size - shared_size);
  RoundTraffic traffic;
  traffic.sent = m * (model_floats * kFloatBytes + kAssignmentBytes);
  traffic.received = m * (loss_vector_length * kFloatBytes + state_size * kFloatBytes + kSampleCountBytes);
  return traffic;
}

}  // namespace cflrun::run
