#pragma once
/// @file
/// Partial participation: the clients that take part in a round (CLoVE Alg. 1 line 2).

#include <cstdint>
#include <vector>

namespace cflrun::run {

/// Number of clients per round for a participation fraction: round(fraction x M), at least 1.
/// @throws ConfigError if fraction is not in (0, 1].
int participants_per_round(int num_clients, double fraction);

/// The participants M(t) of round `round`: all M clients when fraction == 1, else
/// participants_per_round(M, fraction) clients drawn uniformly without replacement from the
/// (seed, kParticipation, 0, round) stream. Every rank computes the same set locally, so no
/// message is needed, and the draw does not depend on the rank count.
/// @return client ids in increasing order.
std::vector<int> draw_participants(int num_clients, double fraction, std::uint64_t seed, int round);

}  // namespace cflrun::run
