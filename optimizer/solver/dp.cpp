// SPDX-License-Identifier: MIT
// dp: exact solution by OptCNN elimination (solver/elimination.h); a graph that does not
// reduce is handed to ilp, and the result says so.
#include <chrono>
#include <iomanip>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/solver/elimination.h"
#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

/// A count as an integer, or as 1.2e+20 beyond what one prints readably.
std::string count(double n) {
  if (n < 1e15) return fixed(n, 0);
  std::ostringstream o;
  o << std::setprecision(2) << n;
  return o.str();
}

class DpSolver : public Solver {
 public:
  std::string name() const override { return "dp"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    EliminationNeeds needs;
    auto elim = solve_by_elimination(p, &needs);
    if (!elim) {
      const std::string why =
          "the graph does not reduce: the best elimination order found needs a table of " +
          count(needs.largest_table) + " entries, " + count(needs.all_tables) + " in all and " +
          count(needs.additions) + " additions (limits " + count(kMaxEliminationTable) + ", " +
          count(kMaxEliminationTables) + " and " + count(kMaxEliminationWork) + ")";
      try {
        SolveResult r = make_ilp_solver()->solve(p, o);
        r.solver = name();
        r.notes.push_back(why + ": solved by ilp (" + o.formulation + ")");
        return r;
      } catch (const InputError& e) {
        throw InputError("dp: " + why + ", and the ilp it falls back to failed: " + e.what());
      }
    }
    SolveResult r;
    r.solver = name();
    r.choice = std::move(elim->choice);
    r.cost = evaluate(p, r.choice);
    r.optimal = true;
    r.notes.push_back(
        "eliminations: " + std::to_string(elim->leaf_steps) + " leaf, " +
        std::to_string(elim->node_steps) + " node, " + std::to_string(elim->edge_steps) + " edge" +
        (elim->factor_layers
             ? "; bucket elimination of the other " + std::to_string(elim->factor_layers) +
                   " layers (largest table " + std::to_string(elim->largest_table) + " entries)"
             : std::string()));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_dp_solver() { return std::make_unique<DpSolver>(); }

}  // namespace nocflow::optimizer
