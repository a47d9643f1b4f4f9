#include <cflrun/run/population/population_schedule.hpp>

#include <algorithm>
#include <cmath>

#include <cflrun/core/error.hpp>
#include <cflrun/core/rng.hpp>

#include "population_truth.hpp"

namespace cflrun::run {
namespace {

constexpr double kTwoPi = 6.283185307179586;

/// Speed factor of client c from its (seed, kClientSpeed, c) stream.
double draw_speed(const SpeedDistribution& speeds, std::uint64_t seed, int client) {
  auto engine =
      core::make_engine(seed, core::Purpose::kClientSpeed, static_cast<std::uint64_t>(client));
  switch (speeds.kind) {
    case SpeedDistribution::Kind::kEqual:
      return 1.0;
    case SpeedDistribution::Kind::kLogNormal: {  // Box-Muller from two portable uniforms
      const double u1 = core::uniform01(engine);
      const double u2 = core::uniform01(engine);
      return std::exp(speeds.a * std::sqrt(-2.0 * std::log1p(-u1)) * std::cos(kTwoPi * u2));
    }
    case SpeedDistribution::Kind::kUniform:
      return speeds.a + (speeds.b - speeds.a) * core::uniform01(engine);
  }
  return 1.0;
}

/// Whether client c is present in each round by its on/off chain, [T].
std::vector<bool> period_presence(const AvailabilityPeriods& periods, std::uint64_t seed,
                                  int client, int rounds) {
  auto engine = core::make_engine(seed, core::Purpose::kAvailabilityPeriods,
                                  static_cast<std::uint64_t>(client));
  std::vector<bool> present(static_cast<std::size_t>(rounds));
  bool on = core::uniform01(engine) < periods.mean_on / (periods.mean_on + periods.mean_off);
  for (int t = 0; t < rounds; ++t) {
    if (t > 0) {
      const double leave = on ? 1.0 / periods.mean_on : 1.0 / periods.mean_off;
      on = core::uniform01(engine) < leave ? !on : on;
    }
    present[static_cast<std::size_t>(t)] = on;
  }
  return present;
}

/// Whether client c is present in each round by the trace (always if the trace does not name it).
std::vector<bool> trace_presence(const std::vector<TracePeriod>& trace, int client, int rounds) {
  std::vector<bool> present(static_cast<std::size_t>(rounds), true);
  bool named = false;
  for (const auto& period : trace) {
    if (period.client != client) {
      continue;
    }
    if (!named) {
      present.assign(present.size(), false);
      named = true;
    }
    for (int r = period.first; r <= std::min(period.last, rounds); ++r) {
      present[static_cast<std::size_t>(r - 1)] = true;
    }
  }
  return present;
}

/// The steps client c may take: 0 for its whole update (no deadline, or it finishes in time), the
/// steps it finishes by the deadline under partial work (at least 1), or -1 if it is dropped.
std::int64_t step_limit(const StragglerSpec& stragglers, double speed,
                        const std::vector<std::int64_t>& local_steps, std::size_t client) {
  if (stragglers.deadline_seconds <= 0.0) {
    return 0;
  }
  const auto steps = local_steps.at(client);
  const auto finished = static_cast<std::int64_t>(
      std::floor(stragglers.deadline_seconds * speed / stragglers.step_seconds));
  if (finished >= steps) {
    return 0;
  }
  return stragglers.partial_work && finished >= 1 ? finished : -1;
}

bool dropped_out(double dropout, std::uint64_t seed, int client, int round) {
  if (dropout <= 0.0) {
    return false;
  }
  auto engine =
      core::make_engine(seed, core::Purpose::kClientAbsence, static_cast<std::uint64_t>(client),
                        static_cast<std::uint64_t>(round));
  return core::uniform01(engine) < dropout;
}

}  // namespace

bool PopulationSpec::changing() const {
  return !changes.empty() || dropout > 0.0 || periods.enabled() || !trace.empty() ||
         stragglers.deadline_seconds > 0.0;
}

int PopulationSpec::num_clients() const {
  const auto appear = std::count_if(changes.begin(), changes.end(), [](const auto& change) {
    return change.kind == ChangeKind::kAppear;
  });
  return (clusters + static_cast<int>(appear)) * clients_per_cluster;
}

int PopulationSpec::new_distributions() const {
  return static_cast<int>(std::count_if(changes.begin(), changes.end(), [](const auto& change) {
    return change.new_distribution();
  }));
}

PopulationSchedule::PopulationSchedule(const PopulationSpec& spec,
                                       const std::vector<std::int64_t>& local_steps) {
  if (!(spec.dropout >= 0.0 && spec.dropout < 1.0)) {
    throw ConfigError("--dropout must be a probability in [0, 1), but got " +
                      std::to_string(spec.dropout));
  }
  auto truth = detail::population_truth(spec);
  num_clients_ = spec.num_clients();
  initial_clients_ = spec.clusters * spec.clients_per_cluster;
  truth_ = std::move(truth.truth);
  change_rounds_ = std::move(truth.change_rounds);
  const auto m = static_cast<std::size_t>(num_clients_);
  available_.assign(static_cast<std::size_t>(spec.rounds), std::vector<int>(m, 0));
  for (int c = 0; c < num_clients_; ++c) {
    const auto client = static_cast<std::size_t>(c);
    speeds_.push_back(draw_speed(spec.stragglers.speeds, spec.seed, c));
    const auto on = spec.periods.enabled()
                        ? period_presence(spec.periods, spec.seed, c, spec.rounds)
                        : std::vector<bool>(static_cast<std::size_t>(spec.rounds), true);
    const auto traced = trace_presence(spec.trace, c, spec.rounds);
    step_limits_.push_back(step_limit(spec.stragglers, speeds_.back(), local_steps, client));
    const bool on_time = step_limits_.back() >= 0;
    step_limits_.back() = std::max<std::int64_t>(step_limits_.back(), 0);
    for (int t = 0; t < spec.rounds; ++t) {
      const auto round = static_cast<std::size_t>(t);
      available_[round][client] = truth.join_round[client] <= t + 1 && on[round] && traced[round] &&
                                  on_time && !dropped_out(spec.dropout, spec.seed, c, t);
    }
  }
  require_someone_present();
}

void PopulationSchedule::require_someone_present() const {
  for (std::size_t t = 0; t < available_.size(); ++t) {
    if (std::none_of(available_[t].begin(), available_[t].end(), [](int on) { return on != 0; })) {
      throw ConfigError("in round " + std::to_string(t + 1) +
                        " no client is present (--dropout, --availability-periods, "
                        "--availability-trace and --round-deadline leave none); lower --dropout, "
                        "lengthen the on periods, widen the trace or raise --round-deadline");
    }
  }
}

const std::vector<int>& PopulationSchedule::truth(int round) const {
  return truth_.at(static_cast<std::size_t>(round));
}

const std::vector<int>& PopulationSchedule::available(int round) const {
  return available_.at(static_cast<std::size_t>(round));
}

std::vector<int> PopulationSchedule::present_among(const std::vector<int>& clients,
                                                   int round) const {
  const auto& present = available(round);
  std::vector<int> kept;
  std::copy_if(clients.begin(), clients.end(), std::back_inserter(kept),
               [&](int c) { return present[static_cast<std::size_t>(c)] != 0; });
  return kept;
}

}  // namespace cflrun::run
