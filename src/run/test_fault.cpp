#include <cflrun/run/test_fault.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include <cflrun/core/error.hpp>

namespace cflrun::run {
namespace {

/// Whether the environment variable `name` = "R:N" names this rank and 0-based round.
/// @throws ConfigError if it is set but not "R:N".
bool names_this_round(const char* name, int rank, int round) {
  const char* value = std::getenv(name);
  if (value == nullptr) {
    return false;
  }
  int named_rank = -1;
  int named_round = -1;
  char end = '\0';
  if (std::sscanf(value, "%d:%d%c", &named_rank, &named_round, &end) != 2) {
    throw ConfigError(std::string(name) + " must be RANK:ROUND, e.g. 2:3, but is '" + value + "'");
  }
  return named_rank == rank && named_round == round + 1;
}

}  // namespace

void hold_for_test(int rank, int round) {
  if (names_this_round("CFLRUN_TEST_HOLD", rank, round)) {
    std::this_thread::sleep_for(std::chrono::seconds(120));
  }
}

void inject_test_fault(int rank, int round) {
  if (names_this_round("CFLRUN_TEST_FAULT", rank, round)) {
    throw Error("injected test fault on rank " + std::to_string(rank) + " at the start of round " +
                std::to_string(round + 1) + " (CFLRUN_TEST_FAULT)");
  }
}

}  // namespace cflrun::run
