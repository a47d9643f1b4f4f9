#include <cflrun/core/error.hpp>
#include <cflrun/run/round_timeout.hpp>

#include <gtest/gtest.h>

namespace cflrun::run {
namespace {

TEST(RoundTimeout, OffNeverTimesOut) {
  RoundTimeout timeout("off");
  timeout.add_round(3.0);
  EXPECT_EQ(timeout.seconds(), 0.0);
}

TEST(RoundTimeout, FixedSecondsStayFixed) {
  RoundTimeout timeout("7.5");
  EXPECT_EQ(timeout.seconds(), 7.5);
  timeout.add_round(100.0);
  EXPECT_EQ(timeout.seconds(), 7.5);
}

TEST(RoundTimeout, AutoIsGenerousBeforeTheFirstRoundThenTenMediansWithAFloor) {
  RoundTimeout timeout("auto");
  EXPECT_EQ(timeout.seconds(), RoundTimeout::kAutoFirstSeconds);
  timeout.add_round(1.0);
  EXPECT_EQ(timeout.seconds(), RoundTimeout::kAutoMinimumSeconds);  // 10 s < the 120 s floor
  for (double seconds : {30.0, 20.0, 25.0, 400.0}) {  // median of {1, 30, 20, 25, 400} = 25
    timeout.add_round(seconds);
  }
  EXPECT_EQ(timeout.seconds(), 250.0);
}

TEST(RoundTimeout, RejectsWhatIsNotAutoOffOrPositiveSeconds) {
  for (const char* bad : {"", "0", "-3", "5s", "inf", "never"}) {
    EXPECT_THROW(RoundTimeout{bad}, ConfigError) << bad;
  }
}

}  // namespace
}  // namespace cflrun::run
