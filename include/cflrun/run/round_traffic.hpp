#pragma once
/// @file
/// The communication of one federated round as a real deployment would have it, for the result
/// file (issue 4 metrics), independent of how cflrun's MPI ranks happen to host the clients.

#include <cstdint>

namespace cflrun::run {

/// Bytes between the server and the clients in one round.
struct RoundTraffic {
  std::int64_t sent = 0;      ///< server to clients (bytes).
  std::int64_t received = 0;  ///< clients to server (bytes).
};

/// Logical traffic of a round (CLoVE Alg. 1 lines 3-13): each participant receives
/// `models_per_client` flat states (float32, `state_size` floats each; all K when it must compute
/// a loss vector, else only its own model) and its assignment (int32); it sends back its loss vector
/// (`loss_vector_length` float32 entries, 0 when none), its updated state (float32) and its sample
/// count (int64).
/// @param participants        clients taking part in the round (>= 0).
/// @param models_per_client   models each participant receives (>= 1).
/// @param state_size          P, floats per model state.
/// @param loss_vector_length  K when loss vectors are sent this round, else 0.
/// @param shared_size         floats of a state shared by all models (IFCA weight sharing, Sec. 4.1):
///                            sent once per client however many models it receives; 0 without sharing.
RoundTraffic round_traffic(int participants, int models_per_client, std::int64_t state_size,
                           int loss_vector_length, std::int64_t shared_size = 0);

/// Logical traffic of a FedSoft round (FedSoft Alg. 1): in an estimation round the server sends
/// all K centers to every client and each returns its K importance weights (float32) and sample
/// count (int64); the clients that train receive the K centers (unless they just did) and send back
/// their local model.
/// @param clients     M, all clients.
/// @param trained     clients selected for at least one center this round.
/// @param models      K centers.
/// @param state_size  P, floats per model state.
/// @param estimation  whether importance weights are estimated this round.
RoundTraffic soft_round_traffic(int clients, int trained, int models, std::int64_t state_size, bool estimation);

}  // namespace cflrun::run
