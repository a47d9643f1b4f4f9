#include <cflrun/core/error.hpp>
#include <cflrun/run/population/population_schedule.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <numeric>

#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

/// The message of the ConfigError or DataError `action` throws ("" if none).
template <typename F>
std::string error_of(F action) {
  try {
    action();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

PopulationSpec spec_of(const std::string& changes, int rounds = 10) {
  PopulationSpec spec;
  spec.clusters = 3;
  spec.clients_per_cluster = 4;
  spec.rounds = rounds;
  spec.seed = 7;
  spec.data_seed = 7;
  spec.changes = parse_population_changes(changes);
  return spec;
}

std::string temporary_file(const std::string& text) {
  const std::string path = ::testing::TempDir() + "population_trace.csv";
  std::ofstream(path) << text;
  return path;
}

TEST(PopulationChanges, ParsesEveryKind) {
  const auto changes = parse_population_changes(
      "drift round=3 fraction=0.25; drift round=4 clients=1,5 to=2 ; shift round=5 cluster=1;"
      "appear round=6; merge round=7 clusters=0,2; split round=8 cluster=1");
  ASSERT_EQ(changes.size(), 6U);
  EXPECT_EQ(changes[0].kind, ChangeKind::kDrift);
  EXPECT_DOUBLE_EQ(changes[0].fraction, 0.25);
  EXPECT_EQ(changes[1].clients, (std::vector<int>{1, 5}));
  EXPECT_EQ(changes[1].to, 2);
  EXPECT_EQ(changes[2].cluster, 1);
  EXPECT_EQ(changes[3].kind, ChangeKind::kAppear);
  EXPECT_EQ(changes[4].cluster, 0);
  EXPECT_EQ(changes[4].merged, 2);
  EXPECT_DOUBLE_EQ(changes[5].fraction, 0.5);  // a split halves by default
  EXPECT_TRUE(parse_population_changes(" ; ").empty());
}

TEST(PopulationChanges, RefusesMalformedEventsNamingThem) {
  EXPECT_NE(error_of([] {
              parse_population_changes("drift round=3 fraction=1.5");
            }).find("fraction=1.5 is outside [0, 1]"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_population_changes("teleport round=3");
            }).find("unknown kind 'teleport'"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_population_changes("shift cluster=1"); }).find("round= is missing"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_population_changes("drift round=2 fraction=0.1 clients=1 to=0");
            }).find("either fraction= or clients="),
            std::string::npos);
  EXPECT_NE(error_of([] {
              parse_population_changes("merge round=2 clusters=1,1");
            }).find("two different clusters"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_population_changes("appear round=0"); }).find("below 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { parse_population_changes("appear round=x"); }).find("not a whole number"),
            std::string::npos);
}

TEST(PopulationSchedule, MovesTheTruthAtEachChangeRound) {
  const PopulationSchedule schedule(
      spec_of("shift round=3 cluster=1; appear round=5; merge round=7 clusters=0,2"), {});
  ASSERT_EQ(schedule.num_clients(), 16);
  EXPECT_EQ(schedule.change_rounds(), (std::vector<int>{3, 5, 7}));
  const std::vector<int> start{0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 4, 4, 4, 4};
  EXPECT_EQ(schedule.truth(0), start);
  EXPECT_EQ(schedule.truth(1), start);
  const std::vector<int> shifted{0, 0, 0, 0, 3, 3, 3, 3, 2, 2, 2, 2, 4, 4, 4, 4};
  EXPECT_EQ(schedule.truth(2), shifted);  // round 3: cluster 1 took new distribution 3
  const std::vector<int> merged{0, 0, 0, 0, 3, 3, 3, 3, 0, 0, 0, 0, 4, 4, 4, 4};
  EXPECT_EQ(schedule.truth(6), merged);
  for (int round = 0; round < 10; ++round) {  // the appearing cluster joins at round 5
    EXPECT_EQ(schedule.available(round)[12], round >= 4 ? 1 : 0) << round;
    EXPECT_EQ(schedule.available(round)[0], 1);
  }
}

TEST(PopulationSchedule, DriftMovesTheDrawnShareToOtherClustersDeterministically) {
  const auto spec = spec_of("drift round=2 fraction=0.5");
  const PopulationSchedule a(spec, {});
  const PopulationSchedule b(spec, {});
  EXPECT_EQ(a.truth(5), b.truth(5));
  int moved = 0;
  for (std::size_t c = 0; c < 12; ++c) {
    moved += a.truth(1)[c] != a.truth(0)[c] ? 1 : 0;
    EXPECT_LT(a.truth(1)[c], 3);  // only existing clusters
  }
  EXPECT_EQ(moved, 6);
  auto other_seed = spec;
  other_seed.data_seed = 8;
  EXPECT_NE(PopulationSchedule(other_seed, {}).truth(1), a.truth(1));
}

TEST(PopulationSchedule, RefusesImpossibleChangesBeforeAnyWork) {
  EXPECT_NE(error_of([] {
              PopulationSchedule(spec_of("appear round=11"), {});
            }).find("beyond the run's 10 rounds"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              PopulationSchedule(spec_of("shift round=2 cluster=7"), {});
            }).find("names cluster 7, which holds no joined clients"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              PopulationSchedule(spec_of("drift round=2 clients=30 to=1"), {});
            }).find("client 30, which does not exist"),
            std::string::npos);
  EXPECT_NE(error_of([] {  // merged away: cluster 2 is gone by round 5
              PopulationSchedule(spec_of("merge round=3 clusters=0,2; shift round=5 cluster=2"),
                                 {});
            })
                .find("names cluster 2"),
            std::string::npos);
  auto dropout = spec_of("");
  dropout.dropout = 1.0;
  EXPECT_NE(error_of([&] { PopulationSchedule(dropout, {}); }).find("--dropout"),
            std::string::npos);
}

TEST(PopulationSchedule, DropoutAwaysAboutTheGivenShareIndependentlyOfOtherClients) {
  auto spec = spec_of("", 400);
  spec.dropout = 0.3;
  const PopulationSchedule schedule(spec, {});
  int away = 0;
  for (int round = 0; round < 400; ++round) {
    for (int present : schedule.available(round)) {
      away += 1 - present;
    }
  }
  EXPECT_NEAR(away / (400.0 * 12.0), 0.3, 0.02);
  auto with_newcomers = spec;  // an appearing cluster's clients draw from their own streams
  with_newcomers.changes = parse_population_changes("appear round=1");
  const PopulationSchedule bigger(with_newcomers, {});
  for (int round = 0; round < 400; ++round) {
    const auto& a = schedule.available(round);
    EXPECT_TRUE(std::equal(a.begin(), a.end(), bigger.available(round).begin()));
  }
}

TEST(PopulationSchedule, PeriodsHaveTheirMeanLengths) {
  auto spec = spec_of("", 4000);
  spec.clusters = 1;
  spec.clients_per_cluster = 20;  // someone present in every round; client 0 is measured
  spec.periods = parse_availability_periods("on=20 off=5");
  const PopulationSchedule schedule(spec, {});
  int present = 0;
  int periods = 0;
  for (int round = 0; round < 4000; ++round) {
    present += schedule.available(round)[0];
    periods += round > 0 && schedule.available(round)[0] != schedule.available(round - 1)[0];
  }
  EXPECT_NEAR(present / 4000.0, 0.8, 0.05);  // stationary share on / (on + off)
  EXPECT_NEAR(4000.0 / periods, 12.5, 2.5);  // mean of the two period lengths
  EXPECT_THROW(parse_availability_periods("on=20"), ConfigError);
  EXPECT_THROW(parse_availability_periods("on=0.5 off=3"), ConfigError);
}

TEST(PopulationSchedule, TraceAndDeadlineDecidePresence) {
  auto spec = spec_of("", 6);
  spec.trace = read_availability_trace(temporary_file("# client,first,last\n2,1,2\n2,5,6\n"), 12);
  spec.stragglers.speeds = parse_speed_distribution("uniform 0.5 2");
  spec.stragglers.deadline_seconds = 1.0;
  spec.stragglers.step_seconds = 0.1;
  const std::vector<std::int64_t> steps(12, 10);  // 1 s at speed 1
  const PopulationSchedule schedule(spec, steps);
  EXPECT_EQ(schedule.available(0)[2] + schedule.available(2)[2] + schedule.available(3)[2] +
                schedule.available(5)[2],
            schedule.speeds()[2] >= 1.0 ? 2 : 0);
  for (int c = 0; c < 12; ++c) {
    if (c != 2) {
      EXPECT_EQ(schedule.available(0)[static_cast<std::size_t>(c)],
                schedule.speeds()[static_cast<std::size_t>(c)] >= 1.0 ? 1 : 0);
    }
  }
  EXPECT_THROW(parse_speed_distribution("uniform 2 1"), ConfigError);
  EXPECT_THROW(parse_speed_distribution("fast"), ConfigError);
}

TEST(PopulationSchedule, TraceRefusesUnknownClientsAndOverlaps) {
  EXPECT_NE(error_of([] {
              read_availability_trace(temporary_file("12,1,3\n"), 12);
            }).find("client 12 is unknown"),
            std::string::npos);
  EXPECT_NE(error_of([] {
              read_availability_trace(temporary_file("3,1,5\n3,4,8\n"), 12);
            }).find("overlap"),
            std::string::npos);
  EXPECT_NE(
      error_of([] { read_availability_trace(temporary_file("3,5,2\n"), 12); }).find("not a period"),
      std::string::npos);
  EXPECT_NE(error_of([] {
              read_availability_trace("/nonexistent/trace.csv", 12);
            }).find("cannot be read"),
            std::string::npos);
}

}  // namespace
}  // namespace cflrun::run

namespace cflrun::run {
namespace {

TEST(PopulationSchedule, PartialWorkKeepsStragglersWithTheStepsTheyFinished) {
  auto spec = spec_of("", 3);
  spec.stragglers.speeds = parse_speed_distribution("lognormal 0.5");
  spec.stragglers.deadline_seconds = 0.15;
  spec.stragglers.step_seconds = 0.1;
  const std::vector<std::int64_t> steps(12, 2);  // 0.2 s at speed 1
  const PopulationSchedule dropping(spec, steps);
  spec.stragglers.partial_work = true;
  const PopulationSchedule partial(spec, steps);
  int kept_partially = 0;
  for (std::size_t c = 0; c < 12; ++c) {
    const double speed = partial.speeds()[c];
    EXPECT_EQ(dropping.available(0)[c], speed >= 2.0 / 1.5 ? 1 : 0) << speed;
    EXPECT_EQ(partial.available(0)[c], speed >= 1.0 / 1.5 ? 1 : 0) << speed;
    EXPECT_EQ(partial.step_limits()[c], speed >= 2.0 / 1.5 ? 0 : speed >= 1.0 / 1.5 ? 1 : 0);
    kept_partially += partial.step_limits()[c] == 1 ? 1 : 0;
  }
  EXPECT_GT(kept_partially, 0);
}

}  // namespace
}  // namespace cflrun::run

namespace cflrun::run {
namespace {

TEST(PopulationSchedule, ARoundWithoutAnyClientIsRefused) {
  auto spec = spec_of("", 5);
  spec.clusters = 1;
  spec.clients_per_cluster = 1;
  spec.trace = read_availability_trace(temporary_file("0,1,2\n0,4,5\n"), 1);
  EXPECT_NE(error_of([&] { PopulationSchedule(spec, {}); }).find("in round 3 no client is present"),
            std::string::npos);
}

}  // namespace
}  // namespace cflrun::run
