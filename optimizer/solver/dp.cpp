// SPDX-License-Identifier: MIT
// dp: exact solution by OptCNN elimination (solver/elimination.h). Where bucket elimination
// would take long, or with a cutoff (SolveOptions::cutoff), the choices no optimum can take are
// dropped first; a graph that still does not reduce is handed to ilp, and the result says so.
#include <chrono>
#include <cmath>
#include <iomanip>
#include <optional>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/solver/elimination.h"
#include "optimizer/solver/solver.h"
#include "optimizer/solver/tree_bound.h"

namespace nocflow::optimizer {
namespace {

/// A count as an integer, or as 1.2e+20 beyond what one prints readably.
std::string count(double n) {
  if (n < 1e15) return fixed(n, 0);
  std::ostringstream o;
  o << std::setprecision(2) << n;
  return o.str();
}

/// Bucket elimination beyond this many additions (about 10 ms) first drops the choices that no
/// optimum can take (solver/tree_bound.h, as ilp does): exact, and on training graphs it leaves
/// about one choice per layer (resnet18's batch-1 Adam step on 4x4: 224 of 5,381).
constexpr double kAdditionsBeforeBound = 1e7;

class DpSolver : public Solver {
 public:
  std::string name() const override { return "dp"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    SolveResult r;
    r.solver = name();
    EliminationNeeds needs;
    // With a cutoff most solves are expected to stop at it: the bound comes first, before an
    // attempt at the whole problem (on a training graph that attempt costs as much again).
    const bool cut = std::isfinite(o.cutoff);
    std::optional<EliminationResult> elim;
    if (!cut) elim = solve_by_elimination(p, &needs, kAdditionsBeforeBound);
    std::vector<std::vector<int>> kept;  // non-empty: solved on the bound-pruned problem
    if (!elim) {
      BoundPruning bound = prune_by_bound(p, o.cutoff);
      if (bound.above_cutoff) return stopped_at_cutoff(name(), bound.lower, bound.rounds, o, t0);
      kept = std::move(bound.kept);
      std::size_t left = 0, all = 0;
      for (const auto& k : kept) left += k.size();
      for (const auto& costs : p.node) all += costs.size();
      r.notes.push_back((cut ? std::string("with a cutoff")
                             : "bucket elimination would take " + count(needs.additions) +
                                   " additions") +
                        ": bound pruning first, " + std::to_string(left) + " of " +
                        std::to_string(all) + " choices can be optimal");
      elim = solve_by_elimination(restrict_problem(p, kept), &needs);
    }
    if (!elim) {
      const std::string why =
          std::string(kept.empty() ? "the graph" : "what the bound leaves") +
          " does not reduce: the best elimination order found needs a table of " +
          count(needs.largest_table) + " entries, " + count(needs.all_tables) + " in all and " +
          count(needs.additions) + " additions (limits " + count(kMaxEliminationTable) + ", " +
          count(kMaxEliminationTables) + " and " + count(kMaxEliminationWork) + ")";
      try {
        // On the whole problem, so that its statistics count every choice (it prunes alike).
        SolveResult ilp = make_ilp_solver()->solve(p, o);
        ilp.solver = name();
        ilp.notes.insert(ilp.notes.begin(), r.notes.begin(), r.notes.end());
        ilp.notes.push_back(why + ": solved by ilp (" + o.formulation + ")");
        ilp.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return ilp;
      } catch (const InputError& e) {
        throw InputError("dp: " + why + ", and the ilp it falls back to failed: " + e.what());
      }
    }
    r.choice = kept.empty() ? std::move(elim->choice) : unrestricted(elim->choice, kept);
    r.cost = evaluate(p, r.choice);
    r.optimal = true;
    r.notes.push_back(
        "eliminations: " + std::to_string(elim->leaf_steps) + " leaf, " +
        std::to_string(elim->node_steps) + " node, " + std::to_string(elim->edge_steps) + " edge" +
        (elim->factor_layers
             ? "; bucket elimination of the other " + std::to_string(elim->factor_layers) +
                   " layers (largest table " + std::to_string(elim->largest_table) +
                   (elim->largest_table == 1 ? " entry)" : " entries)")
             : std::string()));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_dp_solver() { return std::make_unique<DpSolver>(); }

}  // namespace nocflow::optimizer
