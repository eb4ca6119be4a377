// SPDX-License-Identifier: MIT
#pragma once
// Solvers of the partition problem (solver/problem.h), chosen by name: greedy, greedy-layout,
// dp, dp-local, ilp.
//
// Contract: solve() returns one feasible choice index per layer and its cost as evaluate()
// computes it; exact solvers (dp, ilp with an optimal status) return a minimum, or with a
// cutoff (SolveOptions::cutoff) may return a lower bound above it instead. Bad input
// (memory limit nobody fits, unknown formulation) throws InputError. Solvers are stateless.
#include <chrono>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct SolveOptions {
  double time_limit_s = 60;         ///< ilp: wall-clock limit
  std::string formulation = "flow"; ///< ilp: flow | mccormick
  std::string export_lp;  ///< ilp: write the model to this file (.mps: free MPS, else LP format)
  bool lp_relaxation = true;        ///< ilp: also solve the LP relaxation (reported)
  /// dp, ilp: a solve may stop once it proves that no assignment costs this little
  /// (SolveResult::above_cutoff); for a caller that needs the optimum only where it is within.
  double cutoff = std::numeric_limits<double>::infinity();
};

struct IlpStats {
  std::string formulation;
  int choices = 0;               ///< of the problem handed to the solver
  int choices_within_bound = 0;  ///< of those, the ones that can be optimal (solver/tree_bound.h)
  double upper_bound = 0;        ///< the tree bound's assignment's cost, before branch and bound
  int variables = 0;
  int constraints = 0;
  bool has_lp_relaxation = false;  ///< solved within the time limit
  double lp_relaxation = 0;        ///< the LP relaxation (y, x continuous) of the choices kept
  double lower_bound = 0;  ///< the best known: the tree bound's or the LP relaxation, the larger
  double gap = 0;          ///< (cost − lower_bound) / cost; 0 when proven optimal
  bool optimal = false;
};

struct SolveResult {
  std::string solver;
  std::vector<int> choice;
  double cost = 0;
  double seconds = 0;
  std::vector<std::string> notes;  ///< e.g. "graph not series-parallel: solved by ilp"
  std::optional<IlpStats> ilp;
  /// A proven minimum: dp (or the ilp it fell back to, when that proved it), dp-local when one
  /// window holds every layer, ilp at an optimal status or with its bound meeting its cost.
  bool optimal = false;
  /// Stopped at SolveOptions::cutoff: `cost` is a lower bound above it, `choice` is empty.
  bool above_cutoff = false;
};

class Solver {
 public:
  virtual ~Solver() = default;
  virtual std::string name() const = 0;
  virtual SolveResult solve(const Problem& problem, const SolveOptions& options) const = 0;
  /// How much of the edge costs solve() reads (SetupOptions::edge_tables): None when it reads
  /// layer costs and memory only and picks the same choices with or without dominance pruning
  /// (greedy; evaluate() of its result then counts the layers only); Rows when it reads one
  /// row of each edge (greedy-layout); Full otherwise. Every solver also accepts a problem
  /// with more.
  virtual EdgeTables edge_tables() const { return EdgeTables::Full; }
};

/// What a solve stopped by SolveOptions::cutoff returns: `lower` (above the cutoff), proved by
/// `rounds` rounds of bound pruning (solver/tree_bound.h) after starting at `t0`.
SolveResult stopped_at_cutoff(const std::string& solver, double lower, int rounds,
                              const SolveOptions& o, std::chrono::steady_clock::time_point t0);

/// Throws InputError listing the known names for an unknown one.
std::unique_ptr<Solver> make_solver(const std::string& name);
std::vector<std::string> solver_names();

// Implementations (greedy.cpp, dp.cpp, local.cpp, ilp.cpp).
std::unique_ptr<Solver> make_greedy_solver(bool layout_aware);
std::unique_ptr<Solver> make_dp_solver();
std::unique_ptr<Solver> make_local_dp_solver();
std::unique_ptr<Solver> make_ilp_solver();

}  // namespace nocflow::optimizer
