#pragma once
/// @file
/// A fault the test suite injects into a real run (tests/faults/worker_error.sh): an error on one
/// worker rank in the middle of a run, which no input can provoke on a CPU (a CUDA out-of-memory
/// error, a failing disk under one node's data), to check that the job ends cleanly; and a hold at
/// a round, where a test kills the run.

namespace cflrun::run {

/// Test hook: when the environment has CFLRUN_TEST_FAULT="R:N" and this is rank R at the start of
/// round N (1-based), throws cflrun::Error("injected test fault ..."). Does nothing otherwise.
/// @throws Error as described; ConfigError if the variable is set but not "R:N".
void inject_test_fault(int rank, int round);

/// Test hook: when the environment has CFLRUN_TEST_HOLD="R:N" and this is rank R at the start of
/// round N (1-based), sleeps 120 s, so that a test that kills the run once N - 1 rounds are in its
/// files (tests/faults/kill_resume.sh) cannot miss that moment however fast the rounds are. Does
/// nothing otherwise.
/// @throws ConfigError if the variable is set but not "R:N".
void hold_for_test(int rank, int round);

}  // namespace cflrun::run
