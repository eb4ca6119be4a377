// SPDX-License-Identifier: MIT
// greedy: the seed's baseline, each layer's cheapest choice on its own cost (000 §6.3).
// greedy-layout: layers in topological order, each taking the choice cheapest on its own cost
// plus the edges from the producers already decided (myopic, layout-aware).
#include <chrono>
#include <limits>

#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

class GreedySolver : public Solver {
 public:
  explicit GreedySolver(bool layout) : layout_(layout) {}
  std::string name() const override { return layout_ ? "greedy-layout" : "greedy"; }
  /// Plain greedy takes the first fitting choice of least layer cost. Dominance pruning never
  /// drops it: pruning visits a layer's fitting choices by layer cost (ties: by index), and a
  /// choice can be dominated only by one visited before it, which would be of lower cost. So
  /// the edge tables, which only pruning would read, are not needed.
  bool needs_edge_tables() const override { return layout_; }

  SolveResult solve(const Problem& p, const SolveOptions&) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    SolveResult r;
    r.solver = name();
    r.choice.assign(static_cast<std::size_t>(p.num_layers()), 0);
    // Layers are in topological order, so edges into l come from decided layers (u < l).
    for (int l = 0; l < p.num_layers(); ++l) {
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < p.num_choices(l); ++i) {
        if (!p.fits(l, i)) continue;
        double c = p.node[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)];
        if (layout_)
          for (const auto& e : p.edges)
            if (e.v == l && e.u < l) c += e.at(r.choice[static_cast<std::size_t>(e.u)], i);
        if (c < best) best = c, r.choice[static_cast<std::size_t>(l)] = i;
      }
    }
    r.cost = evaluate(p, r.choice);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return r;
  }

 private:
  bool layout_;
};

}  // namespace

std::unique_ptr<Solver> make_greedy_solver(bool layout_aware) {
  return std::make_unique<GreedySolver>(layout_aware);
}

}  // namespace nocflow::optimizer
