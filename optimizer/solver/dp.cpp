// SPDX-License-Identifier: MIT
// dp: exact solution by OptCNN elimination (solver/elimination.h); a graph that does not
// reduce is handed to ilp, and the result says so.
#include <chrono>

#include "optimizer/solver/elimination.h"
#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

class DpSolver : public Solver {
 public:
  std::string name() const override { return "dp"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    auto elim = solve_by_elimination(p);
    if (!elim) {
      SolveResult r = make_ilp_solver()->solve(p, o);
      r.solver = name();
      r.notes.push_back("graph does not reduce by node/edge elimination: solved by ilp (" +
                        o.formulation + ")");
      return r;
    }
    SolveResult r;
    r.solver = name();
    r.choice = std::move(elim->choice);
    r.cost = evaluate(p, r.choice);
    r.notes.push_back("eliminations: " + std::to_string(elim->leaf_steps) + " leaf, " +
                      std::to_string(elim->node_steps) + " node, " +
                      std::to_string(elim->edge_steps) + " edge" +
                      (elim->enumerated_layers ? ", " + std::to_string(elim->enumerated_layers) +
                                                     " layers enumerated" : std::string()));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_dp_solver() { return std::make_unique<DpSolver>(); }

}  // namespace nocflow::optimizer
