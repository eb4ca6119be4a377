// SPDX-License-Identifier: MIT
#pragma once
// Bound pruning: which choices can be in an optimal assignment at all.
//
// The relaxation keeps a spanning forest of the edges exactly (the edges whose costs vary most
// go in first) and replaces every other edge (u, v) by a lower bound that depends on one end
// only: the cheapest entry of its row (or column) for each choice. On a forest, two passes of
// dynamic programming give every choice's min-marginal: the cheapest relaxed assignment that
// takes it. That is a lower bound on every true assignment taking it; the forest's own cheapest
// assignment, priced on the true problem, is an upper bound on the optimum. A choice whose lower
// bound exceeds the upper bound is in no optimal assignment and can be dropped. The bound is
// exact on chains and trees (then only the optimum's choices, and its ties, remain).
//
// How much of a folded edge the forest carries is then tuned (Lagrangian decomposition): the
// forest's problem and each folded edge's own problem (its entries minus what the forest
// carries) sum to the true cost of every assignment, so the sum of their minima bounds the
// optimum, for any split. Subgradient steps move the split where the forest and an edge disagree
// on an end's choice, which raises that sum; the best split found gives the bounds.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct TreeBound {
  std::vector<std::vector<double>> lower;  ///< [layer][choice]: no assignment taking it costs less
  double bound = 0;                        ///< no assignment costs less (the best split's)
  std::vector<int> assignment;             ///< the relaxation's cheapest assignment
  double upper = 0;                        ///< its cost on the true problem (evaluate)
};

/// The relaxation above, with at most `iterations` subgradient steps (0: the starting split,
/// each folded edge's cheapest entry per choice of one end); they aim at the cheaper of the
/// bound's own assignment and `known_upper` (the cost of one found elsewhere), and stop once
/// the bound is above `cutoff` (above_cutoff: then `lower` is left empty). Choices that break
/// the memory limit get a lower bound of +inf. Needs every layer to have a choice that fits
/// (check_memory_feasible).
inline constexpr int kTreeBoundIterations = 1000;
/// A lower bound within this share of the best known cost has met it (rounding aside).
inline constexpr double kBoundMet = 1e-7;
inline bool bound_met(double lower, double upper) {
  return upper - lower <= kBoundMet * std::max(1.0, std::abs(upper));
}
/// A lower bound above a cutoff beyond rounding: no assignment costs the cutoff or less.
inline bool above_cutoff(double lower, double cutoff) {
  return lower > cutoff && !bound_met(cutoff, lower);
}
TreeBound tree_bound(const Problem& p, int iterations = kTreeBoundIterations,
                     double known_upper = std::numeric_limits<double>::infinity(),
                     double cutoff = std::numeric_limits<double>::infinity());

/// Per layer, the choices (ascending) whose lower bound is within `upper` (a relative 1e-9
/// allowance for rounding): every optimal assignment uses only these.
std::vector<std::vector<int>> choices_within(const TreeBound& b, double upper);

/// choices_within(tree_bound(...)) repeated on the surviving choices (the folded edges' minima
/// rise as choices go) until a round drops nothing with the longest tuning (or the bound meets
/// the best cost); rounds tune 25 steps first, 4 times longer after one that drops under a tenth
/// of the choices. The best assignment any round found.
///
/// With a finite `cutoff` it stops as soon as no assignment can cost that little: `above_cutoff`,
/// `lower` above the cutoff, and `kept` what was not dropped yet (for a caller that only needs to
/// know whether the optimum is within the cutoff, the answer).
struct BoundPruning {
  std::vector<std::vector<int>> kept;  ///< [layer] original indices, ascending
  std::vector<int> assignment;         ///< original indices
  double upper = 0;                    ///< its cost
  double lower = 0;                    ///< no assignment costs less (the best round's relaxation)
  int rounds = 0;
  bool above_cutoff = false;
};
BoundPruning prune_by_bound(const Problem& p,
                            double cutoff = std::numeric_limits<double>::infinity());

}  // namespace nocflow::optimizer
