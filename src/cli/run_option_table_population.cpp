// The options of a changing population (issue 45; RunOptions::visit, run_option_table.cpp).
#include "run_option_groups.hpp"

namespace cflrun::cli::detail {

using core::Range;

void declare_population(RunOptions& o, core::OptionVisitor& v) {
  v.section("Changing population");
  v.declare({.flag = "changes",
             .help = "population changes, ';'-separated: 'drift round=R fraction=F', 'drift "
                     "round=R clients=A,B to=C', 'shift round=R cluster=C', 'appear round=R', "
                     "'merge round=R clusters=A,B', 'split round=R cluster=C [fraction=F]' "
                     "(1-based rounds; image partitions)"},
            &o.changes);
  v.declare({.flag = "dropout",
             .help = "probability that a client is away in a round (its own draw per round), in "
                     "[0, 1)",
             .range = interval(0.0, 1.0, /*minimum_open=*/false, /*maximum_open=*/true)},
            &o.dropout);
  v.declare({.flag = "availability-periods",
             .help = "'on=R off=R': clients alternate present and away periods of these mean "
                     "lengths in rounds (geometric); '' = always present"},
            &o.availability_periods);
  v.declare({.flag = "availability-trace",
             .help = "file of client,first_round,last_round lines: a client it names is present "
                     "only in those rounds (1-based, inclusive); '' = none"},
            &o.availability_trace);
  v.declare({.flag = "client-speeds",
             .help = "equal | 'lognormal SIGMA' | 'uniform LOW HIGH': the clients' speed factors "
                     "(drawn once per client from --seed)"},
            &o.client_speeds);
  v.declare({.flag = "round-deadline",
             .help = "simulated seconds a round waits: a client whose local update takes longer "
                     "(steps x --step-seconds / speed) is dropped from the round (0 = none)",
             .range = Range::at_least(0.0),
             .expected = ">= 0 (0 = none)"},
            &o.round_deadline);
  v.declare({.flag = "step-seconds",
             .help = "simulated seconds of one mini-batch step of a speed-1 client, > 0",
             .range = interval(0.0, 1e9, /*minimum_open=*/true, /*maximum_open=*/false)},
            &o.step_seconds);
  v.choice({.flag = "straggler-work",
            .help = "drop | partial: a client past --round-deadline is left out of the round, or "
                    "sends the local steps it finished by then (FedProx's partial work; model "
                    "averaging with the standard local update)"},
           o.straggler_work, kStragglerWorkWords);
}

}  // namespace cflrun::cli::detail
