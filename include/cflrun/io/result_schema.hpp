#pragma once
/// @file
/// Names of the groups, datasets and attributes of a cflrun result file: the contract between
/// ResultWriter, ResultReader and anyone reading results with h5py. results/README.md documents
/// the dtype and shape of each. T = finished rounds, M = clients, K = models, P = timing phases.

#include <cstdint>

namespace cflrun::io::schema {

/// Version of this layout, stored as root attribute `schema_version`; bump on incompatible change.
inline constexpr std::int64_t kSchemaVersion = 1;

inline constexpr const char* kConfigGroup = "/config";  ///< string attributes, one per option
inline constexpr const char* kRoundsGroup = "/rounds";
inline constexpr const char* kClientsGroup = "/clients";
/// Group whose float64 attributes hold the run's table figures, written when the run completes.
inline constexpr const char* kSummaryGroup = "/summary";
/// Group of what a changing population records once (issue 45).
inline constexpr const char* kPopulationGroup = "/population";
/// Group of an algorithm's own per-round datasets (e.g. CFL's update norms).
inline constexpr const char* kAlgorithmGroup = "/algorithm";

inline constexpr const char* kAri = "/rounds/ari";            ///< [T] float64
inline constexpr const char* kAccuracy = "/rounds/accuracy";  ///< [T] float64
/// Sample-weighted test accuracy: the clients' correct test samples over their test samples (the
/// definition of PFLlib and FlexCFL); kAccuracy is the mean over clients (the CLoVE notebook's).
inline constexpr const char* kAccuracyWeighted = "/rounds/accuracy_weighted";  ///< [T] float64
/// With --train-accuracy only: the mean over clients of each client's accuracy on its own training
/// samples under the model it is assigned, before the round's local update (the CLoVE notebook's
/// FedAvg accuracy: the loss-vector evaluation on the training data at the start of the round).
inline constexpr const char* kAccuracyTrain = "/rounds/accuracy_train";  ///< [T] float64
inline constexpr const char* kTestLoss = "/rounds/test_loss";            ///< [T] float64
inline constexpr const char* kTrainLoss = "/rounds/train_loss";          ///< [T] float64
inline constexpr const char* kSeconds = "/rounds/seconds";               ///< [T, P] float64
inline constexpr const char* kWorkerComputeSeconds = "/rounds/worker_compute_seconds";  ///< [T]
inline constexpr const char* kBytesSent = "/rounds/bytes_sent";          ///< [T] int64
inline constexpr const char* kBytesReceived = "/rounds/bytes_received";  ///< [T] int64
/// Models the algorithm maintains in each round, <= num_models (CFL's cluster count grows).
inline constexpr const char* kLiveModels = "/rounds/live_models";  ///< [T] int32

/// Ground-truth cluster of each client: [M] int32 for a fixed population; [T, M] int32, that
/// round's truth, for a changing one (--changes, issue 45).
inline constexpr const char* kTrueCluster = "/clients/true_cluster";
/// A changing population only: 1 if the client was present in the round (joined, not dropped
/// out, not past the round deadline), else 0.
inline constexpr const char* kAvailable = "/clients/available";  ///< [T, M] int32
/// A changing population only: the 1-based rounds at which a --changes event takes effect,
/// increasing, without repeats (report's recovery rounds count from them).
inline constexpr const char* kChangeRounds = "/population/change_rounds";  ///< [C] int32
inline constexpr const char* kAssignment = "/clients/assignment";          ///< [T, M] int32
inline constexpr const char* kLossVectors = "/clients/loss_vectors";       ///< [T, M, K] float32
inline constexpr const char* kClientAccuracy = "/clients/accuracy";        ///< [T, M] float32
inline constexpr const char* kClientTestLoss = "/clients/test_loss";       ///< [T, M] float32
/// Mixture partitions (S sources): true share of each source in each client's data.
inline constexpr const char* kMixture = "/clients/mixture";  ///< [M, S] float64
/// Soft clustering (FedSoft): each client's importance weights u over the K models, per round
/// (an extra dataset of algo::FedSoft).
inline constexpr const char* kImportance = "/clients/importance";  ///< [T, M, K] float32
/// Mixture partitions: accuracy (NaN without labels) and mean loss of model j on the holdout set
/// of source s, per round.
inline constexpr const char* kSourceAccuracy = "/rounds/source_accuracy";  ///< [T, K, S] float32
inline constexpr const char* kSourceLoss = "/rounds/source_loss";          ///< [T, K, S] float32

/// Attribute of kSeconds: [P] strings, the phase of each column.
inline constexpr const char* kPhasesAttribute = "phases";

// Root attributes.
inline constexpr const char* kCompletedRounds = "completed_rounds";       ///< int64, rows written
inline constexpr const char* kPlannedRounds = "planned_rounds";           ///< int64
inline constexpr const char* kStatus = "status";                          ///< string
inline constexpr const char* kSchemaVersionAttribute = "schema_version";  ///< int64
inline constexpr const char* kNumClients = "num_clients";                 ///< int64, M
inline constexpr const char* kNumModels = "num_models";                   ///< int64, K

/// Values of the `status` attribute ("failed: <message>" on failure).
inline constexpr const char* kStatusRunning = "running";
inline constexpr const char* kStatusComplete = "complete";
inline constexpr const char* kStatusFailedPrefix = "failed: ";
inline constexpr const char* kStatusInterruptedPrefix = "interrupted: ";

}  // namespace cflrun::io::schema
