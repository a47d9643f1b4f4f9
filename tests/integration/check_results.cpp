// clang-format off
// Checks result files written by real cflrun runs; used by the integration tests in CTest.
//   check_results final-ari FILE MIN          final-round ARI >= MIN, file complete
//   check_results ari-from FILE ROUND MIN     ARI >= MIN in every round from ROUND (1-based) on
//   check_results accuracy-by FILE ROUND MIN  mean test accuracy >= MIN at ROUND (1-based)
//   check_results same-assignments A B        /clients/assignment identical
//   check_results identical A B               every result dataset bit-identical (timings aside)
//   check_results same-training A B           what the clients trained bit-identical: assignments,
//                                             training losses, true clusters and presence (not the
//                                             scores: their kernels' sums may depend on the thread
//                                             count and, under AVX2, on the rank layout)
//   check_results accuracy-close A B TOL      final accuracies differ by at most TOL
//   check_results metrics-close A B TOL [LOSS_TOL]  every round, every client: accuracies within
//                                             TOL, test losses within LOSS_TOL (default TOL)
//                                             relative (NaN only with NaN)
//   check_results accuracy-above A B MARGIN   final accuracy of A >= that of B + MARGIN
//   check_results ari-undefined FILE          every round's ARI is NaN (no clustering)
//   check_results participants FILE N         every round: N clients assigned, the others -1 with
//                                             NaN accuracy
//   check_results rounds FILE N STATUS        completed_rounds == N and status starts with STATUS
//   check_results stability-switch FILE R     switched to per-cluster FedAvg by round R
//   (variant_checks.hpp)
//   check_results test-loss-at-most A B       final test loss of A <= that of B
//   check_results test-loss-below FILE MAX    final test loss <= MAX
//   check_results models-used FILE N          the last round uses exactly N distinct models
//   check_results changing-population FILE R S  change rounds R ("3,5,6"), the truth moves at
//                                             rounds S ("3,6"; "-" none), away clients unassigned
//   check_results ari-at-most FILE MAX        every round's ARI <= MAX (no cluster recovery)
//   check_results bytes-sent FILE ROUND BYTES /rounds/bytes_sent of ROUND (1-based) equals BYTES
//   check_results importance-recovered FILE TOL  last importance weights = true mixture within TOL
//   (accuracy_checks.hpp)
//   check_results accuracy-weighted FILE COUNTS  /rounds/accuracy_weighted recomputed from the
//                                             clients' accuracies and test sample counts
//   check_results train-accuracy FILE TWIN TOL MIN  /rounds/accuracy_train in [0, 1] every round,
//                                             within TOL of TWIN's, rising to at least MIN
//   (soft_checks.hpp)
//   check_results centers-specialise FILE     every source's holdout loss is lowest on a different
//                                             center
//   check_results dump FILE                   the file's fixture text on stdout
//   (fixture_checks.hpp)
//   check_results matches-fixture FILE FIXTURE  the file's datasets equal a recorded fixture
// clang-format on
#include "accuracy_checks.hpp"
#include "check_failure.hpp"
#include "fixture_checks.hpp"
#include "population_checks.hpp"
#include "soft_checks.hpp"
#include "variant_checks.hpp"

#include <cflrun/io/result_reader.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <iostream>
#include <string>
#include <vector>

namespace {

using cflrun::checks::fail;
using cflrun::checks::round_values;
using cflrun::io::ResultReader;

std::string list(const std::vector<double>& values) {
  std::string text;
  for (double v : values) {
    text += text.empty()
                ? ""
                : " ";  // appended piecewise: GCC 12 warns falsely on " " + std::string in C++20
    text += std::to_string(v);
  }
  return text;
}

/// The /summary figures must agree with the per-round series they summarise.
int summary_matches(const std::string& file) {
  const ResultReader reader(file);
  const auto ari = round_values(reader, "/rounds/ari");
  const auto accuracy = round_values(reader, "/rounds/accuracy");
  const auto summary = reader.read_f64_attribute("/summary", "final_accuracy");
  if (!(summary == accuracy.back() || (std::isnan(summary) && std::isnan(accuracy.back())))) {
    return fail(file + ": /summary final_accuracy " + std::to_string(summary) +
                " != last round's " + std::to_string(accuracy.back()));
  }
  const auto final_ari = reader.read_f64_attribute("/summary", "final_ari");
  if (!(final_ari == ari.back() || (std::isnan(final_ari) && std::isnan(ari.back())))) {
    return fail(file + ": /summary final_ari differs from the last round's ARI");
  }
  return 0;
}

int ari_from(const std::string& file, int first_round, double min) {
  const auto ari = round_values(ResultReader(file), "/rounds/ari");
  if (first_round < 1 || ari.size() < static_cast<std::size_t>(first_round)) {
    return fail(file + ": no round " + std::to_string(first_round) + " to check the ARI from (" +
                std::to_string(ari.size()) + " rounds recorded)");
  }
  for (std::size_t t = static_cast<std::size_t>(first_round - 1); t < ari.size(); ++t) {
    if (!(ari[t] >= min)) {
      return fail(file + ": ARI " + std::to_string(ari[t]) + " < " + std::to_string(min) +
                  " in round " + std::to_string(t + 1) + "; ARI per round: " + list(ari));
    }
  }
  std::cout << file << ": ARI per round: " << list(ari) << std::endl;
  return 0;
}

int accuracy_by(const std::string& file, int round, double min) {
  const auto accuracy = round_values(ResultReader(file), "/rounds/accuracy");
  if (accuracy.size() < static_cast<std::size_t>(round) ||
      !(accuracy[static_cast<std::size_t>(round - 1)] >= min)) {
    return fail(file + ": accuracy by round " + std::to_string(round) + " below " +
                std::to_string(min) + "; accuracy per round: " + list(accuracy));
  }
  std::cout << file << ": accuracy per round: " << list(accuracy) << std::endl;
  return 0;
}

/// Which datasets identical() compares.
enum class Compared { kAssignments, kTraining, kEverything };

int identical(const std::string& a, const std::string& b, Compared compared) {
  const std::vector<std::string> datasets =
      compared == Compared::kAssignments ? std::vector<std::string>{"/clients/assignment"}
      : compared == Compared::kTraining
          ? std::vector<std::string>{"/clients/assignment", "/rounds/train_loss",
                                     "/clients/true_cluster", "/clients/available"}
          : std::vector<std::string>{
                "/clients/assignment",   "/clients/true_cluster", "/rounds/ari",
                "/rounds/accuracy",      "/rounds/test_loss",     "/rounds/train_loss",
                "/clients/accuracy",     "/clients/test_loss",    "/clients/loss_vectors",
                "/clients/mixture",      "/clients/importance",   "/rounds/source_accuracy",
                "/rounds/source_loss",   "/clients/available",    "/population/change_rounds",
                "/rounds/accuracy_train"};
  const ResultReader ra(a);
  const ResultReader rb(b);
  for (const auto& name : datasets) {
    if (ra.has_dataset(name) != rb.has_dataset(name)) {
      return fail(name + " exists in only one of " + a + " and " + b);
    }
    if (!ra.has_dataset(name)) {
      continue;
    }
    const auto va = ra.read_f64(name);
    const auto vb = rb.read_f64(name);
    if (va.size() != vb.size() ||
        std::memcmp(va.data(), vb.data(), va.size() * sizeof(double)) != 0) {
      return fail(name + " differs between " + a + " and " + b);
    }
  }
  std::cout << "identical: " << a << " and " << b << std::endl;
  return 0;
}

/// A partial file (a run that failed, e.g. on a full disk) claims completed_rounds k, and every
/// per-round dataset holds exactly k rows (no row of a round that failed to write), equal to the
/// reference run's first k bit for bit.
int consistent_prefix(const std::string& reference, const std::string& partial) {
  const ResultReader rr(reference);
  const ResultReader rp(partial);
  const auto rounds = static_cast<std::size_t>(rp.completed_rounds());
  const auto reference_rounds = static_cast<std::size_t>(rr.completed_rounds());
  for (const char* name : {"/rounds/ari", "/rounds/accuracy", "/rounds/test_loss",
                           "/rounds/train_loss", "/clients/assignment", "/clients/accuracy",
                           "/clients/test_loss", "/clients/loss_vectors"}) {
    if (!rr.has_dataset(name)) {
      continue;
    }
    const auto full = rr.read_f64(name);
    const auto row = full.size() / reference_rounds;
    const auto part = rp.read_f64(name);
    if (part.size() != rounds * row) {
      return fail(partial + " claims " + std::to_string(rounds) + " rounds but " + name +
                  " holds " + std::to_string(part.size() / row) + " rows");
    }
    if (std::memcmp(full.data(), part.data(), rounds * row * sizeof(double)) != 0) {
      return fail(partial + " claims " + std::to_string(rounds) + " rounds but " + name +
                  " does not hold them as the uninterrupted run wrote them");
    }
  }
  std::cout << partial << ": " << rounds << " complete round(s), equal to the reference's"
            << std::endl;
  return 0;
}

int accuracy_close(const std::string& a, const std::string& b, double tolerance) {
  const double fa = round_values(ResultReader(a), "/rounds/accuracy").back();
  const double fb = round_values(ResultReader(b), "/rounds/accuracy").back();
  std::cout << "final accuracy " << fa << " vs " << fb << std::endl;
  return std::fabs(fa - fb) <= tolerance
             ? 0
             : fail("final accuracies differ by more than " + std::to_string(tolerance));
}

/// Every value of `name` in both files within `tolerance` (relative to max(1, |a|) when
/// `relative`), NaN only where the other is NaN.
int values_close(const std::string& a, const std::string& b, const char* name, double tolerance,
                 bool relative) {
  const auto va = ResultReader(a).read_f64(name);
  const auto vb = ResultReader(b).read_f64(name);
  if (va.size() != vb.size()) {
    return fail(std::string(name) + " has " + std::to_string(va.size()) + " values in " + a + ", " +
                std::to_string(vb.size()) + " in " + b);
  }
  double largest = 0.0;
  for (std::size_t i = 0; i < va.size(); ++i) {
    if (std::isnan(va[i]) != std::isnan(vb[i])) {
      return fail(std::string(name) + "[" + std::to_string(i) + "] is NaN in one file only");
    }
    const double scale = relative ? std::max(1.0, std::fabs(va[i])) : 1.0;
    largest = std::isnan(va[i]) ? largest : std::max(largest, std::fabs(va[i] - vb[i]) / scale);
  }
  std::cout << name << ": largest difference " << largest << (relative ? " (relative)" : "")
            << std::endl;
  return largest <= tolerance
             ? 0
             : fail(std::string(name) + " differs by more than " + std::to_string(tolerance));
}

int metrics_close(const std::string& a, const std::string& b, double tolerance,
                  double loss_tolerance) {
  return values_close(a, b, "/clients/accuracy", tolerance, false) ||
         values_close(a, b, "/clients/test_loss", loss_tolerance, true);
}

int accuracy_above(const std::string& a, const std::string& b, double margin) {
  const double fa = round_values(ResultReader(a), "/rounds/accuracy").back();
  const double fb = round_values(ResultReader(b), "/rounds/accuracy").back();
  std::cout << "final accuracy " << fa << " vs " << fb << std::endl;
  return fa >= fb + margin
             ? 0
             : fail("final accuracy of " + a + " is not " + std::to_string(margin) + " above " + b);
}

int participants(const std::string& file, long expected) {
  const ResultReader reader(file);
  std::vector<std::size_t> shape;
  const auto assignment = reader.read_i32("/clients/assignment", &shape);
  const auto accuracy = reader.read_f32("/clients/accuracy");
  std::vector<int> first_round_participants;
  for (std::size_t t = 0; t < shape.at(0); ++t) {
    long taking_part = 0;
    std::vector<int> round_participants;
    for (std::size_t c = 0; c < shape.at(1); ++c) {
      const auto at = t * shape[1] + c;
      const bool participates = assignment[at] >= 0;
      taking_part += participates ? 1 : 0;
      if (participates) {
        round_participants.push_back(static_cast<int>(c));
      }
      if (participates == std::isnan(accuracy[at])) {
        return fail(file + ": round " + std::to_string(t + 1) + ", client " + std::to_string(c) +
                    ": accuracy must be NaN exactly for non-participants");
      }
    }
    if (taking_part != expected) {
      return fail(file + ": round " + std::to_string(t + 1) + " has " +
                  std::to_string(taking_part) + " participants, expected " +
                  std::to_string(expected));
    }
    if (t == 0) {
      first_round_participants = round_participants;
    } else if (t == 1 && round_participants == first_round_participants) {
      return fail(file +
                  ": rounds 1 and 2 have the same participants; expected a new sample per round");
    }
  }
  return 0;
}

int rounds(const std::string& file, long expected, const std::string& status) {
  const ResultReader reader(file);
  if (reader.completed_rounds() != expected || reader.status().rfind(status, 0) != 0) {
    return fail(file + ": completed_rounds " + std::to_string(reader.completed_rounds()) +
                ", status '" + reader.status() + "'; expected " + std::to_string(expected) +
                " and '" + status + "'");
  }
  if (reader.read_f64("/rounds/accuracy").size() != static_cast<std::size_t>(expected)) {
    return fail(file + ": /rounds/accuracy does not hold exactly the completed rounds");
  }
  return 0;
}

int ari_undefined(const std::string& file) {
  for (double ari : round_values(ResultReader(file), "/rounds/ari")) {
    if (!std::isnan(ari)) {
      return fail(file + ": ARI " + std::to_string(ari) + " where NaN (undefined) was expected");
    }
  }
  return 0;
}

int ari_at_most(const std::string& file, double bound) {
  for (double ari : round_values(ResultReader(file), "/rounds/ari")) {
    if (!(ari <= bound)) {
      return fail(file + ": ARI " + std::to_string(ari) + " above " + std::to_string(bound));
    }
  }
  return 0;
}

int final_ari(const std::string& file, double minimum) {
  const ResultReader reader(file);
  return ari_from(file, static_cast<int>(reader.completed_rounds()), minimum) ||
         rounds(file, reader.planned_rounds(), "complete") || summary_matches(file);
}

/// One check: its name, how many words follow the name (lowest, highest), and what it runs.
struct Check {
  const char* name;
  std::size_t min_args;
  std::size_t max_args;
  std::function<int(const std::vector<std::string>&)> run;  // a = the words after the name
};

using Args = std::vector<std::string>;
namespace checks = cflrun::checks;

const std::vector<Check>& all_checks() {
  static const std::vector<Check> table{
      {"dump", 1, 1, [](const Args& a) { return (std::cout << checks::fixture_text(a[0])), 0; }},
      {"matches-fixture", 2, 2, [](const Args& a) { return checks::matches_fixture(a[0], a[1]); }},
      {"final-ari", 2, 2, [](const Args& a) { return final_ari(a[0], std::stod(a[1])); }},
      {"ari-from", 3, 3,
       [](const Args& a) { return ari_from(a[0], std::stoi(a[1]), std::stod(a[2])); }},
      {"accuracy-by", 3, 3,
       [](const Args& a) { return accuracy_by(a[0], std::stoi(a[1]), std::stod(a[2])); }},
      {"same-assignments", 2, 2,
       [](const Args& a) { return identical(a[0], a[1], Compared::kAssignments); }},
      {"same-training", 2, 2,
       [](const Args& a) { return identical(a[0], a[1], Compared::kTraining); }},
      {"identical", 2, 2,
       [](const Args& a) { return identical(a[0], a[1], Compared::kEverything); }},
      {"consistent-prefix", 2, 2, [](const Args& a) { return consistent_prefix(a[0], a[1]); }},
      {"accuracy-close", 3, 3,
       [](const Args& a) { return accuracy_close(a[0], a[1], std::stod(a[2])); }},
      {"metrics-close", 3, 4,
       [](const Args& a) {
         return metrics_close(a[0], a[1], std::stod(a[2]), std::stod(a.back()));
       }},
      {"accuracy-above", 3, 3,
       [](const Args& a) { return accuracy_above(a[0], a[1], std::stod(a[2])); }},
      {"ari-undefined", 1, 1, [](const Args& a) { return ari_undefined(a[0]); }},
      {"participants", 2, 2, [](const Args& a) { return participants(a[0], std::stol(a[1])); }},
      {"rounds", 3, 3, [](const Args& a) { return rounds(a[0], std::stol(a[1]), a[2]); }},
      {"stability-switch", 2, 2,
       [](const Args& a) { return checks::stability_switch(a[0], std::stoi(a[1])); }},
      {"test-loss-at-most", 2, 2,
       [](const Args& a) { return checks::test_loss_at_most(a[0], a[1]); }},
      {"test-loss-below", 2, 2,
       [](const Args& a) { return checks::final_test_loss_below(a[0], std::stod(a[1])); }},
      {"ari-at-most", 2, 2, [](const Args& a) { return ari_at_most(a[0], std::stod(a[1])); }},
      {"bytes-sent", 3, 3,
       [](const Args& a) { return checks::bytes_sent(a[0], std::stoi(a[1]), std::stod(a[2])); }},
      {"importance-recovered", 2, 2,
       [](const Args& a) { return checks::importance_recovered(a[0], std::stod(a[1])); }},
      {"centers-specialise", 1, 1, [](const Args& a) { return checks::centers_specialise(a[0]); }},
      {"accuracy-weighted", 2, 2,
       [](const Args& a) { return checks::accuracy_weighted(a[0], a[1]); }},
      {"train-accuracy", 4, 4,
       [](const Args& a) {
         return checks::train_accuracy(a[0], a[1], std::stod(a[2]), std::stod(a[3]));
       }},
      {"changing-population", 3, 3,
       [](const Args& a) { return checks::changing_population(a[0], a[1], a[2]); }},
      {"models-used", 2, 2,
       [](const Args& a) { return checks::models_used(a[0], std::stoi(a[1])); }},
  };
  return table;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    for (const auto& check : all_checks()) {
      const auto words = args.empty() ? 0 : args.size() - 1;
      if (!args.empty() && args[0] == check.name && words >= check.min_args &&
          words <= check.max_args) {
        return check.run(std::vector<std::string>(args.begin() + 1, args.end()));
      }
    }
  } catch (const std::exception& e) {
    return fail(e.what());
  }
  return fail("usage: see the comment at the top of tests/integration/check_results.cpp");
}
