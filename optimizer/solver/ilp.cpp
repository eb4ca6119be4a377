// SPDX-License-Identifier: MIT
// ilp: the partition problem as a MILP (solver/ilp_formulation.h) solved by lp_solve.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "noc/base/error.h"
#include "optimizer/solver/ilp_formulation.h"
#include "optimizer/solver/solver.h"
#include "optimizer/solver/tree_bound.h"

namespace nocflow::optimizer {
namespace {

class IlpSolver : public Solver {
 public:
  std::string name() const override { return "ilp"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    // Only choices that can be in an optimum (solver/tree_bound.h) become variables.
    const BoundPruning bound = prune_by_bound(p, o.cutoff);
    if (bound.above_cutoff) return stopped_at_cutoff(name(), bound.lower, bound.rounds, o, t0);
    const std::vector<std::vector<int>>& kept = bound.kept;
    const IlpModel m = build_ilp(restrict_problem(p, kept), o.formulation, kept);
    IlpStats stats;
    stats.formulation = o.formulation;
    for (int l = 0; l < p.num_layers(); ++l) {
      stats.choices += p.num_choices(l);
      stats.choices_within_bound += static_cast<int>(kept[static_cast<std::size_t>(l)].size());
    }
    stats.upper_bound = bound.upper;
    stats.variables = static_cast<int>(m.lp.vars().size());
    stats.constraints = static_cast<int>(m.lp.rows().size());
    // The time limit is branch and bound's, with the relaxation solved apart if need be: the
    // bound's pruning before it is not limited (stopped early, it left lp_solve a model of
    // millions of variables to build, and a worse answer in the same time).
    const auto t_bb = std::chrono::steady_clock::now();
    const auto left = [&] {
      return o.time_limit_s -
             std::chrono::duration<double>(std::chrono::steady_clock::now() - t_bb).count();
    };
    const LpSolution s = solve_lp(m.lp, {o.time_limit_s, false, o.export_lp});
    if (s.status == LpStatus::Infeasible)
      throw InputError("ILP infeasible: no assignment of choices satisfies the constraints "
                       "(memory limit " + std::to_string(static_cast<long long>(p.memory_limit)) + " bytes)");
    if (s.status == LpStatus::Error)
      throw InputError(
          "ILP (" + o.formulation + ", " + std::to_string(m.lp.vars().size()) +
          " variables): lp_solve failed (plan with --solver dp-local or greedy-layout)");
    // The root relaxation comes from branch and bound itself; solve it apart only if lp_solve
    // finished without reporting it. Stopped at the time limit before the root was solved, the
    // same LP alone would take another time limit for nothing (one stopped there bounds
    // nothing and is left out). The LP of the choices within bound bounds the whole problem,
    // which has the same optimum.
    stats.has_lp_relaxation = s.has_root_relaxation;
    stats.lp_relaxation = s.root_relaxation;
    if (o.lp_relaxation && !s.has_root_relaxation && s.status == LpStatus::Optimal && left() > 0)
      if (const LpSolution relaxed = solve_lp(m.lp, {left(), true, ""});
          relaxed.status == LpStatus::Optimal)
        stats.lp_relaxation = relaxed.objective, stats.has_lp_relaxation = true;
    stats.lower_bound =
        std::max(bound.lower, stats.has_lp_relaxation ? stats.lp_relaxation : bound.lower);
    SolveResult r;
    r.solver = name();
    r.choice = bound.assignment;
    r.cost = bound.upper;
    if (s.status != LpStatus::NoSolution) {
      std::vector<int> found;
      for (std::size_t l = 0; l < m.x.size(); ++l) {
        const auto& xs = m.x[l];
        std::size_t best = 0;
        for (std::size_t i = 1; i < xs.size(); ++i)
          if (s.values[static_cast<std::size_t>(xs[i])] >
              s.values[static_cast<std::size_t>(xs[best])])
            best = i;
        found.push_back(kept[l][best]);
      }
      // Past the time limit branch and bound may hold something worse than the bound's.
      if (const double c = evaluate(p, found); c <= r.cost) r.choice = std::move(found), r.cost = c;
    }
    // Stopped by the time limit, it is still proven when the bounds meet its cost (the tree
    // bound often does: it said "gap 0.00 %" beside "not proven optimal").
    stats.optimal = s.status == LpStatus::Optimal ||
                    (std::isfinite(r.cost) && stats.lower_bound >= r.cost - 1e-9 * std::abs(r.cost));
    // A relaxation is a lower bound: above a proven optimum it is rounding noise (resnet18 on
    // 8x8: the optimum + 1e-11, which printed a tenth of a cycle above it).
    // So is a lower bound above it (resnet50 on 8x8: 467329.50000000617 beside 467329.5).
    if (stats.optimal) {
      stats.lp_relaxation = std::min(stats.lp_relaxation, r.cost);
      stats.lower_bound = std::min(stats.lower_bound, r.cost);
    }
    if (!stats.optimal) {
      r.notes.push_back(
          s.status == LpStatus::NoSolution
              ? "time limit reached before branch and bound found a solution: the tree "
                "bound's assignment, not proven optimal (raise --time-limit)"
              : "time limit reached: solution not proven optimal");
      if (r.cost > 0) stats.gap = std::max(0.0, (r.cost - stats.lower_bound) / r.cost);
    }
    r.ilp = stats;
    r.optimal = stats.optimal;
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_ilp_solver() { return std::make_unique<IlpSolver>(); }

}  // namespace nocflow::optimizer
