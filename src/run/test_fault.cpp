#include <cflrun/run/test_fault.hpp>

#include <cstdio>
#include <cstdlib>
#include <string>

#include <cflrun/core/error.hpp>

namespace cflrun::run {

void inject_test_fault(int rank, int round) {
  const char* fault = std::getenv("CFLRUN_TEST_FAULT");
  if (fault == nullptr) {
    return;
  }
  int fault_rank = -1;
  int fault_round = -1;
  char end = '\0';
  if (std::sscanf(fault, "%d:%d%c", &fault_rank, &fault_round, &end) != 2) {
    throw ConfigError("CFLRUN_TEST_FAULT must be RANK:ROUND, e.g. 2:3, but is '" +
                      std::string(fault) + "'");
  }
  if (fault_rank == rank && fault_round == round + 1) {
    throw Error("injected test fault on rank " + std::to_string(rank) + " at the start of round " +
                std::to_string(round + 1) + " (CFLRUN_TEST_FAULT)");
  }
}

}  // namespace cflrun::run
