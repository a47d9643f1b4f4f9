#include "watchdog.hpp"

#include <unistd.h>

#include <algorithm>
#include <sstream>
#include <thread>

#include <cflrun/comm/communicator.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::comm::detail {
namespace {

constexpr int kArrivalTag = 7001;

void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    throw MpiError(std::string(what) + " failed (MPI error " + std::to_string(rc) + ")");
  }
}

std::string this_host() {
  char name[MPI_MAX_PROCESSOR_NAME] = {};
  int length = 0;
  MPI_Get_processor_name(name, &length);
  return std::string(name, static_cast<std::size_t>(length));
}

}  // namespace

Watchdog::Watchdog(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {
  std::vector<char> names(static_cast<std::size_t>(size) * MPI_MAX_PROCESSOR_NAME, '\0');
  std::string host = this_host();
  host.resize(MPI_MAX_PROCESSOR_NAME - 1);
  check(MPI_Allgather(host.c_str(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR, names.data(), MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
                      comm_),
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
      check(MPI_Recv_init(&incoming_[i], 1, MPI_LONG, w, kArrivalTag, comm_, &receives_[i]), "MPI_Recv_init");
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
  for (auto& request : receives_) {
    MPI_Cancel(&request);
    MPI_Wait(&request, MPI_STATUS_IGNORE);
    MPI_Request_free(&request);
  }
  if (send_ != MPI_REQUEST_NULL) {
    MPI_Request_free(&send_);  // completes in the background
  }
}

double Watchdog::limit_seconds() const { return rank_ == 0 ? timeout_seconds_ : 2.0 * timeout_seconds_; }

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

void Watchdog::wait(MPI_Request& request, const char* what, std::chrono::microseconds poll) {
  const auto start = std::chrono::steady_clock::now();
  int done = 0;
  check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
  while (done == 0) {
    std::this_thread::sleep_for(poll);
    check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
    if (done == 0 && timeout_seconds_ > 0.0) {
      read_arrivals();
      const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (waited > limit_seconds()) {
        time_out(what);
      }
    }
  }
  read_arrivals();
}

std::string Watchdog::describe(int rank) const {
  const auto r = static_cast<std::size_t>(rank);
  return "rank " + std::to_string(rank) + " (host " + hosts_[r] + ", pid " + std::to_string(pids_[r]) + ")";
}

void Watchdog::time_out(const char* what) const {
  std::ostringstream message;
  message << "watchdog: ";
  std::vector<int> missing;
  for (std::size_t i = 0; i < reached_.size(); ++i) {
    if (reached_[i] < collective_) {
      missing.push_back(static_cast<int>(i) + 1);
    }
  }
  if (rank_ != 0) {
    message << "the server " << describe(0) << " or another rank did not complete";
  } else if (missing.empty()) {
    message << "every rank reached but one did not complete";
  }
  for (std::size_t m = 0; m < missing.size(); ++m) {
    message << (m == 0 ? "" : ", ") << describe(missing[m]);
  }
  message << (missing.empty() ? "" : " did not reach") << " collective " << collective_ << " (" << what
          << ") within " << limit_seconds() << " s (--round-timeout): stopped, hung, or its node is down. The job "
          << "ends; continue it from the last checkpoint with --resume, or raise --round-timeout (or give off) if "
             "rounds are legitimately this slow";
  throw WatchdogTimeout(message.str());
}

}  // namespace cflrun::comm::detail
