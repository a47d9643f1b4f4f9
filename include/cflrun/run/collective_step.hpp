#pragma once
/// @file
/// Runs a setup step on every rank so that a failure on any rank is reported once and ends all
/// ranks.

#include <iostream>
#include <type_traits>
#include <string>
#include <utility>

#include <cflrun/comm/communicator.hpp>
#include <cflrun/core/error.hpp>

namespace cflrun::run {

/// Thrown on every rank after a collective step failed somewhere; the message was already printed
/// once (by the lowest failing rank), so `main` only exits non-zero.
class ReportedError : public Error {
 public:
  using Error::Error;
};

/// Prints "cflrun: error: <message>" (with the rank when there are several) to stderr.
void print_error(const comm::Communicator& comm, const std::string& message);

/// Calls `step()` on every rank, then agrees (one MPI_Allreduce) on whether any rank threw a
/// cflrun::Error. If one did, the lowest failing rank prints its message and every rank throws
/// ReportedError, so all ranks exit non-zero without a hang. Collective.
/// @return what `step()` returned on this rank.
template <typename Step>
auto collective_step(const comm::Communicator& comm, Step&& step) -> decltype(step()) {
  int failed_rank = comm.size();
  std::string message;
  using Result = decltype(step());
  if constexpr (std::is_void_v<Result>) {
    try {
      step();
    } catch (const Error& e) {
      failed_rank = comm.rank();
      message = e.what();
    }
    const int first_failure = comm.all_min(failed_rank);
    if (first_failure < comm.size()) {
      if (first_failure == comm.rank()) {
        print_error(comm, message);
      }
      throw ReportedError(message);
    }
  } else {
    Result result{};
    collective_step(comm, [&] { result = step(); });
    return result;
  }
}

}  // namespace cflrun::run
