// The population of a run's options (population_spec).
#include <cflrun/run/population/population_schedule.hpp>

namespace cflrun::run {

std::string absence_option(const cli::RunOptions& options) {
  if (options.dropout > 0.0) {
    return "dropout " + std::to_string(options.dropout);
  }
  if (!options.availability_periods.empty()) {
    return "availability-periods '" + options.availability_periods + "'";
  }
  if (!options.availability_trace.empty()) {
    return "availability-trace " + options.availability_trace;
  }
  if (options.round_deadline > 0.0) {
    return "round-deadline " + std::to_string(options.round_deadline);
  }
  for (const auto& change : parse_population_changes(options.changes)) {
    if (change.kind == ChangeKind::kAppear) {
      return "changes (appear at round " + std::to_string(change.round) + ")";
    }
  }
  return "";
}

PopulationSpec population_changes_spec(const cli::RunOptions& options) {
  PopulationSpec spec;
  spec.clusters = options.clusters;
  spec.clients_per_cluster = options.clients_per_cluster;
  spec.rounds = options.rounds;
  spec.seed = options.seed;
  spec.data_seed = options.effective_data_seed();
  spec.changes = parse_population_changes(options.changes);
  return spec;
}

PopulationSpec population_spec(const cli::RunOptions& options) {
  auto spec = population_changes_spec(options);
  spec.dropout = options.dropout;
  spec.periods = parse_availability_periods(options.availability_periods);
  if (!options.availability_trace.empty()) {
    spec.trace = read_availability_trace(options.availability_trace, spec.num_clients());
  }
  spec.stragglers.speeds = parse_speed_distribution(options.client_speeds);
  spec.stragglers.deadline_seconds = options.round_deadline;
  spec.stragglers.step_seconds = options.step_seconds;
  spec.stragglers.partial_work = options.straggler_work == cli::StragglerWork::kPartial;
  return spec;
}

}  // namespace cflrun::run
