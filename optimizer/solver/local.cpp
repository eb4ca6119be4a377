// SPDX-License-Identifier: MIT
// dp-local: for graphs too wide for dp (training graphs of deep networks). Starts from
// greedy-layout, then solves windows of consecutive layers (topological order) exactly, the
// layers outside a window held at their current choices: the window's edges to them become
// layer costs, and node, edge and bucket elimination (solver/elimination.h) solve the rest.
// A window's optimum replaces the current choices only if it is cheaper, so the cost falls
// with every accepted window; passes over all windows (half-overlapping) repeat until one
// changes nothing. The result is optimal for every window given the rest, not overall.
#include <algorithm>
#include <chrono>
#include <cmath>

#include "noc/base/format.h"
#include "optimizer/solver/elimination.h"
#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

constexpr int kWindow = 64;  ///< layers per window; halves overlap
constexpr int kMaxPasses = 50;

/// Layers [first, last) of p with every other layer fixed at x's choice.
Problem window_problem(const Problem& p, const std::vector<int>& x, int first, int last) {
  Problem w;
  const auto inside = [&](int l) { return l >= first && l < last; };
  for (int l = first; l < last; ++l) {
    w.names.push_back(p.names[static_cast<std::size_t>(l)]);
    w.node.push_back(p.node[static_cast<std::size_t>(l)]);
    if (!p.memory.empty()) w.memory.push_back(p.memory[static_cast<std::size_t>(l)]);
  }
  w.memory_limit = p.memory_limit;
  for (const auto& e : p.edges) {
    if (inside(e.u) && inside(e.v)) {
      Problem::Edge inner = e;  // its table copied, or shared as e shares it
      inner.u -= first;
      inner.v -= first;
      w.edges.push_back(std::move(inner));
    } else if (inside(e.u) != inside(e.v)) {  // fold into the inside layer's cost
      const int l = inside(e.u) ? e.u : e.v;
      auto& cost = w.node[static_cast<std::size_t>(l - first)];
      for (std::size_t i = 0; i < cost.size(); ++i)
        cost[i] += inside(e.u) ? e.at(static_cast<int>(i), x[static_cast<std::size_t>(e.v)])
                               : e.at(x[static_cast<std::size_t>(e.u)], static_cast<int>(i));
    }
  }
  return w;
}

class LocalDpSolver : public Solver {
 public:
  std::string name() const override { return "dp-local"; }

  SolveResult solve(const Problem& p, const SolveOptions& o) const override {
    const auto t0 = std::chrono::steady_clock::now();
    SolveResult r = make_greedy_solver(true)->solve(p, o);
    r.solver = name();
    const double start = r.cost;
    const int n = p.num_layers(), step = kWindow / 2;
    int passes = 0, accepted = 0, skipped = 0;  // skipped: windows too wide, in the first pass
    bool improved = true;
    // One window holding every layer is solved exactly in the first pass: nothing to repeat.
    for (; improved && passes < kMaxPasses && (passes == 0 || n > kWindow); ++passes) {
      improved = false;
      for (int first = 0; first < n; first += step) {
        const int last = std::min(n, first + kWindow);
        const auto elim = solve_by_elimination(window_problem(p, r.choice, first, last));
        if (elim) {
          std::vector<int> x = r.choice;
          std::copy(elim->choice.begin(), elim->choice.end(), x.begin() + first);
          const double c = evaluate(p, x);
          if (c < r.cost - 1e-9 * std::abs(r.cost))
            r.choice = std::move(x), r.cost = c, improved = true, ++accepted;
        } else if (passes == 0) {
          ++skipped;
        }
        if (last == n) break;
      }
    }
    const auto count = [](int k, const std::string& one, const std::string& many) {
      return std::to_string(k) + " " + (k == 1 ? one : many);
    };
    r.optimal = n <= kWindow && !skipped;
    r.notes.push_back(
        "greedy-layout " + fixed(start) + " cycles, then " +
        count(accepted, "improving window", "improving windows") + " of " +
        std::to_string(std::min(n, kWindow)) + " layers in " + count(passes, "pass", "passes") +
        (skipped ? " (" + count(skipped, "window", "windows") + " too wide for dp, skipped)" : "") +
        (n <= kWindow && !skipped ? "; one window holds every layer: optimal"
         : improved && n > kWindow
             ? "; stopped at the pass limit while still improving"
             : std::string("; optimal per window") + (skipped ? " but those skipped" : "") +
                   ", not proven overall"));
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }
};

}  // namespace

std::unique_ptr<Solver> make_local_dp_solver() {
  return std::make_unique<LocalDpSolver>();
}

}  // namespace nocflow::optimizer
