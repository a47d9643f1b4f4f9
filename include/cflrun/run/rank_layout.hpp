#pragma once
/// @file
/// Which clients each MPI rank hosts.

namespace cflrun::run {

/// A half-open range of client ids [first, end).
struct ClientRange {
  int first = 0;
  int end = 0;
  int size() const { return end - first; }
};

/// The clients hosted by `rank` of `ranks` (issue 2, MPI shape): with one rank, rank 0 hosts all
/// M clients; otherwise rank 0 is only the server and ranks 1..P-1 host contiguous, balanced
/// groups (sizes differ by at most one; worker w gets [w*M/W, (w+1)*M/W) with W = P-1).
/// Ranks beyond M workers host nobody.
ClientRange hosted_clients(int rank, int ranks, int num_clients);

}  // namespace cflrun::run
