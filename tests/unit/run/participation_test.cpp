#include <cflrun/core/error.hpp>
#include <cflrun/run/participation.hpp>

#include <algorithm>
#include <set>

#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

TEST(Participation, FullParticipationTakesEveryClientWithoutDrawing) {
  const auto all = draw_participants(7, 1.0, 3, 5);
  EXPECT_EQ(all, (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
}

TEST(Participation, DrawsASortedSeededSampleOfTheRightSizePerRound) {
  const auto a = draw_participants(25, 0.2, 1, 0);
  ASSERT_EQ(a.size(), 5U);
  EXPECT_TRUE(std::is_sorted(a.begin(), a.end()));
  EXPECT_EQ(std::set<int>(a.begin(), a.end()).size(), 5U);
  EXPECT_EQ(a, draw_participants(25, 0.2, 1, 0));
  EXPECT_NE(a, draw_participants(25, 0.2, 1, 1));  // a new sample every round
  EXPECT_EQ(participants_per_round(25, 0.01), 1);
  EXPECT_THROW(participants_per_round(25, 0.0), ConfigError);
  EXPECT_THROW(participants_per_round(25, 1.5), ConfigError);
}

TEST(Participation, EveryClientIsSampledAboutEquallyOften) {
  std::vector<int> count(10, 0);
  for (int round = 0; round < 2000; ++round) {
    for (int c : draw_participants(10, 0.3, 4, round)) {
      ++count[static_cast<std::size_t>(c)];
    }
  }
  for (int c : count) {  // expected 600 each; 5 sigma ~ 100
    EXPECT_NEAR(c, 600, 100);
  }
}

}  // namespace
}  // namespace cflrun::run
