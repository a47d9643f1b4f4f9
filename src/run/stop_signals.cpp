#include <cflrun/run/stop_signals.hpp>

#include <csignal>
#include <initializer_list>

namespace cflrun::run {
namespace {

volatile std::sig_atomic_t received = 0;

/// The first stop signal is recorded (the run stops after its round in progress); a second one
/// ends the process at once, as if no handler were installed (a second Ctrl-C means now).
extern "C" void record_signal(int signal) {
  if (received != 0) {
    std::signal(signal, SIG_DFL);
    std::raise(signal);
    return;
  }
  received = signal;
}

}  // namespace

void install_stop_signals() {
  struct sigaction action {};
  action.sa_handler = record_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;  // interrupted waits (the collectives' sleeps) go on
  for (int signal : {SIGTERM, SIGUSR1, SIGINT}) {
    sigaction(signal, &action, nullptr);
  }
}

int stop_signal() { return received; }

const char* signal_name(int signal) {
  switch (signal) {
    case SIGTERM:
      return "SIGTERM";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGINT:
      return "SIGINT";
    default:
      return "a signal";
  }
}

}  // namespace cflrun::run
