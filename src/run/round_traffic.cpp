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

RoundTraffic soft_round_traffic(int clients, int trained, int models, std::int64_t state_size, bool estimation) {
  const std::int64_t centers_bytes = models * state_size * kFloatBytes;
  RoundTraffic traffic;
  traffic.sent = (estimation ? clients : trained) * centers_bytes;
  traffic.received = static_cast<std::int64_t>(trained) * state_size * kFloatBytes +
                     (estimation ? clients * (models * kFloatBytes + kSampleCountBytes) : 0);
  return traffic;
}

}  // namespace cflrun::run
