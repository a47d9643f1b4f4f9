#include <cflrun/algo/round_traffic.hpp>

namespace cflrun::algo {
namespace {
constexpr std::int64_t kFloatBytes = 4;
constexpr std::int64_t kAssignmentBytes = 4;
constexpr std::int64_t kSampleCountBytes = 8;
}  // namespace

RoundTraffic round_traffic(const RoundFacts& f) {
  const std::int64_t all_models_floats =
      f.shared_size + f.num_models * (f.state_size - f.shared_size);
  RoundTraffic traffic;
  traffic.sent = f.received_all_models * (all_models_floats * kFloatBytes) +
                 static_cast<std::int64_t>(f.received_one_model + f.received_initial_model) *
                     f.state_size * kFloatBytes +
                 f.assignments * kAssignmentBytes;
  traffic.received =
      f.answer_floats * kFloatBytes + f.states * (f.state_size * kFloatBytes + kSampleCountBytes);
  return traffic;
}

RoundTraffic soft_round_traffic(int clients, int trained, int models, std::int64_t state_size) {
  const std::int64_t centers_bytes = models * state_size * kFloatBytes;
  RoundTraffic traffic;
  traffic.sent = (clients > 0 ? clients : trained) * centers_bytes;
  traffic.received = static_cast<std::int64_t>(trained) * state_size * kFloatBytes +
                     clients * (models * kFloatBytes + kSampleCountBytes);
  return traffic;
}

}  // namespace cflrun::algo
