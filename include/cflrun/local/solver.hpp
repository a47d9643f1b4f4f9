#pragma once
/// @file
/// The clients' local optimizer (--optimizer), as an enum and its option words.

#include <cflrun/core/option_visitor.hpp>

namespace cflrun::local {

/// The local optimizer (--optimizer).
enum class Solver {
  kAdam,  ///< Adam (CLoVE Sec. 5.1), torch::optim::Adam.
  kSgd,   ///< SGD with optional momentum (heavy ball) and weight decay, torch::optim::SGD (PFLlib,
          ///< CFL's code).
};

/// --optimizer's words: adam | sgd.
inline constexpr core::ChoiceWords<Solver, 2> kSolverWords{
    {{Solver::kAdam, "adam"}, {Solver::kSgd, "sgd"}}};

}  // namespace cflrun::local
