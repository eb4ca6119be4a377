// SPDX-License-Identifier: MIT
// The local search within a stage's memory (solver/memory_search.h) against exhaustive checks on
// random problems: what it returns fits, costs what evaluate says, never more than where it
// started, and no fitting change of one layer (or, with no peaks, of two layers not joined by
// an edge) is cheaper.
#include "optimizer/solver/memory_search.h"

#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <vector>

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Instance {
  Problem p;
  StageMemory m;
};

/// A chain of `layers` layers with a skip edge or two, 2-5 choices each, integer costs and bytes;
/// peaks of 0 when `no_peaks`. The limit lies between the least and the most bytes.
Instance random_instance(std::mt19937& rng, int layers, bool no_peaks) {
  std::uniform_int_distribution<int> choices(2, 5), cost(0, 100), bytes(1, 50);
  Instance x;
  for (int l = 0; l < layers; ++l) {
    const int n = choices(rng);
    x.p.names.push_back("l" + std::to_string(l));
    x.p.node.emplace_back();
    x.m.summed.emplace_back();
    x.m.peak.emplace_back();
    for (int c = 0; c < n; ++c) {
      x.p.node.back().push_back(cost(rng));
      x.m.summed.back().push_back(bytes(rng));
      x.m.peak.back().push_back(no_peaks ? 0 : bytes(rng));
    }
  }
  auto edge = [&](int u, int v) {
    Problem::Edge e;
    e.u = u, e.v = v, e.nv = x.p.num_choices(v);
    for (int i = 0; i < x.p.num_choices(u) * e.nv; ++i) e.cost.push_back(cost(rng));
    x.p.edges.push_back(std::move(e));
  };
  for (int l = 0; l + 1 < layers; ++l) edge(l, l + 1);
  if (layers > 3) edge(0, layers - 1);
  if (layers > 4) edge(1, 3);
  double least = kInf, most = 0;
  for_each_assignment(x.p, [&](const std::vector<int>& a) {
    least = std::min(least, x.m.bytes(a));
    most = std::max(most, x.m.bytes(a));
  });
  x.m.limit = std::uniform_real_distribution<double>(least, most)(rng);
  return x;
}

bool joined(const Problem& p, int a, int b) {
  for (const auto& e : p.edges)
    if ((e.u == a && e.v == b) || (e.u == b && e.v == a)) return true;
  return false;
}

/// Fails if some fitting assignment one layer's change away (two layers' not joined by an edge,
/// with `pairs`) costs less than `x`.
void expect_local_optimum(const Instance& in, const std::vector<int>& x, bool pairs) {
  const double cost = evaluate(in.p, x);
  const double gain = 1e-9 * std::max(1.0, cost);
  const int n = in.p.num_layers();
  for (int a = 0; a < n; ++a)
    for (int ca = 0; ca < in.p.num_choices(a); ++ca) {
      std::vector<int> y = x;
      y[static_cast<std::size_t>(a)] = ca;
      if (in.m.bytes(y) <= in.m.limit) {
        EXPECT_GE(evaluate(in.p, y), cost - gain) << "layer " << a;
      }
      if (!pairs) continue;
      for (int b = a + 1; b < n; ++b) {
        if (joined(in.p, a, b)) continue;
        for (int cb = 0; cb < in.p.num_choices(b); ++cb) {
          y[static_cast<std::size_t>(b)] = cb;
          if (in.m.bytes(y) <= in.m.limit) {
            EXPECT_GE(evaluate(in.p, y), cost - gain) << "layers " << a << ", " << b;
          }
        }
        y[static_cast<std::size_t>(b)] = x[static_cast<std::size_t>(b)];
      }
    }
}

/// The most expensive fitting assignment: the worst place to start.
std::vector<int> worst_fitting(const Instance& in) {
  std::vector<int> worst;
  double most = -1;
  for_each_assignment(in.p, [&](const std::vector<int>& a) {
    if (in.m.bytes(a) > in.m.limit) return;
    if (const double c = evaluate(in.p, a); c > most) most = c, worst = a;
  });
  return worst;
}

TEST(MemorySearch, ImprovesToAFittingLocalOptimum) {
  std::mt19937 rng(7);
  int improved = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const bool no_peaks = trial % 2 == 0;
    const Instance in = random_instance(rng, 2 + trial % 5, no_peaks);
    std::vector<int> x = worst_fitting(in);
    ASSERT_FALSE(x.empty());  // the least bytes fit
    const double start = evaluate(in.p, x);
    const double cost = improve_within_memory(in.p, in.m, x);
    EXPECT_LE(in.m.bytes(x), in.m.limit) << trial;
    EXPECT_DOUBLE_EQ(cost, evaluate(in.p, x)) << trial;
    EXPECT_LE(cost, start) << trial;
    improved += cost < start;
    expect_local_optimum(in, x, no_peaks);
  }
  EXPECT_GT(improved, 200);  // the worst start is rarely a local optimum
}

TEST(MemorySearch, FitsAnAssignmentThatDoesNotWhenSingleChangesCan) {
  std::mt19937 rng(11);
  for (int trial = 0; trial < 200; ++trial) {
    // Without peaks every layer can step to its fewest bytes, so whenever anything fits, the
    // repair reaches a fitting assignment.
    const Instance in = random_instance(rng, 2 + trial % 5, true);
    double cheapest = kInf;
    std::vector<int> start;
    for_each_assignment(in.p, [&](const std::vector<int>& a) {
      if (const double c = evaluate(in.p, a); c < cheapest) cheapest = c, start = a;
    });
    std::vector<int> x = start;
    const double cost = fit_within_memory(in.p, in.m, x);
    ASSERT_LT(cost, kInf) << trial;
    EXPECT_LE(in.m.bytes(x), in.m.limit) << trial;
    EXPECT_DOUBLE_EQ(cost, evaluate(in.p, x)) << trial;
    EXPECT_GE(cost, cheapest) << trial;
    if (in.m.bytes(start) <= in.m.limit) {
      EXPECT_EQ(x, start) << trial;  // fits and is the cheapest
    }
    expect_local_optimum(in, x, true);
  }
  // Two layers share the peak: no single change lowers the bytes, both must go below it.
  {
    Instance tied;
    tied.p.names = {"a", "b"};
    tied.p.node = {{0, 1}, {0, 1}};
    tied.m.summed = {{0, 0}, {0, 0}};
    tied.m.peak = {{100, 10}, {100, 10}};
    tied.m.limit = 50;
    std::vector<int> x = {0, 0};
    EXPECT_EQ(fit_within_memory(tied.p, tied.m, x), tied.p.node[0][1] + tied.p.node[1][1]);
    EXPECT_EQ(x, (std::vector<int>{1, 1}));
  }
  // A limit below every assignment's bytes: no change fits it.
  Instance in = random_instance(rng, 3, false);
  in.m.limit = 0;
  std::vector<int> x(3, 0);
  EXPECT_EQ(fit_within_memory(in.p, in.m, x), kInf);
}

}  // namespace
}  // namespace nocflow::optimizer
