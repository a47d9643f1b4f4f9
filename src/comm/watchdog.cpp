#include "watchdog.hpp"
#include "mpi_check.hpp"

#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <sstream>
#include <thread>

#include <cflrun/comm/communicator.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::comm::detail {
namespace {

constexpr int kArrivalTag = 7001;
constexpr int kPingTag =
    7002;  // rank 0 -> worker: are you alive? (only when a collective is stuck)
constexpr int kPongTag = 7003;        // worker -> rank 0: yes
constexpr int kFailureTag = 7004;     // worker -> rank 0: this rank failed, with its error message
constexpr double kPingSeconds = 3.0;  // how long rank 0 waits for the answers
// How long rank 0, freeing the communicator, waits for the arrival messages still on their way
// (workers send the last one just before the last collective, which rank 0 may finish first).
constexpr double kDrainSeconds = 5.0;
// A gap this long between two polls of a wait means this rank itself did not run (SIGSTOP, then
// SIGCONT as mpiexec sends before ending a job): the gap does not count against the other ranks.
constexpr std::chrono::seconds kStallSeconds{2};

// CLOCK_MONOTONIC nanoseconds (steady_clock's clock on Linux) of the last SIGCONT this process got
// outside a wait, and of the last one inside a wait; 0 = none. Written by the handler
// (clock_gettime is async-signal-safe), read by time_out. mpiexec sends SIGCONT to every rank as
// it ends a job, stopped or not: inside a wait, a SIGCONT counts as a stop of this rank only with
// a stall of its polls (stalled_at_ns) within kStallSeconds of it, latched in stopped_in_wait_at_ns
// by whichever of the two comes second (the handler or the poll that saw the stall), so that a
// later SIGCONT (mpiexec ending the job after a worker's abort) does not hide it.
std::atomic<std::int64_t> continued_at_ns{0};
std::atomic<std::int64_t> continued_in_wait_at_ns{0};
std::atomic<std::int64_t> stalled_at_ns{0};
std::atomic<std::int64_t> stopped_in_wait_at_ns{0};
std::atomic<bool> in_wait{false};
static_assert(std::atomic<std::int64_t>::is_always_lock_free);
static_assert(std::atomic<bool>::is_always_lock_free);

std::int64_t monotonic_ns() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<std::int64_t>(now.tv_sec) * 1'000'000'000 + now.tv_nsec;
}

constexpr std::int64_t kStallNs =
    std::chrono::duration_cast<std::chrono::nanoseconds>(kStallSeconds).count();

/// Latches a stop of this rank inside a wait at `now` if `other` (the stall for a SIGCONT, the
/// SIGCONT for a stall) came within kStallSeconds before it.
void latch_stop_if_near(std::int64_t now, std::int64_t other) {
  if (other > 0 && other > now - kStallNs) {
    stopped_in_wait_at_ns.store(now);
  }
}

void record_continue(int /*signal*/) {
  const auto now = monotonic_ns();
  if (in_wait.load()) {
    continued_in_wait_at_ns.store(now);
    latch_stop_if_near(now, stalled_at_ns.load());
  } else {
    continued_at_ns.store(now);
  }
}

/// Marks this process as polling a wait while it lives (RAII).
struct InWait {
  InWait() { in_wait.store(true); }
  ~InWait() { in_wait.store(false); }
  InWait(const InWait&) = delete;
  InWait& operator=(const InWait&) = delete;
};

// Installs record_continue once per process; a handler someone else installed is left alone.
void watch_for_continue() {
  static const bool installed = [] {
    struct sigaction previous {};
    sigaction(SIGCONT, nullptr, &previous);
    if (previous.sa_handler != SIG_DFL || (previous.sa_flags & SA_SIGINFO) != 0) {
      return false;
    }
    struct sigaction action {};
    action.sa_handler = record_continue;
    sigemptyset(&action.sa_mask);
    action.sa_flags = SA_RESTART;
    return sigaction(SIGCONT, &action, nullptr) == 0;
  }();
  (void)installed;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

std::string this_host() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(length));
}

}  // namespace

Watchdog::Watchdog(MPI_Comm comm, int rank, int size)
    : comm_(comm),
      rank_(rank),
      size_(size),
      last_completed_(std::chrono::steady_clock::now()),
      previous_completed_(last_completed_) {
  watch_for_continue();
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME, '\0');
  std::string host = this_host();
  host.resize(MPI_MAX_PROCESSOR_NAME - 1);
  check(MPI_Allgather(host.c_str(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(),
                      MPI_MAX_PROCESSOR_NAME, MPI_CHAR, comm_),
        "MPI_Allgather (host names)");
  for (int r = 0; r < size; ++r) {
    hosts_.emplace_back(names.data() + static_cast<std::ptrdiff_t>(r) * MPI_MAX_PROCESSOR_NAME);
  }
  long pid = static_cast<long>(::getpid());
  pids_.resize(static_cast<std::size_t>(size));
  check(MPI_Allgather(&pid, 1, MPI_LONG, pids_.data(), 1, MPI_LONG, comm_), "MPI_Allgather (pids)");
  if (rank_ == 0 && size_ > 1) {
    receives_.assign(static_cast<std::size_t>(size_ - 1), MPI_REQUEST_NULL);
    incoming_.assign(receives_.size(), 0);
    reached_.assign(receives_.size(), 0);
    for (int w = 1; w < size_; ++w) {
      const auto i = static_cast<std::size_t>(w - 1);
      check(MPI_Recv_init(&incoming_[i], 1, MPI_LONG, w, kArrivalTag, comm_, &receives_[i]),
            "MPI_Recv_init");
      check(MPI_Start(&receives_[i]), "MPI_Start");
    }
  }
}

Watchdog::~Watchdog() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized != 0) {
    return;
  }
  drain_arrivals();
  for (auto& request : receives_) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Request_free(&request);
  }
  if (send_ != MPI_REQUEST_NULL) {
    MPI_Request_free(&send_);  // completes in the background
  }
}

double Watchdog::limit_seconds() const {
  return rank_ == 0 ? timeout_seconds_ : 2.0 * timeout_seconds_;
}

void Watchdog::arrive() {
  ++collective_;
  if (rank_ == 0 || size_ == 1) {
    return;
  }
  if (send_ != MPI_REQUEST_NULL) {
    wait(send_, "the arrival message to rank 0", std::chrono::microseconds(200));
  }
  outgoing_ = collective_;
  check(MPI_Isend(&outgoing_, 1, MPI_LONG, 0, kArrivalTag, comm_, &send_), "MPI_Isend");
}

void Watchdog::read_arrivals() {
  for (std::size_t i = 0; i < receives_.size(); ++i) {
    int done = 1;
    while (done != 0) {
      check(MPI_Test(&receives_[i], &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (done != 0) {
        reached_[i] = incoming_[i];
        check(MPI_Start(&receives_[i]), "MPI_Start");
      }
    }
  }
}

void Watchdog::drain_arrivals() noexcept {
  const auto start = std::chrono::steady_clock::now();
  const auto all_reached = [this] {
    return std::all_of(reached_.begin(), reached_.end(),
                       [this](long n) { return n >= collective_; });
  };
  try {
    read_arrivals();
    while (!all_reached() && seconds_since(start) < kDrainSeconds) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      read_arrivals();
    }
  } catch (const std::exception&) {  // an MPI failure here: the cancels below still run
  }
}

void Watchdog::wait(MPI_Request& request, const char* what, std::chrono::microseconds poll) {
  const InWait polling;
  auto start = std::chrono::steady_clock::now();
  auto last_poll = start;
  int done = 0;
  check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
  while (done == 0) {
    std::this_thread::sleep_for(poll);
    const auto now = std::chrono::steady_clock::now();
    if (now - last_poll > kStallSeconds) {
      start += now -
               last_poll;  // this rank did not run (stopped, then continued): not the others' delay
      const auto stalled = monotonic_ns();
      stalled_at_ns.store(stalled);
      latch_stop_if_near(stalled, continued_in_wait_at_ns.load());
    }
    last_poll = now;
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done == 0) {
      check_failures();
    }
    if (done == 0 && timeout_seconds_ > 0.0) {
      read_arrivals();
      answer_ping();
      if (seconds_since(start) > limit_seconds()) {
        time_out(what);
      }
    }
  }
  previous_completed_ = last_completed_;
  last_completed_ = std::chrono::steady_clock::now();
  read_arrivals();
}

bool Watchdog::continued_since_last_collective() const {
  const auto ns = [](std::chrono::steady_clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  };
  // Continued during local work since the last collective; or stopped inside a wait since the
  // one before (a stop in the last wait, which then completed): a SIGCONT there with a stall of
  // the wait's polls near it (latched, whichever came first). Either also within the time this
  // wait could take: a continued rank may first complete collectives that need no other rank (a
  // root's broadcast). A SIGCONT alone in a wait is mpiexec ending the job.
  const auto window = std::chrono::duration_cast<std::chrono::nanoseconds>(
                          std::chrono::duration<double>(limit_seconds()) + 2 * kStallSeconds)
                          .count();
  const auto recent = [&](std::int64_t at) { return at > 0 && at > monotonic_ns() - window; };
  const auto continued_at = continued_at_ns.load();
  const auto stopped_at = stopped_in_wait_at_ns.load();
  return continued_at > ns(last_completed_) || stopped_at > ns(previous_completed_) ||
         recent(continued_at) || recent(stopped_at);
}

void Watchdog::check_failures() const {
  if (rank_ != 0) {
    return;
  }
  int waiting = 0;
  MPI_Status status;
  check(MPI_Iprobe(MPI_ANY_SOURCE, kFailureTag, comm_, &waiting, &status), "MPI_Iprobe");
  if (waiting == 0) {
    return;
  }
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  std::string message(static_cast<std::size_t>(std::max(length, 0)), '\0');
  check(MPI_Recv(message.data(), length, MPI_CHAR, status.MPI_SOURCE, kFailureTag, comm_,
                 MPI_STATUS_IGNORE),
        "MPI_Recv");
  throw RankFailed(describe(status.MPI_SOURCE) + " failed: " + message);
}

void Watchdog::report_failure(const std::string& message, double grace_seconds) noexcept {
  MPI_Request request = MPI_REQUEST_NULL;
  if (MPI_Isend(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kFailureTag, comm_,
                &request) != MPI_SUCCESS) {
    return;
  }
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  while (seconds_since(start) <
         grace_seconds) {  // rank 0 ends the job meanwhile, this rank with it
    if (done == 0) {
      MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Watchdog::answer_ping() {
  if (rank_ == 0) {
    return;
  }
  int waiting = 0;
  check(MPI_Iprobe(0, kPingTag, comm_, &waiting, MPI_STATUS_IGNORE), "MPI_Iprobe");
  if (waiting != 0) {
    int ping = 0;
    check(MPI_Recv(&ping, 1, MPI_INT, 0, kPingTag, comm_, MPI_STATUS_IGNORE), "MPI_Recv");
    check(MPI_Send(&ping, 1, MPI_INT, 0, kPongTag, comm_), "MPI_Send");
  }
}

std::vector<int> Watchdog::unresponsive_workers() const {
  static int ping = 1;
  for (int w = 1; w < size_; ++w) {
    MPI_Request request = MPI_REQUEST_NULL;
    MPI_Isend(&ping, 1, MPI_INT, w, kPingTag, comm_, &request);
    MPI_Request_free(&request);
  }
  std::vector<bool> answered(static_cast<std::size_t>(size_), false);
  const auto start = std::chrono::steady_clock::now();
  while (seconds_since(start) < kPingSeconds) {
    int waiting = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, kPongTag, comm_, &waiting, &status);
    if (waiting != 0) {
      int pong = 0;
      MPI_Recv(&pong, 1, MPI_INT, status.MPI_SOURCE, kPongTag, comm_, MPI_STATUS_IGNORE);
      answered[static_cast<std::size_t>(status.MPI_SOURCE)] = true;
    } else {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  std::vector<int> silent;
  for (int w = 1; w < size_; ++w) {
    if (!answered[static_cast<std::size_t>(w)]) {
      silent.push_back(w);
    }
  }
  return silent;
}

std::string Watchdog::describe(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  return "rank " + std::to_string(rank) + " (host " + hosts_[r] + ", pid " +
         std::to_string(pids_[r]) + ")";
}

void Watchdog::time_out(const char* what) const {
  std::ostringstream message;
  message << "watchdog: ";
  if (continued_since_last_collective()) {
    // Stopped itself (outside a wait, or the stall went unseen) and continued, e.g. by mpiexec as
    // it ends the job: the other ranks timed out on this one, so none of them is to blame.
    message << "this rank, " << describe(rank_)
            << ", was stopped and continued (SIGCONT) during collective " << collective_ << " ("
            << what << "); the other ranks have likely timed out on it and ended the job "
            << "(see their messages). Continue from the last checkpoint with --resume";
    throw WatchdogTimeout(message.str());
  }
  std::vector<int> missing;
  for (std::size_t i = 0; i < reached_.size(); ++i) {
    if (reached_[i] < collective_) {
      missing.push_back(static_cast<int>(i) + 1);
    }
  }
  // Every rank arrived, but the collective does not complete: a rank stopped inside it. The live
  // ones wait in it and answer a ping; the silent ones are named.
  const auto silent = rank_ == 0 && missing.empty() ? unresponsive_workers() : std::vector<int>{};
  const auto& named = missing.empty() ? silent : missing;
  if (rank_ != 0) {
    message << "the server " << describe(0) << " or another rank did not complete";
  } else if (named.empty()) {
    message << "every rank reached and answers, but did not complete";
  }
  for (std::size_t m = 0; m < named.size(); ++m) {
    message << (m == 0 ? "" : ", ") << describe(named[m]);
  }
  if (!named.empty()) {
    message << (missing.empty() ? " reached but does not answer in" : " did not reach");
  }
  message << " collective " << collective_ << " (" << what << ") within " << limit_seconds()
          << " s (--round-timeout): stopped, hung, or its node is down. The job "
          << "ends; continue it from the last checkpoint with --resume, or raise --round-timeout "
             "(or give off) if rounds are legitimately this slow";
  throw WatchdogTimeout(message.str());
}

}  // namespace cflrun::comm::detail
