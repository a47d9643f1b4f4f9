#pragma once
/// @file
/// The choice options of a run (RunOptions) as enums, each with the words the command line, config
/// files and /config use for it (core::ChoiceWords). The code compares the enums, never the words.

#include <optional>
#include <string>

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::cli {

/// --first-assignment: how clove and ifca assign the clients in round 1.
enum class FirstAssignment {
  kEvaluation,  ///< evaluation: by the loss vectors of round 1, as every later round.
  kRandom,      ///< random: uniformly at random (the official code's first round).
};
inline constexpr core::ChoiceWords<FirstAssignment, 2> kFirstAssignmentWords{
    {{FirstAssignment::kEvaluation, "evaluation"}, {FirstAssignment::kRandom, "random"}}};

/// --straggler-work: what a client past the round deadline contributes (issue 45).
enum class StragglerWork {
  kDrop,     ///< drop: nothing; it is away for the round.
  kPartial,  ///< partial: the local steps it finished by the deadline (FedProx's partial work).
};
inline constexpr core::ChoiceWords<StragglerWork, 2> kStragglerWorkWords{
    {{StragglerWork::kDrop, "drop"}, {StragglerWork::kPartial, "partial"}}};

/// --aggregation: what the server averages (CLoVE Alg. 1, Options I and II).
enum class Averaging {
  kModel,     ///< model: model averaging after tau local epochs (Option I).
  kGradient,  ///< gradient: gradient averaging, one full-batch gradient per client (Option II).
};
inline constexpr core::ChoiceWords<Averaging, 2> kAveragingWords{
    {{Averaging::kModel, "model"}, {Averaging::kGradient, "gradient"}}};

/// --init: the initial parameters of the K models (CLoVE Fig. 2).
enum class ModelInit {
  kDifferent,  ///< different: each model its own draw.
  kSame,       ///< same: all K models start equal.
};
inline constexpr core::ChoiceWords<ModelInit, 2> kModelInitWords{
    {{ModelInit::kDifferent, "different"}, {ModelInit::kSame, "same"}}};

/// --init-scheme: how one initial model's parameters are drawn.
enum class InitScheme {
  kLibtorch,    ///< libtorch: each layer's default LibTorch initialisation.
  kUnitSphere,  ///< unit_sphere: the flat parameter vector uniform on the unit sphere (CLoVE code).
};
inline constexpr core::ChoiceWords<InitScheme, 2> kInitSchemeWords{
    {{InitScheme::kLibtorch, "libtorch"}, {InitScheme::kUnitSphere, "unit_sphere"}}};

/// --precision: the arithmetic of a GPU's forward and backward passes.
enum class Precision {
  kFp32,  ///< fp32: float32 throughout (TF32 off).
  kTf32,  ///< tf32: TF32 tensor-core matrix products and convolutions.
  kBf16,  ///< bf16: autocast of matrix products and convolutions to bfloat16.
};
inline constexpr core::ChoiceWords<Precision, 3> kPrecisionWords{
    {{Precision::kFp32, "fp32"}, {Precision::kTf32, "tf32"}, {Precision::kBf16, "bf16"}}};

/// --device: where a rank computes.
enum class DeviceChoice {
  kAuto,  ///< auto: a GPU if LibTorch sees one, else the CPU.
  kCpu,   ///< cpu.
  kCuda,  ///< cuda: GPU local rank modulo the node's GPUs.
};
inline constexpr core::ChoiceWords<DeviceChoice, 3> kDeviceChoiceWords{
    {{DeviceChoice::kAuto, "auto"}, {DeviceChoice::kCpu, "cpu"}, {DeviceChoice::kCuda, "cuda"}}};

/// --fidelity: whose choices a run follows where cflrun and the official CLoVE code differ.
enum class Fidelity {
  kCflrun,    ///< cflrun: the paper's text.
  kOfficial,  ///< official: the official code's (official_fidelity_preset()).
};
inline constexpr core::ChoiceWords<Fidelity, 2> kFidelityWords{
    {{Fidelity::kCflrun, "cflrun"}, {Fidelity::kOfficial, "official"}}};

/// The words --round-timeout takes besides a positive number of seconds.
enum class RoundTimeoutWord {
  kAuto,  ///< auto: a bound learned from the run's own rounds (run::RoundTimeout).
  kOff,   ///< off: wait for ever.
};
inline constexpr core::ChoiceWords<RoundTimeoutWord, 2> kRoundTimeoutWords{
    {{RoundTimeoutWord::kAuto, "auto"}, {RoundTimeoutWord::kOff, "off"}}};

/// --round-timeout's value read once for both its check (validate) and its use (run::RoundTimeout).
/// @return std::nullopt for "auto"; 0 for "off"; else the number of seconds (positive, finite).
/// @throws ConfigError "--round-timeout must be auto, off or a positive number of seconds, but got
///         TEXT" for anything else ("", "0", "-3", "5s", "inf", "never").
std::optional<double> parse_round_timeout(const std::string& text);

}  // namespace cflrun::cli
