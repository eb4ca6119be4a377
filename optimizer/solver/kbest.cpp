// SPDX-License-Identifier: MIT
#include "optimizer/solver/kbest.h"

#include <algorithm>
#include <numeric>

#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {
namespace {

/// A subspace of assignments: per layer the allowed original choice indices, ascending.
using Space = std::vector<std::vector<int>>;

struct Candidate {
  RankedAssignment best;  ///< the cheapest assignment of `space`
  Space space;
};

/// The cheapest assignment within `space` (every layer allows at least one choice). The
/// restricted copy shrinks fixed layers to one choice, which is what makes most subproblems
/// cheap: elimination work grows with the product of neighbouring choice counts.
RankedAssignment cheapest_in(const Problem& p, const Space& space, const Solver& dp) {
  const SolveResult r = dp.solve(restrict_problem(p, space), {60, "flow", "", false});
  RankedAssignment a;
  a.choice.resize(space.size());
  for (std::size_t l = 0; l < space.size(); ++l) a.choice[l] = space[l][static_cast<std::size_t>(r.choice[l])];
  a.cost = evaluate(p, a.choice);
  return a;
}

/// Total order for the open list: cost, then the choice vector, so that ties pop the same
/// way on every run.
bool cheaper(const RankedAssignment& a, const RankedAssignment& b) {
  return a.cost != b.cost ? a.cost < b.cost : a.choice < b.choice;
}

}  // namespace

std::vector<RankedAssignment> k_best(const Problem& p, int k) {
  std::vector<RankedAssignment> found;
  if (k <= 0) return found;
  check_memory_feasible(p);
  const auto dp = make_dp_solver();
  Space root(static_cast<std::size_t>(p.num_layers()));
  for (int l = 0; l < p.num_layers(); ++l)
    for (int i = 0; i < p.num_choices(l); ++i)
      if (p.fits(l, i)) root[static_cast<std::size_t>(l)].push_back(i);

  // Layers are fixed in this order while splitting: most choices first, so that all but the
  // first few subspaces of a split have the big layers fixed.
  std::vector<int> order(static_cast<std::size_t>(p.num_layers()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return root[static_cast<std::size_t>(a)].size() > root[static_cast<std::size_t>(b)].size();
  });

  std::vector<Candidate> open;
  open.push_back({cheapest_in(p, root, *dp), root});
  while (!open.empty()) {
    const auto next = std::min_element(open.begin(), open.end(), [](const Candidate& a, const Candidate& b) {
      return cheaper(a.best, b.best);
    });
    Candidate c = std::move(*next);
    *next = std::move(open.back());
    open.pop_back();
    found.push_back(c.best);
    if (static_cast<int>(found.size()) == k) break;
    // Split c.space minus c.best: the i-th part keeps the layers before order[i] fixed to
    // c.best's choices and forbids c.best's choice of order[i].
    Space& fixed = c.space;
    for (int l : order) {
      const int x = c.best.choice[static_cast<std::size_t>(l)];
      auto& allowed = fixed[static_cast<std::size_t>(l)];
      if (allowed.size() > 1) {
        Space part = fixed;
        auto& a = part[static_cast<std::size_t>(l)];
        a.erase(std::find(a.begin(), a.end(), x));
        RankedAssignment best = cheapest_in(p, part, *dp);
        open.push_back({std::move(best), std::move(part)});
      }
      allowed.assign(1, x);
    }
  }
  return found;
}

}  // namespace nocflow::optimizer
