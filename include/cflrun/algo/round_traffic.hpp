#pragma once
/// @file
/// The communication of one federated round as a real deployment would have it (the result
/// file's /rounds/bytes_sent and /rounds/bytes_received), independent of how cflrun's MPI ranks
/// happen to host the clients.

#include <cstdint>

namespace cflrun::algo {

/// Bytes between the server and the clients in one round.
struct RoundTraffic {
  std::int64_t sent = 0;      ///< server to clients (bytes).
  std::int64_t received = 0;  ///< clients to server (bytes).
};

/// What moved in one round, counted by run::Experiment from the round's queries and plan.
struct RoundFacts {
  int num_models = 0;           ///< K.
  std::int64_t state_size = 0;  ///< P, floats of one model's flat state.
  std::int64_t shared_size =
      0;  ///< floats of a state shared by all models (IFCA weight sharing, Sec. 4.1), sent once.
  int received_all_models =
      0;  ///< clients sent all K models (they answered a query computed on them).
  int received_one_model =
      0;  ///< other clients that trained from a server model, sent just that one.
  int received_initial_model = 0;  ///< clients sent the client initial model for a warm-up update.
  int assignments = 0;             ///< clients told which model to train (a 4-byte index each).
  std::int64_t answer_floats = 0;  ///< floats in all query answers (4 bytes each).
  int states = 0;                  ///< clients that sent back a trained state or gradient.
};

/// The traffic of a round in which the server sends models and assignments and every trained
/// client returns its state (float32) with its sample count (int64) (CLoVE Alg. 1 lines 3-13):
/// sent = 4 (received_all_models (shared + K (P - shared)) + (received_one_model +
/// received_initial_model) P + assignments),
/// received = 4 answer_floats + states (4 P + 8).
RoundTraffic round_traffic(const RoundFacts& facts);

/// The traffic of a FedSoft round (FedSoft Alg. 1): in an estimation round the server sends all K
/// centers to every client and each returns its K importance weights (float32) and sample count
/// (int64); the clients that train receive the K centers (unless they just did) and send back
/// their local model.
/// @param clients     clients that estimated importance weights this round (0 outside estimation
/// rounds).
/// @param trained     clients selected for at least one center this round.
/// @param models      K centers.
/// @param state_size  P, floats per model state.
RoundTraffic soft_round_traffic(int clients, int trained, int models, std::int64_t state_size);

}  // namespace cflrun::algo
