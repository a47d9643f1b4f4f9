// libgomp spins 300 000 iterations by default at the end of every parallel region. With other
// processes on the cores, spinning threads take the CPU from the one thread still working.
// Measured with jobs/fmnist_label_skew1.cfg on 2 cores (seconds per round alone / beside one busy
// process, --parallel-clients): GOMP_SPINCOUNT 1 000: 1.03 / 1.35-1.42; 2 000: 0.92 / 1.47-1.49;
// 3 000: 0.82 / 1.56-1.57; 5 000: 0.79 / 1.70; 300 000 (libgomp's default): 0.80 / 13.6.
// 2 000 keeps a round beside a busy process within 1.8x of its time alone.
//
// Why execv: libgomp reads its settings in its load-time initialiser, before main. A setenv in
// the executable's .preinit_array is lost (libc's initialiser resets the environment to the one
// the process started with), and a library's constructor cannot be ordered before libgomp's.
#include <cflrun/openmp/spin_count.hpp>

#include <cstdlib>
#include <string>

#include <unistd.h>

namespace cflrun::openmp {

void use_default_spin_count(char** argv) {
  if (std::getenv("OMP_WAIT_POLICY") != nullptr || std::getenv("GOMP_SPINCOUNT") != nullptr) {
    return;
  }
  setenv("GOMP_SPINCOUNT", kDefaultSpinCount, /*overwrite=*/1);
  execv("/proc/self/exe", argv);  // returns only on failure: run on with libgomp's default
  unsetenv("GOMP_SPINCOUNT");
}

const char* spin_count_setting() {
  static const std::string setting = [] {
    if (const char* policy = std::getenv("OMP_WAIT_POLICY"); policy != nullptr) {
      return std::string("OMP_WAIT_POLICY=") + policy;
    }
    const char* spin = std::getenv("GOMP_SPINCOUNT");
    return spin != nullptr ? std::string("GOMP_SPINCOUNT=") + spin : std::string("libgomp default");
  }();
  return setting.c_str();
}

}  // namespace cflrun::openmp
