#pragma once
// Private to src/comm: turning an MPI return code into an exception.
#include <string>

#include <mpi.h>

#include <cflrun/core/error.hpp>

namespace cflrun::comm::detail {

/// @throws MpiError "<what> failed: <MPI's error text>" if `rc` is not MPI_SUCCESS.
inline void check(int rc, const char* what) {
  if (rc != MPI_SUCCESS) {
    char text[MPI_MAX_ERROR_STRING];
    int length = 0;
    MPI_Error_string(rc, text, &length);
    throw MpiError(std::string(what) +
                   " failed: " + std::string(text, static_cast<std::size_t>(length)));
  }
}

}  // namespace cflrun::comm::detail
