#pragma once
/// @file
/// The MPI communicator of a run, owned as a resource, with the few collectives a round needs.

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <mpi.h>

namespace cflrun::comm {

namespace detail {
class Watchdog;
}

/// A collective waited longer than the watchdog's timeout (--round-timeout): a rank is stopped,
/// hung or dead. Not a cflrun::Error on purpose: no collective_step may catch it and wait for the
/// missing rank in another collective; `main` reports it and ends the job with MPI_Abort.
class WatchdogTimeout : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Thrown on rank 0 inside a collective when a worker rank reported an error that only it saw
/// (Communicator::end_job_after_error): the message names the rank, its host and pid, and its
/// error. Like WatchdogTimeout not a cflrun::Error: the run marks its result file failed with it
/// and `main` ends the job.
class RankFailed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Owns a duplicate of the communicator it is given (freed on destruction), so cflrun's messages
/// never mix with another library's. Every collective is collective over all ranks of it.
///
/// Waiting ranks sleep instead of spinning: each collective is started non-blocking and then
/// polled with short sleeps. With more ranks than cores (e.g. `mpirun --oversubscribe -np 3` on
/// 2 cores) a spinning server rank would otherwise steal a core from a worker rank training
/// clients. All ranks must therefore call these methods (never raw blocking MPI collectives)
/// on the same communicator, in the same order.
///
/// Watchdog (--round-timeout): before each collective every worker tells rank 0 that it arrived
/// (a one-int message). A wait longer than the timeout on rank 0 (twice it on a worker) throws
/// WatchdogTimeout naming the ranks, hosts and pids that did not arrive (on a worker: the server).
class Communicator {
 public:
  /// Duplicates `base` (MPI_Comm_dup), sets MPI_ERRORS_RETURN on the duplicate (so that MPI errors
  /// become MpiError instead of ending the job) and finds the ranks sharing this node.
  /// @throws MpiError if an MPI call fails.
  /// Also gathers every rank's host name and pid for the watchdog's messages (collective).
  explicit Communicator(MPI_Comm base);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  /// This rank's index in [0, size()); 0 is the server.
  int rank() const { return rank_; }
  /// Number of ranks P.
  int size() const { return size_; }
  /// Rank among the ranks on this node (MPI_COMM_TYPE_SHARED), used to pick a GPU.
  int local_rank() const { return local_rank_; }
  /// Number of ranks on this node, used to split the node's cores into torch threads.
  int local_size() const { return local_size_; }
  /// True on rank 0, the server.
  bool is_root() const { return rank_ == 0; }
  /// The duplicated communicator itself (for tests and MPI calls the class does not wrap). Its
  /// error handler is MPI_ERRORS_RETURN: a failing call returns an error code instead of ending
  /// the job; this class's methods throw MpiError with MPI's error text for it.
  MPI_Comm handle() const { return comm_; }

  /// Broadcasts `count` elements from rank 0 into `data` on every rank. Collective.
  void broadcast(float* data, std::int64_t count) const;
  void broadcast(double* data, std::int64_t count) const;
  void broadcast(int* data, std::int64_t count) const;

  /// Gathers a variable number of doubles from each rank on rank 0, in rank order (MPI_Gatherv).
  /// @return on rank 0 the concatenation of every rank's `local`; empty elsewhere. Collective.
  std::vector<double> gather(const std::vector<double>& local) const;

  /// Element-wise sum of `local` over all ranks, on rank 0 (MPI_Reduce, MPI_SUM). `local` must have
  /// the same size everywhere. @return the sum on rank 0, empty elsewhere. Collective.
  std::vector<double> reduce_sum(const std::vector<double>& local) const;

  /// Minimum of `value` over all ranks, on every rank (MPI_Allreduce, MPI_MIN). Collective.
  int all_min(int value) const;
  /// Maximum of `value` over all ranks, on every rank (MPI_Allreduce, MPI_MAX). Collective.
  int all_max(int value) const;

  /// Sets the watchdog: seconds rank 0 waits in one collective before it throws WatchdogTimeout
  /// (workers wait twice as long); 0 = wait forever. Local to this rank; all ranks should agree.
  void set_timeout(double seconds) const;
  /// The watchdog's timeout in seconds (0 = off).
  double timeout() const;

  /// Ends the whole job (all ranks) with `exit_code` via MPI_Abort; used after an error that
  /// only some ranks saw, so that no rank waits forever in a collective. Never returns.
  [[noreturn]] void abort(int exit_code) const;

  /// Ends the whole job after an error that only this rank saw. A worker first sends `message` to
  /// rank 0, whose next collective wait throws RankFailed with it, so that rank 0 marks the result
  /// file failed and ends the job itself; if it has not within kFailureGraceSeconds (rank 0 is
  /// stopped or gone), the worker ends it. Rank 0 (or a single rank) ends it at once. Never
  /// returns.
  [[noreturn]] void end_job_after_error(const std::string& message, int exit_code) const;

  /// Seconds a failed worker waits for rank 0 to end the job (end_job_after_error).
  static constexpr double kFailureGraceSeconds = 20.0;

 private:
  void broadcast_raw(void* data, std::int64_t count, MPI_Datatype type) const;
  /// Starts a collective (after telling the watchdog) and waits for it politely.
  template <typename Start>
  void run_collective(const char* what, Start&& start) const;
  int all_reduce(int value, MPI_Op op) const;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
  int local_rank_ = 0;
  int local_size_ = 1;
  std::unique_ptr<detail::Watchdog> watchdog_;  // mutable state of const collectives
};

/// Initialises MPI for the lifetime of the object (MPI_Init_thread, funneled) and finalises it on
/// destruction. Create exactly one, first thing in `main`. A process started without a launcher
/// (no OMPI_COMM_WORLD_SIZE, PMIX_RANK or PMI_RANK: Open MPI's singleton) starts MPI locally,
/// 0.36 s sooner: without the orted daemon (OMPI_MCA_ess_singleton_isolated=1; cflrun never calls
/// MPI_Comm_spawn, the daemon's one use) and on the ob1 PML (OMPI_MCA_pml=ob1: no network
/// library loaded), each unless the environment sets it.
/// @throws MpiError if MPI_Init_thread fails.
class Environment {
 public:
  Environment(int& argc, char**& argv);
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;
  /// The world communicator; only `main` should name it.
  MPI_Comm world() const { return MPI_COMM_WORLD; }
};

}  // namespace cflrun::comm
