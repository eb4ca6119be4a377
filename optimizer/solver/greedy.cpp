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
  /// the edge tables, which only pruning would read, are not needed. greedy-layout reads one
  /// row of each edge, its producer's decided choice's: rows on demand, no tables, no pruning
  /// (which could make it take a different one of tied choices).
  EdgeTables edge_tables() const override { return layout_ ? EdgeTables::Rows : EdgeTables::None; }

  SolveResult solve(const Problem& p, const SolveOptions&) const override {
    const auto t0 = std::chrono::steady_clock::now();
    check_memory_feasible(p);
    SolveResult r;
    r.solver = name();
    r.choice.assign(static_cast<std::size_t>(p.num_layers()), 0);
    // greedy-layout: the decided producer's row of each edge, computed when its consumer is
    // decided (layers are in topological order: edges into l come from u < l).
    std::vector<std::vector<double>> rows(p.edges.size());
    for (int l = 0; l < p.num_layers(); ++l) {
      std::vector<std::size_t> into;
      if (layout_)
        for (std::size_t e = 0; e < p.edges.size(); ++e)
          if (p.edges[e].v == l && p.edges[e].u < l) {
            into.push_back(e);
            rows[e] = edge_row(p.edges[e], r.choice[static_cast<std::size_t>(p.edges[e].u)]);
          }
      double best = std::numeric_limits<double>::infinity();
      for (int i = 0; i < p.num_choices(l); ++i) {
        if (!p.fits(l, i)) continue;
        double c = p.node[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)];
        for (std::size_t e : into) c += rows[e][static_cast<std::size_t>(i)];
        if (c < best) best = c, r.choice[static_cast<std::size_t>(l)] = i;
      }
    }
    r.cost = evaluate(p, r.choice, &rows);  // the rows at hand, not computed again
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
