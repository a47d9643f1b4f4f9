#pragma once
/// @file
/// How long LibTorch's OpenMP threads (libgomp) spin before they sleep.

namespace cflrun::openmp {

/// Spin count cflrun gives libgomp when the user sets neither GOMP_SPINCOUNT nor OMP_WAIT_POLICY.
inline constexpr const char* kDefaultSpinCount = "2000";

/// Makes libgomp spin kDefaultSpinCount iterations before sleeping, unless the user set
/// GOMP_SPINCOUNT or OMP_WAIT_POLICY. libgomp reads them only while it loads, before main, so this
/// sets GOMP_SPINCOUNT and executes the program again (execv of /proc/self/exe with `argv`: the
/// same process, about 0.15 s more start-up); call it first in main, before MPI starts. Returns
/// (nothing done) when a variable is already set or the execv fails.
/// Why: libgomp's default (300 000 iterations) let a round of jobs/fmnist_label_skew1.cfg take
/// 13.6 s instead of 0.80 s beside one busy process on 2 cores (measurements in spin_count.cpp).
void use_default_spin_count(char** argv);

/// The setting libgomp read at load, e.g. "GOMP_SPINCOUNT=2000" or "OMP_WAIT_POLICY=passive",
/// or "libgomp default" when neither is set. Never throws.
const char* spin_count_setting();

}  // namespace cflrun::openmp
