// SPDX-License-Identifier: MIT
// k best assignments (solver/kbest.h) against brute-force enumeration on random small chains
// and DAGs: the k smallest costs, distinct, feasible, everything when k exceeds the space.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <set>

#include "noc/base/error.h"
#include "optimizer/solver/kbest.h"
#include "tests/optimizer/random_problem.h"

namespace nocflow::optimizer {
namespace {

/// Every feasible assignment with its cost, cheapest first.
std::vector<RankedAssignment> enumerate_all(const Problem& p) {
  std::vector<RankedAssignment> out;
  std::vector<int> x(static_cast<std::size_t>(p.num_layers()), 0);
  while (true) {
    const double c = evaluate(p, x);
    if (std::isfinite(c)) out.push_back({x, c});
    int l = 0;
    for (; l < p.num_layers(); ++l) {
      if (++x[static_cast<std::size_t>(l)] < p.num_choices(l)) break;
      x[static_cast<std::size_t>(l)] = 0;
    }
    if (l == p.num_layers()) break;
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.cost < b.cost; });
  return out;
}

/// k_best(p, k) is the k cheapest of `all`: same costs, distinct, each priced right.
void expect_k_best(const Problem& p, int k, const std::string& what) {
  const auto all = enumerate_all(p);
  const auto got = k_best(p, k);
  ASSERT_EQ(got.size(), std::min<std::size_t>(static_cast<std::size_t>(k), all.size())) << what;
  std::set<std::vector<int>> seen;
  for (std::size_t r = 0; r < got.size(); ++r) {
    const double tol = 1e-9 * std::max(1.0, all[r].cost);
    EXPECT_NEAR(got[r].cost, all[r].cost, tol) << what << ", rank " << r;
    EXPECT_DOUBLE_EQ(got[r].cost, evaluate(p, got[r].choice)) << what << ", rank " << r;
    if (r > 0) {
      EXPECT_LE(got[r - 1].cost, got[r].cost) << what << ", rank " << r;
    }
    EXPECT_TRUE(seen.insert(got[r].choice).second) << what << ": rank " << r << " repeats an assignment";
  }
}

TEST(KBest, RandomChainsAndDagsGiveTheKSmallestCosts) {
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> layers(1, 6), k(1, 25);
  for (int n = 0; n < 300; ++n) {
    const Problem p = random_problem(rng, layers(rng), 6, n % 2 == 0);
    expect_k_best(p, k(rng), "instance " + std::to_string(n));
  }
}

TEST(KBest, KBeyondTheSpaceReturnsEveryAssignment) {
  std::mt19937 rng(99);
  for (int n = 0; n < 20; ++n) {
    const Problem p = random_problem(rng, 3, 4, n % 2 == 0);
    const auto all = enumerate_all(p);
    const auto got = k_best(p, 1000);
    ASSERT_EQ(got.size(), all.size()) << "instance " << n;
    std::set<std::vector<int>> a, b;
    for (const auto& x : all) a.insert(x.choice);
    for (const auto& x : got) b.insert(x.choice);
    EXPECT_EQ(a, b) << "instance " << n;
  }
}

TEST(KBest, MemoryLimitIsRespected) {
  std::mt19937 rng(17);
  std::uniform_int_distribution<int> bytes(1, 10);
  for (int n = 0; n < 100; ++n) {
    Problem p = random_problem(rng, 4, 5, n % 2 == 0);
    p.memory_limit = 6;
    for (int l = 0; l < p.num_layers(); ++l) {
      auto& m = p.memory.emplace_back();
      for (int i = 0; i < p.num_choices(l); ++i) m.push_back(bytes(rng));
      m[std::uniform_int_distribution<std::size_t>(0, m.size() - 1)(rng)] = 1;  // one fits at least
    }
    expect_k_best(p, 1000, "instance " + std::to_string(n));  // every feasible one, nothing else
    for (const auto& a : k_best(p, 1000))
      for (int l = 0; l < p.num_layers(); ++l) EXPECT_TRUE(p.fits(l, a.choice[static_cast<std::size_t>(l)]));
  }
}

TEST(KBest, NonSeriesParallelGraphsAndEdgeCases) {
  // K4: no layer ever has fewer than three neighbours, bucket elimination solves the rest.
  std::mt19937 rng(5);
  std::uniform_int_distribution<int> cost(0, 9);
  Problem p;
  for (int l = 0; l < 4; ++l) {
    p.names.push_back("l" + std::to_string(l));
    p.node.emplace_back();
    for (int i = 0; i < 3; ++i) p.node.back().push_back(cost(rng));
  }
  for (int u = 0; u < 4; ++u)
    for (int v = u + 1; v < 4; ++v) {
      Problem::Edge e{u, v, 3, {}};
      for (int i = 0; i < 9; ++i) e.cost.push_back(cost(rng));
      p.edges.push_back(std::move(e));
    }
  expect_k_best(p, 30, "K4");
  EXPECT_TRUE(k_best(p, 0).empty());
  // No layers: one (empty) assignment.
  EXPECT_EQ(k_best(Problem{}, 3).size(), 1u);
  // A layer that fits nowhere is an input error, as for dp.
  p.memory_limit = 1;
  p.memory.assign(4, {2, 2, 2});
  EXPECT_THROW(k_best(p, 3), InputError);
}

}  // namespace
}  // namespace nocflow::optimizer
