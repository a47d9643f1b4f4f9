#pragma once
// Private to src/comm: the watchdog of the communicator's collectives (--round-timeout).
//
// Before each collective every worker rank sends rank 0 a one-int "arrived at collective n"
// message; rank 0 keeps one receive posted per worker and reads them while it polls. When a wait
// passes the timeout, rank 0 therefore knows which ranks never reached the collective and names
// them (rank, host, pid); when every rank arrived but the collective does not complete (a rank
// stopped inside it), rank 0 pings the workers, which answer while they wait, and names the silent
// ones. Workers wait twice as long before giving up, so that the server, which
// knows who is missing, speaks first; a worker that times out names the server.
#include <chrono>
#include <string>
#include <vector>

#include <mpi.h>

namespace cflrun::comm::detail {

class Watchdog {
 public:
  /// Gathers every rank's host name and pid (a collective over `comm`) and, on rank 0, posts a
  /// receive per worker. @throws MpiError if an MPI call fails.
  Watchdog(MPI_Comm comm, int rank, int size);
  /// Rank 0 first receives every worker's outstanding arrival messages (at most kDrainSeconds),
  /// so none is left in flight when the communicator is freed (Open MPI may deliver such a
  /// message into the next communicator given the same context id); then it cancels its
  /// receives. A worker frees its last send, which completes in the background.
  ~Watchdog();
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  /// Seconds a wait may take on rank 0 (workers: twice that); 0 = never time out.
  void set_timeout(double seconds) { timeout_seconds_ = seconds; }
  double timeout() const { return timeout_seconds_; }

  /// Call before starting collective number n (all ranks count the same way): a worker tells
  /// rank 0 it arrived. @throws WatchdogTimeout if the previous message cannot be sent in time.
  void arrive();

  /// Waits for `request` with sleeps of `poll` between tests; rank 0 reads arrivals meanwhile.
  /// @throws WatchdogTimeout when the wait passes the timeout, MpiError if MPI fails.
  void wait(MPI_Request& request, const char* what, std::chrono::microseconds poll);
  /// Worker, after an error only it saw: sends `message` to rank 0 (whose waits throw RankFailed
  /// with it), then waits up to `grace_seconds` for rank 0 to end the job. Never throws.
  void report_failure(const std::string& message, double grace_seconds) noexcept;

 private:
  void read_arrivals();
  /// Rank 0: throws RankFailed if a worker reported a failure (report_failure).
  void check_failures() const;
  /// Rank 0: read arrivals until every worker reached collective_ or kDrainSeconds passed.
  void drain_arrivals() noexcept;
  /// Worker: answers rank 0's ping while it waits (see unresponsive_workers).
  void answer_ping();
  /// Rank 0, when every rank arrived at a stuck collective: the workers that do not answer a
  /// ping within kPingSeconds (stopped or hung inside the collective).
  std::vector<int> unresponsive_workers() const;
  [[noreturn]] void time_out(const char* what) const;
  std::string describe(int rank) const;
  double limit_seconds() const;
  /// True when this process was continued (SIGCONT) after its last completed collective: it was
  /// stopped itself, and the other ranks have likely timed out on it and ended the job.
  bool continued_since_last_collective() const;

  MPI_Comm comm_;
  int rank_;
  int size_;
  double timeout_seconds_ = 0.0;
  long collective_ = 0;                                       // collectives started on this rank
  std::chrono::steady_clock::time_point last_completed_;      // when the last wait completed
  std::chrono::steady_clock::time_point previous_completed_;  // when the one before completed
  std::vector<std::string> hosts_;                            // [P] host name of every rank
  std::vector<long> pids_;                                    // [P] process id of every rank
  // rank 0: one posted receive per worker (index rank - 1) and the last collective it reached
  std::vector<MPI_Request> receives_;
  std::vector<long> incoming_;
  std::vector<long> reached_;
  // worker: the message in flight
  MPI_Request send_ = MPI_REQUEST_NULL;
  long outgoing_ = 0;
};

}  // namespace cflrun::comm::detail
