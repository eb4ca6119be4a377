// SPDX-License-Identifier: MIT
#include "optimizer/solver/stage_split.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <string>

#include "noc/base/error.h"

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
/// split_min_max_units with a bound: each pass's cap is at least this much above the last.
constexpr double kCapStep = 0.02;

void check_stages(int layers, int stages, int units) {
  if (stages < 1 || stages > layers || stages > units)
    throw InputError("cannot cut " + std::to_string(layers) + " layers" +
                     (units < layers ? " on " + std::to_string(units) + " units" : "") + " into " +
                     std::to_string(stages) + " stages (1 to " +
                     std::to_string(std::min(layers, units)) + ")");
}

}  // namespace

double StageSplit::bottleneck() const {
  return cost.empty() ? 0 : *std::max_element(cost.begin(), cost.end());
}

double StageSplit::imbalance() const {
  const double lo = cost.empty() ? 0 : *std::min_element(cost.begin(), cost.end());
  return lo > 0 ? bottleneck() / lo : kInf;
}

double StageSplit::efficiency() const {
  const double hi = bottleneck();
  return hi > 0 ? std::accumulate(cost.begin(), cost.end(), 0.0) / stages() / hi : 1;
}

double StageSplit::pipeline_cost(int micro_batches) const {
  return std::accumulate(cost.begin(), cost.end(), 0.0) + (micro_batches - 1) * bottleneck();
}

StageSplit split_min_max(const std::vector<double>& times, int stages) {
  const int n = static_cast<int>(times.size());
  check_stages(n, stages, n);
  std::vector<double> prefix(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + times[i];
  StageSplit s = split_min_max_units(n, stages, stages, [&](int first, int end, int, double) {
    return prefix[end] - prefix[first];
  });
  s.units.clear();  // one device per stage: nothing chosen
  return s;
}

StageSplit split_balanced(const std::vector<double>& times, int stages) {
  const int n = static_cast<int>(times.size());
  check_stages(n, stages, n);
  const double target = std::accumulate(times.begin(), times.end(), 0.0) / stages;
  StageSplit s;
  s.begin.push_back(0);
  double sum = 0;
  for (int i = 0; i < n; ++i) {
    sum += times[i];
    const int closed = static_cast<int>(s.begin.size()) - 1;
    const int left = n - (i + 1);            // layers after this one
    const int needed = stages - closed - 1;  // stages still to open after this one
    if (needed > 0 && (sum >= target || left == needed)) {
      s.begin.push_back(i + 1);
      s.cost.push_back(sum);
      sum = 0;
    }
  }
  s.begin.push_back(n);
  s.cost.push_back(sum);
  return s;
}

StageSplit split_min_max_units(int layers, int stages, int units, const StageCost& cost,
                               const StageBound& lower_bound) {
  check_stages(layers, stages, units);
  // best[j][i][u]: the first i layers in j stages on u units: (max stage, sum of stages).
  struct Cell {
    double max = kInf, sum = kInf;
    int from = -1, took = 0;  // previous cut and units of the last stage
  };
  const auto L = static_cast<std::size_t>(layers) + 1, U = static_cast<std::size_t>(units) + 1;
  // Every table below is indexed [first index][layers][units].
  auto index = [&](int a, int i, int u) {
    return (static_cast<std::size_t>(a) * L + static_cast<std::size_t>(i)) * U +
           static_cast<std::size_t>(u);
  };
  std::vector<Cell> best(static_cast<std::size_t>(stages + 1) * L * U);
  auto at = [&](int j, int i, int u) -> Cell& { return best[index(j, i, u)]; };
  at(0, 0, 0) = {0, 0, -1, 0};
  // Stage costs are asked once each, whatever order the loops visit them in, or again with a
  // higher cutoff where the first answer was a bound at or below it.
  struct Known {
    double value = -kInf;  ///< the cost, or a bound below it; -inf: not asked
    bool exact = false;
  };
  std::vector<Known> memo(L * L * U);
  auto memo_at = [&](int k, int i, int q) -> Known& { return memo[index(k, i, q)]; };
  // rest[j][i][u]: at most the max stage of any split of layers [i, layers) into the
  // stages after the j-th on the units after the first u (the best split of lower bounds;
  // +inf where there is none). A cell whose rest is above the cap is part of no split
  // within it. Without a bound, 0.
  std::vector<double> rest(best.size(), 0.0);
  auto rest_at = [&](int j, int i, int u) -> double& { return rest[index(j, i, u)]; };
  // The cost, or above `cutoff` perhaps only a bound above it (StageCost).
  auto stage_cost = [&](int k, int i, int q, double cutoff) {
    Known& m = memo_at(k, i, q);
    if (m.exact || m.value > cutoff) return m.value;
    const StagePrice p = cost(k, i, q, cutoff);
    m = {p.cost, !p.bound || p.cost == kInf};
    return p.cost;
  };
  // At most the stage's cost: its cost if known, else the larger of its lower bound and what an
  // earlier cutoff proved.
  auto bound_of = [&](int k, int i, int q) {
    const Known& known = memo_at(k, i, q);
    return known.exact ? known.value
                       : std::max(known.value, lower_bound ? lower_bound(k, i, q) : 0);
  };
  // A cell's candidates (cut k, units q of the last stage), each with the least max stage it
  // can reach: max(prev.max, bound_of the stage). With a bound they are tried least first,
  // until the rest cannot beat the best found.
  struct Candidate {
    double reach;
    int k, q;
  };
  std::vector<Candidate> candidates;
  auto sort_by_reach = [&] {
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const Candidate& a, const Candidate& b) { return a.reach < b.reach; });
  };
  // Every cell, its value kept only where its max is at most `cap` (else +inf: no split through
  // it can make a bottleneck within the cap). Candidates that could reach within the cap only
  // above it are left out; the least such reach is returned.
  auto pass = [&](double cap) {
    std::fill(best.begin(), best.end(), Cell{});
    at(0, 0, 0) = {0, 0, -1, 0};
    double beyond = kInf;
    for (int j = 1; j <= stages; ++j)
      for (int i = j; i <= layers - (stages - j); ++i)
        for (int u = j; u <= units - (stages - j); ++u) {
          if (j == stages && (i != layers || u != units)) continue;  // only the whole split
          if (rest_at(j, i, u) > cap) {  // every split through it is slower than the cap
            bool reached = false;  // (a cell no split reaches says nothing of the next cap)
            for (int k = j - 1; k < i && !reached; ++k)
              for (int q = 1; q <= u - (j - 1) && !reached; ++q) reached = at(j - 1, k, u - q).max < kInf;
            if (reached) beyond = std::min(beyond, rest_at(j, i, u));
            continue;
          }
          candidates.clear();
          for (int k = j - 1; k < i; ++k)
            for (int q = 1; q <= u - (j - 1); ++q) {
              const double before = at(j - 1, k, u - q).max;
              if (before == kInf) continue;
              candidates.push_back({std::max(before, bound_of(k, i, q)), k, q});
            }
          if (lower_bound) sort_by_reach();
          // With one stage left after this one, that stage is priced first (the cap its
          // cutoff) where this cell could be within the cap: one beyond the cap spares pricing
          // this cell's candidates, which can be much the larger problems.
          if (lower_bound && j == stages - 1 && !candidates.empty() &&
              candidates.front().reach <= cap) {
            if (const double last = stage_cost(i, layers, units - u, cap); last > cap) {
              beyond = std::min(beyond, std::max(candidates.front().reach, last));
              continue;
            }
          }
          Cell& c = at(j, i, u);
          for (const auto& [reach, k, q] : candidates) {
            // max(prev.max, t) ≥ reach > c.max loses whatever t is: skip asking for t.
            if (reach > c.max || reach > cap) {
              if (reach <= c.max) beyond = std::min(beyond, reach);  // left out for the cap
              if (lower_bound) break;  // sorted: so does every candidate after it
              continue;
            }
            // Beyond the least of the best found and the cap its value does not matter: it
            // loses, or is left out for the cap.
            const Cell& prev = at(j - 1, k, u - q);
            const double limit = std::min(c.max, cap);
            const double t = stage_cost(k, i, q, limit);
            if (t == kInf) continue;
            if (t > limit) {
              if (t <= c.max) beyond = std::min(beyond, std::max(prev.max, t));
              continue;
            }
            const double mx = std::max(prev.max, t), sum = prev.sum + t;
            if (mx < c.max || (mx == c.max && sum < c.sum)) c = {mx, sum, k, q};
          }
        }
    return beyond;
  };
  if (!lower_bound || stages == 1) {  // one stage takes everything: its cost, no cap to prove
    pass(kInf);
  } else {
    // rest, backwards from the whole split: the last stage takes what is left.
    std::fill(rest.begin(), rest.end(), kInf);
    rest_at(stages, layers, units) = 0;
    for (int j = stages - 1; j >= 0; --j)
      for (int i = j; i <= layers - (stages - j); ++i)
        for (int u = j; u <= units - (stages - j); ++u) {
          if (j == 0 && (i != 0 || u != 0)) continue;  // only the whole split starts there
          double r = kInf;
          for (int e = i + 1; e <= layers - (stages - j - 1); ++e)
            for (int q = 1; u + q <= units - (stages - j - 1); ++q) {
              const double after = rest_at(j + 1, e, u + q);
              if (after < r) r = std::min(r, std::max(after, lower_bound(i, e, q)));
            }
          rest_at(j, i, u) = r;
        }
    // The bottleneck is at least the best split of lower bounds. From there the cap rises
    // until a split fits within it: every cell whose best split, or whose rest, is slower than
    // the cap, which can be no part of the answer, is then left unpriced. A cell within the
    // cap has every candidate that could match it tried (a candidate's own cell before it is
    // within the cap too: its rest is at most the candidate's stage and this cell's rest), so
    // its value is the one the uncapped DP finds; a pass that fits is the answer. Costs solved
    // in a pass stay known in the next.
    double cap = rest_at(0, 0, 0);
    while (cap < kInf) {
      const double beyond = pass(cap);
      if (at(stages, layers, units).max < kInf) break;
      if (beyond == kInf) break;  // nothing left out: no split fits
      cap = std::max(beyond, cap * (1 + kCapStep));
    }
    if (cap == kInf) {  // no split of lower bounds fits either
      std::fill(rest.begin(), rest.end(), 0.0);
      pass(kInf);
    }
  }
  if (at(stages, layers, units).max == kInf)
    throw InputError("no split of " + std::to_string(layers) + " layers into " +
                     std::to_string(stages) +
                     " stages fits (every split has a stage that does "
                     "not: too little SRAM or no valid choice on its band)");
  // The split the cells hold, back from the whole.
  auto traced = [&] {
    StageSplit split;
    split.begin.assign(static_cast<std::size_t>(stages) + 1, 0);
    split.units.assign(static_cast<std::size_t>(stages), 0);
    split.cost.assign(static_cast<std::size_t>(stages), 0);
    for (int j = stages, i = layers, u = units; j > 0; --j) {
      const Cell& c = at(j, i, u);
      split.begin[j] = i;
      split.units[j - 1] = c.took;
      split.cost[j - 1] = stage_cost(c.from, i, c.took, kInf);  // known: c took it within a cutoff
      i = c.from;
      u -= c.took;
    }
    return split;
  };
  StageSplit s = traced();
  if (stages == 1) return s;
  // Among the splits with that bottleneck, the least sum of stage costs (a pipeline's fill and
  // drain). The cells above kept the least max first, so their sums need not be least (a prefix
  // with a larger max but a smaller sum can win once a later stage sets the bottleneck): the
  // DP again, every stage within the bottleneck, minimising the sum, and only through cells
  // that could still beat the split just found (`incumbent`) by the bounds of what they leave.
  const double cap = s.bottleneck(), incumbent = std::accumulate(s.cost.begin(), s.cost.end(), 0.0);
  // rest_sum[j][i][u]: at most the sum of the stages after the j-th of any split of what the
  // cell leaves within the cap (+inf: none). Without a bound, 0.
  std::vector<double> rest_sum(best.size(), lower_bound ? kInf : 0.0);
  auto rest_sum_at = [&](int j, int i, int u) -> double& { return rest_sum[index(j, i, u)]; };
  if (lower_bound) {
    rest_sum_at(stages, layers, units) = 0;
    for (int j = stages - 1; j >= 1; --j)
      for (int i = j; i <= layers - (stages - j); ++i)
        for (int u = j; u <= units - (stages - j); ++u) {
          if (rest_at(j, i, u) > cap) continue;
          double r = kInf;
          for (int e = i + 1; e <= layers - (stages - j - 1); ++e)
            for (int q = 1; u + q <= units - (stages - j - 1); ++q)
              if (const double after = rest_sum_at(j + 1, e, u + q); after < kInf)
                if (const double t = bound_of(i, e, q); t <= cap) r = std::min(r, t + after);
          rest_sum_at(j, i, u) = r;
        }
  }
  std::fill(best.begin(), best.end(), Cell{});
  at(0, 0, 0) = {0, 0, -1, 0};
  for (int j = 1; j <= stages; ++j)
    for (int i = j; i <= layers - (stages - j); ++i)
      for (int u = j; u <= units - (stages - j); ++u) {
        if (j == stages && (i != layers || u != units)) continue;
        const double after = rest_sum_at(j, i, u);
        if (rest_at(j, i, u) > cap || after == kInf) continue;
        candidates.clear();  // reach: the least sum each could give up to this cell
        for (int k = j - 1; k < i; ++k)
          for (int q = 1; q <= u - (j - 1); ++q) {
            const double before = at(j - 1, k, u - q).sum;
            if (before == kInf) continue;
            const double t = bound_of(k, i, q);
            if (t <= cap && before + t + after < incumbent)
              candidates.push_back({before + t, k, q});
          }
        if (candidates.empty()) continue;
        if (lower_bound && j == stages - 1 && stage_cost(i, layers, units - u, cap) > cap)
          continue;  // its last stage is slower than the bottleneck
        if (lower_bound) sort_by_reach();
        Cell& c = at(j, i, u);
        for (const auto& [reach, k, q] : candidates) {
          if (reach >= c.sum) {
            if (lower_bound) break;  // sorted: so does every candidate after it
            continue;
          }
          // Beyond the least of the cap, the cell's best and what could beat the incumbent, it
          // loses.
          const Cell& prev = at(j - 1, k, u - q);
          const double limit = std::min({cap, c.sum - prev.sum, incumbent - after - prev.sum});
          const double t = stage_cost(k, i, q, limit);
          if (t > limit) continue;
          if (prev.sum + t < c.sum) c = {std::max(prev.max, t), prev.sum + t, k, q};
        }
      }
  if (at(stages, layers, units).sum < incumbent) s = traced();
  return s;
}

}  // namespace nocflow::optimizer
