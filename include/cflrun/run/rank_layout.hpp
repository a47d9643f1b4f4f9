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

/// The clients hosted by `rank` of `ranks` (issue 2, MPI shape). With one rank, rank 0 hosts all
/// M clients. Otherwise, by default, rank 0 is only the server and the W = P-1 ranks 1..P-1 host
/// contiguous, balanced groups: worker w (rank w+1) gets [w*M/W, (w+1)*M/W), sizes differing by at
/// most one. With `server_hosts_clients` (--server-hosts-clients) every rank hosts a group the same
/// way with W = P and w = rank, the server included. Ranks beyond M hosts host nobody. Client ids,
/// their order in every gather and their results do not depend on the layout (the per-cluster sums
/// are reduced in float64 over the ranks, so they can differ in the last bits).
ClientRange hosted_clients(int rank, int ranks, int num_clients, bool server_hosts_clients = false);

}  // namespace cflrun::run
