#include <cflrun/comm/communicator.hpp>

#include <chrono>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include <cflrun/core/error.hpp>

namespace cflrun::comm {
namespace {

/// Sleep between polls of a pending collective: short against a round (~0.1-1 s), long enough that
/// an idle rank uses well under 1% of a core.
constexpr auto kPollInterval = std::chrono::microseconds(200);

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw MpiError(std::string(what) + " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
}

/// Waits for a non-blocking request by polling with sleeps rather than spinning.
void wait_politely(MPI_Request& request, const char* what) {
  int done = 0;
  check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
  while (done == 0) {
    std::this_thread::sleep_for(kPollInterval);
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
  }
}

int to_int_count(std::int64_t count, const char* what) {
  if (count < 0 || count > std::numeric_limits<int>::max()) {
    throw MpiError(std::string(what) + ": message of " + std::to_string(count) +
                   " elements exceeds MPI's int count limit");
  }
  return static_cast<int>(count);
}

}  // namespace

Communicator::Communicator(MPI_Comm base) {
  check(MPI_Comm_dup(base, &comm_), "MPI_Comm_dup");
  check(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
  MPI_Comm node = MPI_COMM_NULL;
  check(MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node),
        "MPI_Comm_split_type");
  MPI_Comm_rank(node, &local_rank_);
  MPI_Comm_size(node, &local_size_);
  MPI_Comm_free(&node);
}

Communicator::~Communicator() {
  if (comm_ != MPI_COMM_NULL) {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized == 0) {
      MPI_Comm_free(&comm_);
    }
  }
}

void Communicator::broadcast_raw(void* data, std::int64_t count, MPI_Datatype type) const {
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ibcast(data, to_int_count(count, "broadcast"), type, 0, comm_, &request), "MPI_Ibcast");
  wait_politely(request, "MPI_Ibcast");
}

void Communicator::broadcast(float* data, std::int64_t count) const { broadcast_raw(data, count, MPI_FLOAT); }
void Communicator::broadcast(double* data, std::int64_t count) const { broadcast_raw(data, count, MPI_DOUBLE); }
void Communicator::broadcast(int* data, std::int64_t count) const { broadcast_raw(data, count, MPI_INT); }

std::vector<double> Communicator::gather(const std::vector<double>& local) const {
  int count = to_int_count(static_cast<std::int64_t>(local.size()), "gather");
  std::vector<int> counts(is_root() ? size_ : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Igather(&count, 1, MPI_INT, counts.data(), 1, MPI_INT, 0, comm_, &request), "MPI_Igather");
  wait_politely(request, "MPI_Igather");
  std::vector<int> displacements(counts.size(), 0);
  std::int64_t total = 0;
  for (std::size_t r = 0; r < counts.size(); ++r) {
    displacements[r] = to_int_count(total, "gather");
    total += counts[r];
  }
  std::vector<double> all(static_cast<std::size_t>(total));
  check(MPI_Igatherv(local.data(), count, MPI_DOUBLE, all.data(), counts.data(), displacements.data(),
                     MPI_DOUBLE, 0, comm_, &request),
        "MPI_Igatherv");
  wait_politely(request, "MPI_Igatherv");
  return all;
}

std::vector<double> Communicator::reduce_sum(const std::vector<double>& local) const {
  std::vector<double> sum(is_root() ? local.size() : 0);
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Ireduce(local.data(), sum.data(), to_int_count(static_cast<std::int64_t>(local.size()), "reduce"),
                    MPI_DOUBLE, MPI_SUM, 0, comm_, &request),
        "MPI_Ireduce");
  wait_politely(request, "MPI_Ireduce");
  return sum;
}

int Communicator::all_min(int value) const {
  int result = value;
  MPI_Request request = MPI_REQUEST_NULL;
  check(MPI_Iallreduce(&value, &result, 1, MPI_INT, MPI_MIN, comm_, &request), "MPI_Iallreduce");
  wait_politely(request, "MPI_Iallreduce");
  return result;
}

void Communicator::abort(int exit_code) const {
  MPI_Abort(comm_ == MPI_COMM_NULL ? MPI_COMM_WORLD : comm_, exit_code);
  std::_Exit(exit_code);
}

Environment::Environment(int& argc, char**& argv) {
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
