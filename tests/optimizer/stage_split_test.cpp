// SPDX-License-Identifier: MIT
// The min-max stage split (seed 004, solver/stage_split.h) against brute force: optimal splits
// of layers and units (the least bottleneck, then the least sum of stages), the balanced baseline
// by hand, and the cutoffs and lower bounds that let it leave stages unpriced.
#include "optimizer/solver/stage_split.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "noc/base/error.h"

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The least (maximum, then sum) of cost(range, units) over every way to cut `layers` into
/// `stages` non-empty ranges and `units` into as many positive parts.
struct Best {
  double max = kInf, sum = kInf;
};
Best brute_split(int layers, int stages, int units, const StageBound& cost) {
  Best best;
  std::function<void(int, int, int, double, double)> go = [&](int first, int left_units, int stage,
                                                              double worst, double sum) {
    const auto keep = [&](double mx, double total) {
      if (mx < best.max || (mx == best.max && total < best.sum)) best = {mx, total};
    };
    if (stage == stages - 1) {
      const double t = cost(first, layers, left_units);
      keep(std::max(worst, t), sum + t);
      return;
    }
    for (int end = first + 1; end <= layers - (stages - stage - 1); ++end)
      for (int q = 1; q <= left_units - (stages - stage - 1); ++q) {
        const double t = cost(first, end, q);
        go(end, left_units - q, stage + 1, std::max(worst, t), sum + t);
      }
  };
  go(0, units, 0, 0, 0);
  return best;
}

double total(const StageSplit& s) {
  return std::accumulate(s.cost.begin(), s.cost.end(), 0.0);
}

/// A random split problem: each layer's work, a unit count and a stage count.
struct Instance {
  std::vector<double> work;
  int layers = 0, units = 0, stages = 0;
  double work_in(int a, int b) const {
    return std::accumulate(work.begin() + a, work.begin() + b, 0.0);
  }
};

/// Layers in [min_layers, max_layers], work per layer in [1, max_work], units in [min_units,
/// max_units], stages from min_stages to as many as layers and units allow.
Instance random_instance(std::mt19937& rng, int min_layers, int max_layers, int max_work,
                         int min_units, int max_units, int min_stages) {
  Instance x;
  x.work.resize(static_cast<std::size_t>(
      std::uniform_int_distribution<int>(min_layers, max_layers)(rng)));
  std::uniform_int_distribution<int> w(1, max_work);
  for (double& v : x.work) v = w(rng);
  x.layers = static_cast<int>(x.work.size());
  x.units = std::uniform_int_distribution<int>(min_units, max_units)(rng);
  x.stages =
      std::uniform_int_distribution<int>(min_stages, std::min(x.layers, x.units))(rng);
  return x;
}

/// A stage cost that is always exact, whatever the cutoff.
StageCost exact(const StageBound& cost) {
  return [cost](int a, int b, int q, double) { return cost(a, b, q); };
}

TEST(StageSplit, MinMaxIsOptimalAndCoversTheLayersInOrder) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(1, 9), t(1, 20);
  for (int n = 0; n < 200; ++n) {
    std::vector<double> times(static_cast<std::size_t>(len(rng)));
    for (double& x : times) x = t(rng);
    const int layers = static_cast<int>(times.size());
    const int stages = std::uniform_int_distribution<int>(1, layers)(rng);
    const StageSplit s = split_min_max(times, stages);
    ASSERT_EQ(s.stages(), stages);
    ASSERT_EQ(s.begin.front(), 0);
    ASSERT_EQ(s.begin.back(), layers);
    for (int k = 0; k < stages; ++k) {
      ASSERT_LT(s.begin[k], s.begin[k + 1]) << "stage " << k << " is empty";
      EXPECT_EQ(s.cost[k],
                std::accumulate(times.begin() + s.begin[k], times.begin() + s.begin[k + 1], 0.0));
    }
    const Best brute = brute_split(layers, stages, stages, [&](int a, int b, int) {
      return std::accumulate(times.begin() + a, times.begin() + b, 0.0);
    });
    EXPECT_EQ(s.bottleneck(), brute.max) << "instance " << n;
    // The baseline is a valid split, never better.
    const StageSplit b = split_balanced(times, stages);
    ASSERT_EQ(b.stages(), stages);
    for (int k = 0; k < stages; ++k) ASSERT_LT(b.begin[k], b.begin[k + 1]);
    EXPECT_GE(b.bottleneck(), s.bottleneck());
  }
}

TEST(StageSplit, SeedsExampleAndTheBalancedBaselineByHand) {
  // Seed 004 §1.1: stages of 10, 15, 8, 12 ms: efficiency 11.25 / 15 = 75 %.
  StageSplit s;
  s.cost = {10, 15, 8, 12};
  EXPECT_DOUBLE_EQ(s.bottleneck(), 15);
  EXPECT_DOUBLE_EQ(s.efficiency(), 0.75);
  EXPECT_DOUBLE_EQ(s.imbalance(), 15.0 / 8);
  EXPECT_DOUBLE_EQ(s.pipeline_cost(8), 45 + 7 * 15);  // fill and drain, then one per 15
  // Balanced, target 24 / 3 = 8: [5 3] reaches 8; [1 6] is 7, + 2 reaches 9; [7] is the rest.
  const std::vector<double> times{5, 3, 1, 6, 2, 7};
  const StageSplit b = split_balanced(times, 3);
  EXPECT_EQ(b.begin, (std::vector<int>{0, 2, 5, 6}));
  EXPECT_EQ(b.cost, (std::vector<double>{8, 9, 7}));
  const StageSplit m = split_min_max(times, 3);
  EXPECT_EQ(m.bottleneck(), 9);  // the stage with 7 holds 9 or leaves 17 for two stages of 8
  EXPECT_THROW(split_min_max(times, 7), InputError);
  EXPECT_THROW(split_balanced(times, 0), InputError);
}

TEST(StageSplit, UnitsAreSharedOutOptimally) {
  // A stage's cost falls with its units (work / units, plus a fixed part): the DP must find the
  // best cuts and unit counts together.
  std::mt19937 rng(11);
  int asked_total = 0, asked_bounded_total = 0;  // stage costs asked, without and with a bound
  for (int n = 0; n < 150; ++n) {
    const Instance x = random_instance(rng, 1, 7, 30, 1, 6, 1);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) {
      const double sum = x.work_in(a, b);
      return (sum * 3 > 40 * q) ? kInf : sum / q + (b - a);  // too much work on few units: no fit
    };
    const Best best = brute_split(layers, stages, units, cost);
    const double brute = best.max;
    if (brute == kInf) {
      EXPECT_THROW(split_min_max_units(layers, stages, units, exact(cost)), InputError);
      continue;
    }
    const StageSplit s = split_min_max_units(layers, stages, units, exact(cost));
    EXPECT_DOUBLE_EQ(s.bottleneck(), brute) << "instance " << n;
    EXPECT_DOUBLE_EQ(total(s), best.sum) << "instance " << n;  // the least fill and drain
    // A lower bound (here one below the cost, and finite where the cost is not) only saves
    // stage costs: the same bottleneck, from stages that cost what they say.
    int asked = 0, asked_bounded = 0;
    auto counted = [&](int& calls) {
      return [&, c = &calls](int a, int b, int q, double) { return ++*c, cost(a, b, q); };
    };
    const StageBound bound = [&](int a, int b, int q) { return x.work_in(a, b) / q + (b - a) - 1; };
    split_min_max_units(layers, stages, units, counted(asked));
    const StageSplit bounded =
        split_min_max_units(layers, stages, units, counted(asked_bounded), bound);
    EXPECT_DOUBLE_EQ(bounded.bottleneck(), brute) << "instance " << n;
    EXPECT_DOUBLE_EQ(total(bounded), best.sum) << "instance " << n;
    EXPECT_EQ(std::accumulate(bounded.units.begin(), bounded.units.end(), 0), units);
    for (int k = 0; k < stages; ++k)
      EXPECT_DOUBLE_EQ(bounded.cost[k],
                       cost(bounded.begin[k], bounded.begin[k + 1], bounded.units[k]));
    EXPECT_LE(asked_bounded, asked);
    asked_total += asked, asked_bounded_total += asked_bounded;
    EXPECT_EQ(std::accumulate(s.units.begin(), s.units.end(), 0), units);
    for (int k = 0; k < stages; ++k) {
      EXPECT_GE(s.units[k], 1);
      EXPECT_DOUBLE_EQ(s.cost[k], cost(s.begin[k], s.begin[k + 1], s.units[k]));
    }
  }
  EXPECT_LT(asked_bounded_total, asked_total);
}

TEST(StageSplit, AStageIsPricedOnlyWhereAWholeSplitThroughItCouldWin) {
  // With a bound equal to the cost, the cap ends within 2 % of the bottleneck, and a stage is
  // worth pricing only if some whole split holding it stays within that: a first stage that
  // fits leaves no room for the others is never asked (nor is its band tabulated, in
  // solve_pipeline).
  std::mt19937 rng(5);
  int asked_total = 0;
  for (int n = 0; n < 120; ++n) {
    const Instance x = random_instance(rng, 2, 8, 40, 2, 7, 2);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) { return x.work_in(a, b) / q + 2 * (b - a); };
    std::vector<std::array<int, 3>> asked;
    const StageSplit s = split_min_max_units(
        layers, stages, units,
        [&](int a, int b, int q, double) { return asked.push_back({a, b, q}), cost(a, b, q); },
        cost);
    const double cap = s.bottleneck() * 1.02;
    // The stages of every whole split within the cap.
    std::set<std::array<int, 3>> could_win;
    std::vector<std::array<int, 3>> path;
    std::function<void(int, int, int)> go = [&](int first, int left, int stage) {
      const bool last = stage == stages - 1;
      for (int end = last ? layers : first + 1; end <= layers - (stages - stage - 1); ++end)
        for (int q = last ? left : 1; q <= left - (stages - stage - 1); ++q) {
          if (cost(first, end, q) > cap) continue;
          path.push_back({first, end, q});
          if (last)
            could_win.insert(path.begin(), path.end());
          else
            go(end, left - q, stage + 1);
          path.pop_back();
        }
    };
    go(0, units, 0);
    for (const auto& [a, b, q] : asked)
      EXPECT_TRUE(could_win.count({a, b, q}))
          << "instance " << n << ": layers [" << a << ", " << b << ") on " << q << " units";
    asked_total += static_cast<int>(asked.size());
  }
  EXPECT_GT(asked_total, 120);  // every instance asks its answer's stages at least
}

TEST(StageSplit, AStageProvenSlowerThanItsCutoffNeedsNoExactCost) {
  // A stage cost may answer only a bound in (cutoff, cost] once its cost is above the cutoff
  // (a solve stopped by its lower bound): the same bottleneck as brute force, from stages
  // whose costs are exact, with or without a lower bound.
  std::mt19937 rng(13);
  int bounds = 0, asks = 0;  // answers that were bounds, and all answers
  for (int n = 0; n < 150; ++n) {
    const Instance x = random_instance(rng, 2, 8, 40, 2, 7, 1);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) { return x.work_in(a, b) / q + (b - a); };
    const StageCost cut = [&](int a, int b, int q, double cutoff) -> StagePrice {
      ++asks;
      const double c = cost(a, b, q);
      if (c <= cutoff || !std::isfinite(cutoff)) return c;
      ++bounds;
      return {(cutoff + c) / 2, true};  // midway between the cutoff and the cost
    };
    const StageBound loose = [&](int a, int b, int q) { return cost(a, b, q) * 0.7; };
    const Best brute = brute_split(layers, stages, units, cost);
    for (const StageBound& bound : {StageBound{}, loose}) {
      const StageSplit s = split_min_max_units(layers, stages, units, cut, bound);
      EXPECT_DOUBLE_EQ(s.bottleneck(), brute.max) << "instance " << n;
      EXPECT_DOUBLE_EQ(total(s), brute.sum) << "instance " << n;
      EXPECT_EQ(std::accumulate(s.units.begin(), s.units.end(), 0), units);
      for (int k = 0; k < stages; ++k)
        EXPECT_EQ(s.cost[k], cost(s.begin[k], s.begin[k + 1], s.units[k])) << "instance " << n;
    }
  }
  EXPECT_GT(bounds, asks / 10);  // the cutoffs were used, often
}

}  // namespace
}  // namespace nocflow::optimizer
