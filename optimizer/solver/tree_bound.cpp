// SPDX-License-Identifier: MIT
#include "optimizer/solver/tree_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Table = std::vector<std::vector<double>>;

int find_root(std::vector<int>& parent, int x) {
  while (parent[static_cast<std::size_t>(x)] != x)
    x = parent[static_cast<std::size_t>(x)] =
        parent[static_cast<std::size_t>(parent[static_cast<std::size_t>(x)])];
  return x;
}

/// Largest minus smallest finite entry among the choices that fit (how much the edge can
/// separate choices: those edges go into the forest first).
double spread(const Problem& p, const Problem::Edge& e, const Table& unary) {
  double lo = kInf, hi = -kInf;
  const auto& fu = unary[static_cast<std::size_t>(e.u)];
  const auto& fv = unary[static_cast<std::size_t>(e.v)];
  for (int i = 0; i < p.num_choices(e.u); ++i)
    for (int j = 0; j < e.nv; ++j)
      if (std::isfinite(fu[static_cast<std::size_t>(i)]) &&
          std::isfinite(fv[static_cast<std::size_t>(j)]))
        lo = std::min(lo, e.at(i, j)), hi = std::max(hi, e.at(i, j));
  return hi > lo ? hi - lo : 0;
}

double range_of(const std::vector<double>& v) {
  double lo = kInf, hi = -kInf;
  for (double x : v)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  return hi > lo ? hi - lo : 0;
}

/// Replaces edge e by its cheapest entry per choice of one end (the end where that separates
/// choices more), added to that end's unary cost. Entries against choices that do not fit are
/// left out: no assignment takes those.
void fold(const Problem& p, const Problem::Edge& e, Table& unary) {
  const int nu = p.num_choices(e.u);
  auto& fu = unary[static_cast<std::size_t>(e.u)];
  auto& fv = unary[static_cast<std::size_t>(e.v)];
  std::vector<double> row(static_cast<std::size_t>(nu), kInf),
      col(static_cast<std::size_t>(e.nv), kInf);
  for (int i = 0; i < nu; ++i)
    for (int j = 0; j < e.nv; ++j) {
      if (std::isfinite(fv[static_cast<std::size_t>(j)]))
        row[static_cast<std::size_t>(i)] = std::min(row[static_cast<std::size_t>(i)], e.at(i, j));
      if (std::isfinite(fu[static_cast<std::size_t>(i)]))
        col[static_cast<std::size_t>(j)] = std::min(col[static_cast<std::size_t>(j)], e.at(i, j));
    }
  if (range_of(row) >= range_of(col))
    for (int i = 0; i < nu; ++i)
      fu[static_cast<std::size_t>(i)] += row[static_cast<std::size_t>(i)];
  else
    for (int j = 0; j < e.nv; ++j)
      fv[static_cast<std::size_t>(j)] += col[static_cast<std::size_t>(j)];
}

}  // namespace

TreeBound tree_bound(const Problem& p) {
  const int n = p.num_layers();
  const auto L = [](int l) { return static_cast<std::size_t>(l); };
  Table unary(L(n));
  for (int l = 0; l < n; ++l)
    for (int i = 0; i < p.num_choices(l); ++i)
      unary[L(l)].push_back(p.fits(l, i) ? p.node[L(l)][L(i)] : kInf);

  // The forest: Kruskal on the edges' spreads, largest first; the rest are folded.
  std::vector<std::size_t> order(p.edges.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> weight;
  for (const auto& e : p.edges) weight.push_back(spread(p, e, unary));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
  std::vector<int> set(L(n));
  std::iota(set.begin(), set.end(), 0);
  std::vector<std::vector<std::size_t>> adjacent(L(n));  // forest edges at each layer
  for (std::size_t e : order) {
    const int a = find_root(set, p.edges[e].u), b = find_root(set, p.edges[e].v);
    if (a != b) {
      set[L(a)] = b;
      adjacent[L(p.edges[e].u)].push_back(e);
      adjacent[L(p.edges[e].v)].push_back(e);
    } else {
      fold(p, p.edges[e], unary);
    }
  }

  // Each tree rooted at its lowest layer, layers in breadth-first order.
  std::vector<int> parent(L(n), -1), bfs;
  std::vector<std::size_t> up_edge(L(n));
  std::vector<int> tree_of(L(n), -1), roots;
  for (int r = 0; r < n; ++r) {
    if (tree_of[L(r)] >= 0) continue;
    tree_of[L(r)] = static_cast<int>(roots.size());
    roots.push_back(r);
    bfs.push_back(r);
    for (std::size_t k = bfs.size() - 1; k < bfs.size(); ++k) {
      const int x = bfs[k];
      for (std::size_t e : adjacent[L(x)]) {
        const int y = p.edges[e].u == x ? p.edges[e].v : p.edges[e].u;
        if (tree_of[L(y)] >= 0) continue;
        tree_of[L(y)] = tree_of[L(r)];
        parent[L(y)] = x;
        up_edge[L(y)] = e;
        bfs.push_back(y);
      }
    }
  }
  // Cost of the edge from c's parent (choice i) to c (choice j).
  auto edge_cost = [&](int c, int i, int j) {
    const Problem::Edge& e = p.edges[up_edge[L(c)]];
    return e.u == c ? e.at(j, i) : e.at(i, j);
  };

  // Upward: sub[c][j] = the cheapest relaxed cost of c's subtree with c at j; up[c][i] = the
  // cheapest cost of c's subtree plus its edge, with c's parent at i.
  Table sub = unary, up(L(n));
  for (auto it = bfs.rbegin(); it != bfs.rend(); ++it) {
    const int c = *it, q = parent[L(c)];
    if (q < 0) continue;
    auto& u = up[L(c)];
    u.assign(L(p.num_choices(q)), kInf);
    for (int i = 0; i < p.num_choices(q); ++i)
      for (int j = 0; j < p.num_choices(c); ++j)
        u[L(i)] = std::min(u[L(i)], sub[L(c)][L(j)] + edge_cost(c, i, j));
    for (int i = 0; i < p.num_choices(q); ++i) sub[L(q)][L(i)] += u[L(i)];
  }
  // Downward: down[c][j] = the cheapest relaxed cost of everything outside c's subtree, c at j.
  std::vector<std::vector<int>> children(L(n));
  for (int c : bfs)
    if (parent[L(c)] >= 0) children[L(parent[L(c)])].push_back(c);
  Table down(L(n));
  for (int c : bfs) {
    const int q = parent[L(c)];
    down[L(c)].assign(L(p.num_choices(c)), 0);
    if (q < 0) continue;
    std::vector<double> outside(down[L(q)]);  // q's side without c's subtree
    for (int i = 0; i < p.num_choices(q); ++i) {
      outside[L(i)] += unary[L(q)][L(i)];
      for (int k : children[L(q)])
        if (k != c) outside[L(i)] += up[L(k)][L(i)];
    }
    for (int j = 0; j < p.num_choices(c); ++j) {
      double best = kInf;
      for (int i = 0; i < p.num_choices(q); ++i)
        best = std::min(best, outside[L(i)] + edge_cost(c, i, j));
      down[L(c)][L(j)] = best;
    }
  }

  TreeBound b;
  std::vector<double> tree_min(roots.size());
  for (std::size_t t = 0; t < roots.size(); ++t) {
    const auto& s = sub[L(roots[t])];
    tree_min[t] = *std::min_element(s.begin(), s.end());
  }
  const double all = std::accumulate(tree_min.begin(), tree_min.end(), 0.0);
  b.lower.resize(L(n));
  for (int l = 0; l < n; ++l) {
    const double others = all - tree_min[L(tree_of[L(l)])];
    for (int j = 0; j < p.num_choices(l); ++j)
      b.lower[L(l)].push_back(sub[L(l)][L(j)] + down[L(l)][L(j)] + others);
  }
  // The relaxation's cheapest assignment: each root at its best, each child at its best given
  // its parent's choice.
  b.assignment.assign(L(n), 0);
  for (int c : bfs) {
    const int q = parent[L(c)];
    double best = kInf;
    for (int j = 0; j < p.num_choices(c); ++j) {
      const double v = sub[L(c)][L(j)] + (q < 0 ? 0 : edge_cost(c, b.assignment[L(q)], j));
      if (v < best) best = v, b.assignment[L(c)] = j;
    }
  }
  b.upper = evaluate(p, b.assignment);
  // Iterated conditional modes: each layer in turn to its cheapest choice given the others,
  // until none moves (each move lowers the cost, so this ends).
  std::vector<std::vector<std::size_t>> incident(L(n));
  for (std::size_t e = 0; e < p.edges.size(); ++e) {
    incident[L(p.edges[e].u)].push_back(e);
    incident[L(p.edges[e].v)].push_back(e);
  }
  for (bool moved = true; moved;) {
    moved = false;
    for (int l = 0; l < n; ++l) {
      auto cost_at = [&](int j) {
        if (!p.fits(l, j)) return kInf;
        double c = p.node[L(l)][L(j)];
        for (std::size_t e : incident[L(l)]) {
          const Problem::Edge& ed = p.edges[e];
          c += ed.u == l ? ed.at(j, b.assignment[L(ed.v)]) : ed.at(b.assignment[L(ed.u)], j);
        }
        return c;
      };
      int& x = b.assignment[L(l)];
      double now = cost_at(x);
      for (int j = 0; j < p.num_choices(l); ++j)
        if (const double c = cost_at(j); c < now - 1e-12 * std::max(1.0, std::abs(now)))
          x = j, now = c, moved = true;
    }
  }
  b.upper = evaluate(p, b.assignment);
  return b;
}

std::vector<std::vector<int>> choices_within(const TreeBound& b, double upper) {
  const double allowance = 1e-9 * std::max(1.0, std::abs(upper));
  std::vector<std::vector<int>> kept(b.lower.size());
  for (std::size_t l = 0; l < b.lower.size(); ++l) {
    for (std::size_t j = 0; j < b.lower[l].size(); ++j)
      if (b.lower[l][j] <= upper + allowance) kept[l].push_back(static_cast<int>(j));
    if (kept[l].empty()) kept[l].push_back(b.assignment[l]);  // only by rounding; keep one
  }
  return kept;
}

BoundPruning prune_by_bound(const Problem& p) {
  BoundPruning r;
  r.kept.resize(static_cast<std::size_t>(p.num_layers()));
  for (int l = 0; l < p.num_layers(); ++l)
    for (int j = 0; j < p.num_choices(l); ++j) r.kept[static_cast<std::size_t>(l)].push_back(j);
  r.upper = std::numeric_limits<double>::infinity();
  r.lower = p.num_layers() > 0 ? -std::numeric_limits<double>::infinity() : 0;
  for (bool dropped = true; dropped;) {
    const TreeBound b = tree_bound(restrict_problem(p, r.kept));
    ++r.rounds;
    if (!b.lower.empty()) {
      const auto& first = b.lower.front();
      r.lower = std::max(r.lower, *std::min_element(first.begin(), first.end()));
    }
    if (b.upper < r.upper) {
      r.upper = b.upper;
      r.assignment.clear();
      for (std::size_t l = 0; l < r.kept.size(); ++l)
        r.assignment.push_back(r.kept[l][static_cast<std::size_t>(b.assignment[l])]);
    }
    const auto within = choices_within(b, r.upper);
    dropped = false;
    for (std::size_t l = 0; l < r.kept.size(); ++l) {
      if (within[l].size() == r.kept[l].size()) continue;
      dropped = true;
      std::vector<int> next;
      for (int j : within[l]) next.push_back(r.kept[l][static_cast<std::size_t>(j)]);
      r.kept[l] = std::move(next);
    }
  }
  return r;
}

}  // namespace nocflow::optimizer
