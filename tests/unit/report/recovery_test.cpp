// The recovery after a population change (recovery.hpp) on hand-made series; expected values by
// hand from the definitions (rounds are 1-based, series index t = round t + 1).
#include <cflrun/report/recovery.hpp>

#include <limits>

#include <gtest/gtest.h>

#include <cflrun/core/error.hpp>

namespace cflrun::report {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void expect_recovered(const RecoveryRounds& rounds, int expected) {
  EXPECT_EQ(rounds.state, RecoveryState::kRecovered);
  EXPECT_EQ(rounds.rounds, expected);
}

TEST(Recovery, SeriesBackAtTheChangeRoundRecoverInZeroRounds) {
  //                  round 1    2    3     4     5
  const std::vector<double> ari{1.0, 1.0, 0.95, 0.90, 1.0};
  const std::vector<double> accuracy{0.80, 0.80, 0.85, 0.82, 0.84};
  const auto recoveries = compute_recoveries({3}, ari, accuracy);
  ASSERT_EQ(recoveries.size(), 1u);
  const auto& r = recoveries[0];
  EXPECT_EQ(r.change_round, 3);
  expect_recovered(r.ari, 0);
  expect_recovered(r.accuracy, 0);
  EXPECT_DOUBLE_EQ(*r.accuracy_before, 0.80);
  EXPECT_DOUBLE_EQ(*r.accuracy_after, 0.85);
  EXPECT_DOUBLE_EQ(*r.accuracy_dip, 0.82);  // lowest of rounds 3-5
}

TEST(Recovery, SeriesBackAfterThreeRoundsRecoverInThree) {
  //                  round 1    2    3    4    5    6    7     8    9
  const std::vector<double> ari{1.0, 1.0, 1.0, 0.2, 0.5, 0.8, 0.92, 1.0, 1.0};
  // Target 0.90 - 0.01 = 0.89: round 6 (0.88) falls short, round 7 (0.895) reaches it.
  const std::vector<double> accuracy{0.90, 0.90, 0.90, 0.60, 0.70, 0.88, 0.895, 0.90, 0.91};
  const auto r = compute_recoveries({4}, ari, accuracy).at(0);
  expect_recovered(r.ari, 3);       // round 7 = 4 + 3
  expect_recovered(r.accuracy, 3);  // round 7
  EXPECT_DOUBLE_EQ(*r.ari_before, 1.0);
  EXPECT_DOUBLE_EQ(*r.ari_after, 0.2);
  EXPECT_DOUBLE_EQ(*r.accuracy_before, 0.90);
  EXPECT_DOUBLE_EQ(*r.accuracy_after, 0.60);
  EXPECT_DOUBLE_EQ(*r.accuracy_dip, 0.60);
}

TEST(Recovery, SeriesThatNeverComeBackAreNeverNotUndefined) {
  const std::vector<double> ari{1.0, 1.0, 0.5, 0.89, 0.7};
  const std::vector<double> accuracy{0.90, 0.90, 0.70, 0.85, 0.88};  // 0.88 < 0.89
  const auto r = compute_recoveries({3}, ari, accuracy).at(0);
  EXPECT_EQ(r.ari.state, RecoveryState::kNever);
  EXPECT_EQ(r.accuracy.state, RecoveryState::kNever);
  EXPECT_DOUBLE_EQ(*r.accuracy_dip, 0.70);
}

TEST(Recovery, AccuracyExactlyOnePointBelowTheLevelBeforeCountsAsRecovered) {
  // In binary 0.13 - 0.01 > 0.12: without slack 0.12 would fall short of its target.
  const std::vector<double> accuracy{0.13, 0.05, 0.12};
  const auto r = compute_recoveries({2}, {1.0, 1.0, 1.0}, accuracy).at(0);
  expect_recovered(r.accuracy, 1);
  EXPECT_EQ(compute_recoveries({2}, {1.0, 1.0, 1.0}, {0.13, 0.05, 0.1199}).at(0).accuracy.state,
            RecoveryState::kNever);
}

TEST(Recovery, ChangeAtRoundOneHasNoAccuracyBeforeAndSoNoAccuracyRecovery) {
  const std::vector<double> ari{0.1, 0.5, 0.95};
  const std::vector<double> accuracy{0.30, 0.50, 0.70};
  const auto r = compute_recoveries({1}, ari, accuracy).at(0);
  expect_recovered(r.ari, 2);
  EXPECT_FALSE(r.accuracy_before.has_value());
  EXPECT_EQ(r.accuracy.state, RecoveryState::kUndefined);
  EXPECT_DOUBLE_EQ(*r.accuracy_after, 0.30);
  EXPECT_DOUBLE_EQ(*r.accuracy_dip, 0.30);
}

TEST(Recovery, NanAriOfAnAlgorithmWithoutClustersIsUndefinedNotNever) {
  const std::vector<double> ari(5, kNaN);  // fedavg, local
  const std::vector<double> accuracy{0.60, 0.60, 0.40, 0.55, 0.61};
  const auto r = compute_recoveries({3}, ari, accuracy).at(0);
  EXPECT_EQ(r.ari.state, RecoveryState::kUndefined);
  expect_recovered(r.accuracy, 2);  // round 5: 0.61 >= 0.59
  // NaN ARI mixed with values is skipped, not taken as a failure.
  const auto mixed = compute_recoveries({2}, {1.0, kNaN, 0.95}, {0.5, 0.5, 0.5}).at(0);
  expect_recovered(mixed.ari, 1);
}

TEST(Recovery, SearchRunsPastTheNextChangeWhileTheDipStopsBeforeIt) {
  //                  round 1    2    3    4    5    6    7    8
  const std::vector<double> ari{1.0, 1.0, 0.3, 0.4, 0.5, 0.1, 0.6, 0.95};
  const std::vector<double> accuracy{0.90, 0.90, 0.70, 0.75, 0.80, 0.50, 0.85, 0.95};
  const auto recoveries = compute_recoveries({3, 6}, ari, accuracy);
  ASSERT_EQ(recoveries.size(), 2u);
  const auto& first = recoveries[0];
  expect_recovered(first.ari, 5);               // round 8, after the change at round 6
  expect_recovered(first.accuracy, 5);          // round 8: 0.95 >= 0.89
  EXPECT_DOUBLE_EQ(*first.accuracy_dip, 0.70);  // rounds 3-5 only, not round 6's 0.50
  const auto& second = recoveries[1];
  EXPECT_EQ(second.change_round, 6);
  expect_recovered(second.ari, 2);
  EXPECT_DOUBLE_EQ(*second.accuracy_before, 0.80);
  expect_recovered(second.accuracy, 1);  // round 7: 0.85 >= 0.79
  EXPECT_DOUBLE_EQ(*second.accuracy_dip, 0.50);
}

TEST(Recovery, UnsupervisedRunsHaveNoAccuracyFigures) {
  const auto r = compute_recoveries({2}, {1.0, 1.0, 1.0}, {kNaN, kNaN, kNaN}).at(0);
  expect_recovered(r.ari, 0);
  EXPECT_EQ(r.accuracy.state, RecoveryState::kUndefined);
  EXPECT_FALSE(r.accuracy_before || r.accuracy_after || r.accuracy_dip);
}

TEST(Recovery, ChangeAfterTheLastRoundLeavesEverythingUndefined) {
  const auto r = compute_recoveries({5}, {1.0, 1.0}, {0.9, 0.9}).at(0);
  EXPECT_EQ(r.ari.state, RecoveryState::kUndefined);
  EXPECT_EQ(r.accuracy.state, RecoveryState::kUndefined);
  EXPECT_FALSE(r.accuracy_after || r.accuracy_dip);
}

TEST(Recovery, NoChangeRoundsGiveNoRecoveriesAndBadOnesAreADataError) {
  EXPECT_TRUE(compute_recoveries({}, {1.0}, {0.5}).empty());
  EXPECT_THROW(compute_recoveries({0}, {1.0}, {0.5}), DataError);
  EXPECT_THROW(compute_recoveries({3, 3}, {1.0}, {0.5}), DataError);
  EXPECT_THROW(compute_recoveries({4, 2}, {1.0}, {0.5}), DataError);
}

}  // namespace
}  // namespace cflrun::report
