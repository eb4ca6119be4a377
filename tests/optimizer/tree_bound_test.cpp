// SPDX-License-Identifier: MIT
// Bound pruning (solver/tree_bound.h) against brute force on random small problems: the lower
// bounds hold, they are exact on chains, and no optimal assignment loses a choice.
#include "optimizer/solver/tree_bound.h"

#include <gtest/gtest.h>

#include <cmath>
#include <iostream>
#include <limits>
#include <random>
#include <set>

#include "optimizer/solver/solver.h"
#include "tests/optimizer/random_problem.h"

namespace nocflow::optimizer {
namespace {

/// [layer][choice]: the cheapest assignment taking that choice (+inf if none fits).
std::vector<std::vector<double>> min_marginals(const Problem& p) {
  std::vector<std::vector<double>> m;
  for (int l = 0; l < p.num_layers(); ++l)
    m.emplace_back(static_cast<std::size_t>(p.num_choices(l)),
                   std::numeric_limits<double>::infinity());
  for_each_assignment(p, [&](const std::vector<int>& x) {
    const double c = evaluate(p, x);
    for (int l = 0; l < p.num_layers(); ++l) {
      double& v =
          m[static_cast<std::size_t>(l)][static_cast<std::size_t>(x[static_cast<std::size_t>(l)])];
      v = std::min(v, c);
    }
  });
  return m;
}

TEST(TreeBound, LowerBoundsHoldEverywhereAndAreExactOnChains) {
  std::mt19937 rng(2024);
  int pruned = 0;
  for (int n = 0; n < 300; ++n) {
    const bool chain = n % 2 == 0;
    std::uniform_int_distribution<int> size(1, 6);
    Problem p = random_problem(rng, size(rng), 7, chain);
    if (n % 3 == 0) {  // a memory limit some choices break
      p.memory_limit = 10;
      for (int l = 0; l < p.num_layers(); ++l) {
        auto& mem = p.memory.emplace_back();
        for (int j = 0; j < p.num_choices(l); ++j) mem.push_back(j % 3 == 2 ? 20 : 5);
      }
    }
    const auto truth = min_marginals(p);
    const double best = evaluate(p, brute_force(p));
    const double tol = 1e-9 * std::max(1.0, best);
    const TreeBound b = tree_bound(p);
    EXPECT_NEAR(b.upper, evaluate(p, b.assignment), tol);
    EXPECT_GE(b.upper, best - tol);
    for (int l = 0; l < p.num_layers(); ++l)
      for (int j = 0; j < p.num_choices(l); ++j) {
        const double t = truth[static_cast<std::size_t>(l)][static_cast<std::size_t>(j)];
        const double lo = b.lower[static_cast<std::size_t>(l)][static_cast<std::size_t>(j)];
        if (std::isinf(t)) {
          EXPECT_TRUE(std::isinf(lo)) << "instance " << n << " layer " << l << " choice " << j;
          continue;
        }
        EXPECT_LE(lo, t + tol) << "instance " << n << " layer " << l << " choice " << j;
        if (chain) {
          EXPECT_NEAR(lo, t, tol) << "instance " << n << " layer " << l << " choice " << j;
        }
      }
    if (chain) {
      EXPECT_NEAR(b.upper, best, tol) << "instance " << n;  // a tree's decode is exact
    }

    // Every optimal assignment survives pruning; on chains, nothing else does.
    const BoundPruning r = prune_by_bound(p);
    EXPECT_NEAR(r.upper, evaluate(p, r.assignment), tol);
    EXPECT_LE(r.lower, best + tol) << "instance " << n;
    if (chain) {
      EXPECT_NEAR(r.lower, best, tol) << "instance " << n;
    }
    std::vector<std::set<int>> optimal(static_cast<std::size_t>(p.num_layers()));
    for_each_assignment(p, [&](const std::vector<int>& x) {
      if (evaluate(p, x) > best + tol) return;
      for (int l = 0; l < p.num_layers(); ++l)
        optimal[static_cast<std::size_t>(l)].insert(x[static_cast<std::size_t>(l)]);
    });
    for (int l = 0; l < p.num_layers(); ++l) {
      const auto& kept = r.kept[static_cast<std::size_t>(l)];
      const std::set<int> k(kept.begin(), kept.end());
      for (int j : optimal[static_cast<std::size_t>(l)])
        EXPECT_EQ(k.count(j), 1u) << "instance " << n;
      if (chain) {
        EXPECT_EQ(k, optimal[static_cast<std::size_t>(l)]) << "instance " << n << " layer " << l;
      }
      pruned += p.num_choices(l) - static_cast<int>(kept.size());
    }
  }
  EXPECT_GT(pruned, 1000);  // the bound does prune on these
}

TEST(TreeBound, TuningTheFoldedEdgesTightensTheBounds) {
  // Graphs with cycles, where some edges are folded: the tuned split bounds every choice at
  // least as tightly as the starting one, rules out more choices and proves more optima.
  std::mt19937 rng(7);
  int prunable_plain = 0, prunable_tuned = 0, proven_plain = 0, proven_tuned = 0;
  for (int n = 0; n < 150; ++n) {
    std::uniform_int_distribution<int> size(3, 6);
    const Problem p = random_problem(rng, size(rng), 6, false);
    const double best = evaluate(p, brute_force(p));
    const double tol = 1e-9 * std::max(1.0, best);
    const TreeBound plain = tree_bound(p, 0), tuned = tree_bound(p);
    EXPECT_LE(tuned.upper, plain.upper + tol) << "instance " << n;
    double lowest_plain = std::numeric_limits<double>::infinity(), lowest_tuned = lowest_plain;
    for (int l = 0; l < p.num_layers(); ++l)
      for (int j = 0; j < p.num_choices(l); ++j) {
        const double a = plain.lower[static_cast<std::size_t>(l)][static_cast<std::size_t>(j)];
        const double b = tuned.lower[static_cast<std::size_t>(l)][static_cast<std::size_t>(j)];
        EXPECT_GE(b, a - tol) << "instance " << n << " layer " << l << " choice " << j;
        prunable_plain += a > best + tol;
        prunable_tuned += b > best + tol;
        lowest_plain = std::min(lowest_plain, a), lowest_tuned = std::min(lowest_tuned, b);
      }
    proven_plain += lowest_plain >= best - tol;
    proven_tuned += lowest_tuned >= best - tol;
  }
  EXPECT_GT(prunable_tuned, prunable_plain);
  EXPECT_GT(proven_tuned, proven_plain);
  std::cout << "choices ruled out " << prunable_plain << " -> " << prunable_tuned
            << ", optima proven " << proven_plain << " -> " << proven_tuned << " of 150\n";
}

TEST(TreeBound, IlpPastItsTimeLimitWithoutASolutionReturnsTheBoundsAssignment) {
  // Six layers all connected, 30 choices each, random costs: the tree bound is loose and
  // branch and bound, stopped at once, has found nothing.
  std::mt19937 rng(5);
  const Problem p = complete_graph(rng, 6, 30);
  SolveOptions o;
  o.time_limit_s = 0;
  o.lp_relaxation = false;
  const SolveResult r = make_solver("ilp")->solve(p, o);
  const BoundPruning b = prune_by_bound(p);
  ASSERT_TRUE(r.ilp.has_value());
  EXPECT_FALSE(r.ilp->optimal);
  EXPECT_EQ(r.choice, b.assignment);
  EXPECT_DOUBLE_EQ(r.cost, b.upper);
  ASSERT_FALSE(r.notes.empty());
  EXPECT_NE(r.notes[0].find("before branch and bound found a solution"), std::string::npos)
      << r.notes[0];
  EXPECT_EQ(r.ilp->choices, 180);
  EXPECT_FALSE(r.ilp->has_lp_relaxation);  // not asked for; branch and bound stopped first
  EXPECT_DOUBLE_EQ(r.ilp->lower_bound, b.lower);
  EXPECT_NEAR(r.ilp->gap, (b.upper - b.lower) / b.upper, 1e-12);
  EXPECT_GT(r.ilp->gap, 0);
}

}  // namespace
}  // namespace nocflow::optimizer
