// SPDX-License-Identifier: MIT
// ilp: the partition problem as a MILP (solver/ilp_formulation.h) solved by lp_solve.
#include <chrono>
#include <cmath>

#include "noc/base/error.h"
#include "optimizer/solver/ilp_formulation.h"
#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

class IlpSolver : public Solver {
 public:
  std::string name() const override { return "ilp"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    const IlpModel m = build_ilp(p, o.formulation);
    IlpStats stats;
    stats.formulation = o.formulation;
    stats.variables = static_cast<int>(m.lp.vars().size());
    stats.constraints = static_cast<int>(m.lp.rows().size());
    const LpSolution s = solve_lp(m.lp, {o.time_limit_s, false, o.export_lp});
    if (s.status == LpStatus::Infeasible)
      throw InputError("ILP infeasible: no assignment of choices satisfies the constraints "
                       "(memory limit " + std::to_string(static_cast<long long>(p.memory_limit)) + " bytes)");
    if (s.status == LpStatus::NoSolution || s.status == LpStatus::Error)
      throw InputError("ILP (" + o.formulation + ", " + std::to_string(m.lp.vars().size()) +
                       " variables): no feasible solution found within the time limit of " +
                       std::to_string(static_cast<long long>(std::lround(o.time_limit_s))) +
                       " s (raise --time-limit, or plan with --solver dp-local or greedy-layout)");
    // The root relaxation comes from branch and bound itself; solve it apart only if lp_solve
    // did not report it.
    stats.lp_relaxation = s.root_relaxation;
    if (o.lp_relaxation && !s.has_root_relaxation)
      stats.lp_relaxation = solve_lp(m.lp, {o.time_limit_s, true, ""}).objective;
    SolveResult r;
    r.solver = name();
    for (const auto& xs : m.x) {
      int best = 0;
      for (std::size_t i = 1; i < xs.size(); ++i)
        if (s.values[static_cast<std::size_t>(xs[i])] > s.values[static_cast<std::size_t>(xs[static_cast<std::size_t>(best)])])
          best = static_cast<int>(i);
      r.choice.push_back(best);
    }
    r.cost = evaluate(p, r.choice);
    stats.optimal = s.status == LpStatus::Optimal;
    if (!stats.optimal && r.cost > 0) {
      r.notes.push_back("time limit reached: solution not proven optimal");
      stats.gap = std::max(0.0, (r.cost - stats.lp_relaxation) / r.cost);
    }
    r.ilp = stats;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_ilp_solver() { return std::make_unique<IlpSolver>(); }

}  // namespace nocflow::optimizer
