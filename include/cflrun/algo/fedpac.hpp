#pragma once
/// @file
/// FedPAC: personalised federated learning with feature alignment and classifier collaboration
/// (Xu et al. 2023, as PFLlib runs it, pfl-baselines-setup.md Sec. 5).

#include <cflrun/algo/client_statistic.hpp>
#include <cflrun/algo/prototypes.hpp>
#include <cflrun/algo/algorithm.hpp>
#include <cflrun/algo/options.hpp>

namespace cflrun::algo {

/// --fedpac-head-pairing: whose collaboration weights a client's new head uses.
enum class HeadPairing {
  kPaper,  ///< paper: its own (Eq. 9).
  kPflib,  ///< pflib: PFLlib's serverpac.py, weights paired with heads in two random orders.
};
inline constexpr core::ChoiceWords<HeadPairing, 2> kHeadPairingWords{
    {{HeadPairing::kPaper, "paper"}, {HeadPairing::kPflib, "pflib"}}};

/// FedPAC's options (--fedpac-lambda, --fedpac-head-pairing).
struct FedPacOptions : Options<FedPacOptions> {
  double lambda = 1.0;  ///< weight of the feature-alignment regulariser (PFLlib's lamda: 1.0).
  /// Whose collaboration weights a client's new head uses (see pflib_head_pairing).
  HeadPairing head_pairing = HeadPairing::kPaper;
  std::string title() const override { return "FedPAC"; }
  void visit(core::OptionVisitor& v) override;
};

/// One model slot per client: the shared body and the client's own head (model::Network's split).
/// Each round every participant computes, with the global body, its feature statistics V_i
/// (Sec. 4.2: sum_k p_k tr(F_k^T F_k) / n_k - p_k^2 ||mu_k||^2, over n_i) and h_i[k] = p_k mu_k
/// (p_k class shares, mu_k class means of the features); the server solves, for each participant i,
/// the classifier-collaboration program min a^T (diag(V) + D_i) a on the simplex, D_i[j, j'] =
/// sum_k <h_i[k] - h_j[k], h_i[k] - h_j'[k]> (Eq. 9, with PFLlib's repair of a non-PSD matrix
/// from its eigenvalues >= 0.01 and weights <= 1e-3 set to 0). A local update first trains the
/// head one pass with the body frozen, then the body --local-epochs passes with the head frozen on
/// CE + lambda MSE(body(x), P_y) toward the global prototypes; the client then reports its class
/// prototypes (eval mode, one pass). The server averages the bodies by sample count (FedAvg), sets
/// client i's head to sum_j a_ij head_j over the participants' trained heads (renormalised over
/// the weights kept; PFLlib leaves their sum slightly below 1), keeps the heads of absent
/// clients, and averages each class's prototypes over the clients that have it. Clients are
/// scored on the global body with their head. ARI is undefined.
///
/// PFLlib pairs the program's rows with heads in another order (its V/h lists follow the selected
/// clients, the heads a re-shuffled upload order); cflrun indexes everything by client id, and
/// --fedpac-head-pairing pflib reproduces PFLlib's pairing (pflib_head_pairing) with the two orders
/// drawn each round from the (seed, kHeadPairing, 0 | 1, round) streams.
class FedPac : public Algorithm {
 public:
  static constexpr const char* kName = "fedpac";
  static constexpr const char* kSummary =
      "FedPAC: feature alignment to global prototypes, per-client heads combined by a QP (Xu et "
      "al. 2023)";
  using Options = FedPacOptions;
  /// @throws ConfigError unless the model is a classifier with a body/head split trained on
  ///         labels, or with gradient averaging.
  FedPac(const FedPacOptions& options, const AlgorithmContext& context);
  std::string name() const override { return kName; }
  /// M: model slot i is client i's (global body, own head).
  int num_models() const override { return context_.num_clients; }
  Traits traits() const override {
    return {.clusters_clients = false,
            .same_initial_models = true,
            .no_gradient_averaging = "bodies and heads are averaged models",
            .no_model_count = "it keeps one shared body and a head per client"};
  }
  /// The procedure (head pass, aligned body passes, prototype reports) and the statistic (V_i and
  /// h_i with the round's global body, [1 + C d] per client).
  ClientSide client_side() const override;
  /// The participants' feature statistics.
  std::vector<ClientQuery> queries(int round, const std::vector<int>& participants) override;
  /// @throws ShapeError if the statistics are not [m, 1 + C d].
  RoundPlan plan(const RoundInput& input) override;
  /// Reports [n, C d + C]: each client's prototypes, then its class counts; the next round's
  /// feature alignment uses their average (returns nothing: clients are scored by their models).
  AlgorithmState receive_reports(int round, const std::vector<int>& clients,
                                 const torch::Tensor& reports) override;
  /// "prototypes" [C, d], "present" [C] float64.
  AlgorithmState state() const override;
  void restore(const AlgorithmState& state) override;

 private:
  FedPacOptions options_;
  AlgorithmContext context_;
  GlobalPrototypes prototypes_;
};

/// FedPAC's classifier-collaboration weights of client i among m clients (Eq. 9, PFLlib's
/// solve_quadratic): argmin a^T (diag(V) + D_i) a on the simplex, weights <= 1e-3 set to 0; the
/// unit vector of i if the matrix cannot be made positive semidefinite. D_i = A_i A_i^T (rows of
/// A_i: h_i - h_j) comes from the Gram matrix of the references in O(m^2 C d); where every V_j is
/// clearly positive, P_i is positive definite and PFLlib's eigenvalue test and repair are skipped
/// (they cannot apply); otherwise P_i is built from A_i, tested and repaired as PFLlib does.
/// @param i          the client, 0 <= i < m.
/// @param variances  [m] float64 V_j; @param references [m, C, d] float64 h_j.
/// @return [m] float64.
/// @throws Error if the fallback solver (NLopt's SLSQP) fails (see minimise_on_simplex).
torch::Tensor combination_weights(int i, const torch::Tensor& variances,
                                  const torch::Tensor& references);

/// combination_weights of every client i, sharing one Gram matrix G = H H^T of the references
/// (O(m^2 C d) once; then O(m^2) to build each P_i and an active-set solve of the program).
/// @param variances  [m] float64 V_j; @param references [m, C, d] float64 h_j.
/// @return [m, m] float64, row i = combination_weights(i, variances, references).
/// @throws Error if the fallback solver (NLopt's SLSQP) fails.
torch::Tensor all_combination_weights(const torch::Tensor& variances,
                                      const torch::Tensor& references);

/// The head weights as PFLlib's serverpac.py pairs them (pfl-baselines-setup.md Sec. 5, "Index
/// mismatch"): its V and h lists, and so the rows and columns of the programs, follow the selection
/// order S (np.random.choice), while the uploaded heads and ids follow the upload order U
/// (random.sample of the selected clients); the i-th program's weights a_{S_i} then combine the
/// heads in U's order and go to client U_i: result[U_i, U_j] = weights[S_i, S_j]. A client so gets
/// the weights of another (S_i) on the heads permuted alike; its own head receives that client's
/// self-weight. (PFLlib's fallback for a program it cannot solve, uploaded_heads[cid], indexes the
/// upload list by a client id; cflrun's fallback row e_i keeps the pairing above instead.)
/// @param weights    [m, m] float64, row i = the correct weights of participant i on each
/// participant's head.
/// @param selection  [m] int64, S: a permutation of the positions 0..m-1.
/// @param upload     [m] int64, U: another permutation.
/// @return [m, m] float64, the weights each participant's new head takes from each participant's
/// head.
/// @throws ShapeError if the orders are not [m] or the weights not [m, m].
torch::Tensor pflib_head_pairing(const torch::Tensor& weights, const torch::Tensor& selection,
                                 const torch::Tensor& upload);

/// A client's feature statistics (Sec. 4.2, PFLlib's statistics_extraction): V and h [C, d] from
/// its features [n, d] and labels [n]. @return (V, h) as ([1], [C, d]) float64.
std::pair<torch::Tensor, torch::Tensor> feature_statistics(const torch::Tensor& features,
                                                           const torch::Tensor& labels,
                                                           int num_classes);

}  // namespace cflrun::algo
