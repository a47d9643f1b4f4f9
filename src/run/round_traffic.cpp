#include <cflrun/run/round_traffic.hpp>

namespace cflrun::run {
namespace {
constexpr std::int64_t kFloatBytes = 4;
constexpr std::int64_t kAssignmentBytes = 4;
constexpr std::int64_t kSampleCountBytes = 8;
}  // namespace

RoundTraffic round_traffic(int participants, int models_per_client, std::int64_t state_size,
                           int loss_vector_length) {
  const std::int64_t m = participants;
  RoundTraffic traffic;
  traffic.sent = m * (models_per_client * state_size * kFloatBytes + kAssignmentBytes);
  traffic.received = m * (loss_vector_length * kFloatBytes + state_size * kFloatBytes + kSampleCountBytes);
  return traffic;
}

}  // namespace cflrun::run
