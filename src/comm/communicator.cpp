#include <cflrun/comm/communicator.hpp>

#include <chrono>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <string>
#include <thread>

#include <cflrun/core/error.hpp>

#include "mpi_check.hpp"
#include "watchdog.hpp"

namespace cflrun::comm {
namespace {

using detail::check;

/// Sleep between polls of a pending collective: short against a round (~0.1-1 s), long enough that
/// an idle rank uses well under 1% of a core.
constexpr auto kPollInterval = std::chrono::microseconds(200);

int to_int_count(std::int64_t count, const char* what) {
  if (count < 0 || count > std::numeric_limits<int>::max()) {
    throw MpiError(std::string(what) + ": message of " + std::to_string(count) +
                   " elements exceeds MPI's int count limit");
  }
  return static_cast<int>(count);
}

/// True when no launcher started this process, so that MPI_Init makes it Open MPI's singleton:
/// mpirun sets OMPI_COMM_WORLD_SIZE, srun PMIX_RANK (PMIx) or PMI_RANK (PMI-2).
bool started_without_launcher() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) {
      return false;
    }
  }
  return true;
}

/// A singleton talks to nobody, so it needs neither the orted daemon that only MPI_Comm_spawn
/// uses (cflrun never spawns) nor a network PML: the cm PML's load alone (libpsm2's start-up
/// sleeps) took 0.21 s. Measured on a 2-core Intel VM with Open MPI 4.1.4, `cflrun --version`:
/// 0.64 s as Open MPI starts a singleton, 0.50 s isolated, 0.28 s isolated on the ob1 PML (0.25 s
/// without MPI). Values the user set win.
void use_local_singleton() {
  setenv("OMPI_MCA_ess_singleton_isolated", "1", /*overwrite=*/0);
  setenv("OMPI_MCA_pml", "ob1", /*overwrite=*/0);
}

/// A communicator of this rank's node (the ranks that share its memory), freed on scope exit, also
/// when a query on it throws.
class NodeCommunicator {
 public:
  NodeCommunicator(MPI_Comm comm, int rank) {
    check(MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node_),
          "MPI_Comm_split_type");
  }
  NodeCommunicator(const NodeCommunicator&) = delete;
  NodeCommunicator& operator=(const NodeCommunicator&) = delete;
  ~NodeCommunicator() {
    if (node_ != MPI_COMM_NULL) {
      MPI_Comm_free(&node_);
    }
  }
  MPI_Comm get() const { return node_; }

 private:
  MPI_Comm node_ = MPI_COMM_NULL;
};

}  // namespace

Communicator::Communicator(MPI_Comm base) {
  check(MPI_Comm_dup(base, &comm_), "MPI_Comm_dup");
  // MPI's default on a communicator is MPI_ERRORS_ARE_FATAL (the job aborts inside the call): with
  // MPI_ERRORS_RETURN every call returns its error code, which check() turns into MpiError.
  check(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  const NodeCommunicator node(comm_, rank_);  // inherits MPI_ERRORS_RETURN from comm_
  check(MPI_Comm_rank(node.get(), &local_rank_), "MPI_Comm_rank (node)");
  check(MPI_Comm_size(node.get(), &local_size_), "MPI_Comm_size (node)");
  watchdog_ = std::make_unique<detail::Watchdog>(comm_, rank_, size_);
}

Communicator::~Communicator() {
  watchdog_.reset();
  if (comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) {
      MPI_Comm_free(&comm_);
    }
  }
}

template <typename Start>
void Communicator::run_collective(const char* what, Start&& start) const {
  watchdog_->arrive();
  MPI_Request request = MPI_REQUEST_NULL;
  check(start(request), what);
  watchdog_->wait(request, what, kPollInterval);
}

void Communicator::set_timeout(double seconds) const { watchdog_->set_timeout(seconds); }

double Communicator::timeout() const { return watchdog_->timeout(); }

void Communicator::broadcast_raw(void* data, std::int64_t count, MPI_Datatype type) const {
  const int n = to_int_count(count, "broadcast");
  run_collective("MPI_Ibcast",
                 [&](MPI_Request& r) { return MPI_Ibcast(data, n, type, 0, comm_, &r); });
}

void Communicator::broadcast(float* data, std::int64_t count) const {
  broadcast_raw(data, count, MPI_FLOAT);
}
void Communicator::broadcast(double* data, std::int64_t count) const {
  broadcast_raw(data, count, MPI_DOUBLE);
}
void Communicator::broadcast(int* data, std::int64_t count) const {
  broadcast_raw(data, count, MPI_INT);
}

std::vector<double> Communicator::gather(const std::vector<double>& local) const {
  int count = to_int_count(static_cast<std::int64_t>(local.size()), "gather");
  std::vector<int> counts(is_root() ? size_ : 0);
  run_collective("MPI_Igather", [&](MPI_Request& r) {
    return MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_, &r);
  });
  std::vector<int> displacements(counts.size(), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = to_int_count(total, "gather");
    total += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  run_collective("MPI_Igatherv", [&](MPI_Request& r) {
    return MPI_Igatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(),
                        displacements.data(), MPI_DOUBLE, 0, comm_, &r);
  });
  return all;
}

std::vector<double> Communicator::reduce_sum(const std::vector<double>& local) const {
  std::vector<double> sum(is_root() ? local.size() : 0);
  const int n = to_int_count(static_cast<std::int64_t>(local.size()), "reduce");
  run_collective("MPI_Ireduce", [&](MPI_Request& r) {
    return MPI_Ireduce(local.data(), sum.data(), n, MPI_DOUBLE, MPI_SUM, 0, comm_, &r);
  });
  return sum;
}

int Communicator::all_reduce(int value, MPI_Op op) const {
  int result = value;
  run_collective("MPI_Iallreduce", [&](MPI_Request& r) {
    return MPI_Iallreduce(&value, &result, 1, MPI_INT, op, comm_, &r);
  });
  return result;
}

int Communicator::all_min(int value) const { return all_reduce(value, MPI_MIN); }

int Communicator::all_max(int value) const { return all_reduce(value, MPI_MAX); }

void Communicator::end_job_after_error(const std::string& message, int exit_code) const {
  if (rank_ != 0 && watchdog_) {
    watchdog_->report_failure(message, kFailureGraceSeconds);
  }
  abort(exit_code);
}

void Communicator::abort(int exit_code) const {
  if (size_ == 1) {  // nobody to stop: exit without MPI_Abort's notice
    std::cout.flush();
    std::cerr.flush();
    std::_Exit(exit_code);
  }
  MPI_Abort(comm_ == MPI_COMM_NULL ? MPI_COMM_WORLD : comm_, exit_code);
  std::_Exit(exit_code);
}

Environment::Environment(int& argc, char**& argv) {
  if (started_without_launcher()) {
    use_local_singleton();
  }
  int provided = 0;
  check(MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
}

Environment::~Environment() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized == 0) {
    MPI_Finalize();
  }
}

}  // namespace cflrun::comm
