// SPDX-License-Identifier: MIT
#include "optimizer/solver/tree_bound.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
using Table = std::vector<std::vector<double>>;

std::size_t L(int i) {
  return static_cast<std::size_t>(i);
}

int find_root(std::vector<int>& parent, int x) {
  while (parent[L(x)] != x) x = parent[L(x)] = parent[L(parent[L(x)])];
  return x;
}

/// Largest minus smallest finite entry among the choices that fit (how much the edge can
/// separate choices: those edges go into the forest first).
double spread(const Problem::Edge& e, const Table& unary) {
  const auto& fu = unary[L(e.u)];
  const auto& fv = unary[L(e.v)];
  const bool all_fit = std::all_of(fv.begin(), fv.end(), [](double x) { return std::isfinite(x); });
  const double* table = e.table();
  const std::size_t nv = fv.size();
  double lo = kInf, hi = -kInf;
  for (std::size_t i = 0; i < fu.size(); ++i) {
    if (!std::isfinite(fu[i])) continue;
    const double* row = table + i * nv;
    for (std::size_t j = 0; j < nv; ++j)
      if (all_fit || std::isfinite(fv[j])) lo = std::min(lo, row[j]), hi = std::max(hi, row[j]);
  }
  return hi > lo ? hi - lo : 0;
}

double range_of(const std::vector<double>& v) {
  double lo = kInf, hi = -kInf;
  for (double x : v)
    if (std::isfinite(x)) lo = std::min(lo, x), hi = std::max(hi, x);
  return hi > lo ? hi - lo : 0;
}

/// An edge outside the forest, solved on its own: its entries minus the shares `mu_u`, `mu_v`
/// that the forest's problem carries on the ends' unary costs instead. Any split keeps the sum
/// of the two problems equal to the true cost of every assignment, so the sum of their minima
/// is a lower bound (Lagrangian decomposition); the split is tuned to raise it.
struct Folded {
  const Problem::Edge* e = nullptr;
  std::vector<double> mu_u, mu_v;
  double min = 0;          ///< cheapest entry minus shares, over choices that fit
  int at_u = 0, at_v = 0;  ///< where
};

/// The forest: Kruskal on the edges' spreads, largest first; each tree rooted at its lowest
/// layer, layers in breadth-first order.
struct Forest {
  std::vector<int> parent, bfs, tree_of, roots;
  std::vector<std::size_t> up_edge;  ///< the edge from a layer's parent
  std::vector<std::vector<int>> children;
  std::vector<std::size_t> folded;  ///< edges outside it
};

Forest build_forest(const Problem& p, const Table& unary) {
  const int n = p.num_layers();
  std::vector<std::size_t> order(p.edges.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<double> weight;
  for (const auto& e : p.edges) weight.push_back(spread(e, unary));
  std::stable_sort(order.begin(), order.end(),
                   [&](std::size_t a, std::size_t b) { return weight[a] > weight[b]; });
  Forest f;
  std::vector<int> set(L(n));
  std::iota(set.begin(), set.end(), 0);
  std::vector<std::vector<std::size_t>> adjacent(L(n));  // forest edges at each layer
  for (std::size_t e : order) {
    const int a = find_root(set, p.edges[e].u), b = find_root(set, p.edges[e].v);
    if (a == b) {
      f.folded.push_back(e);
      continue;
    }
    set[L(a)] = b;
    adjacent[L(p.edges[e].u)].push_back(e);
    adjacent[L(p.edges[e].v)].push_back(e);
  }
  f.parent.assign(L(n), -1);
  f.up_edge.assign(L(n), 0);
  f.tree_of.assign(L(n), -1);
  f.children.resize(L(n));
  for (int r = 0; r < n; ++r) {
    if (f.tree_of[L(r)] >= 0) continue;
    f.tree_of[L(r)] = static_cast<int>(f.roots.size());
    f.roots.push_back(r);
    f.bfs.push_back(r);
    for (std::size_t k = f.bfs.size() - 1; k < f.bfs.size(); ++k) {
      const int x = f.bfs[k];
      for (std::size_t e : adjacent[L(x)]) {
        const int y = p.edges[e].u == x ? p.edges[e].v : p.edges[e].u;
        if (f.tree_of[L(y)] >= 0) continue;
        f.tree_of[L(y)] = f.tree_of[L(r)];
        f.parent[L(y)] = x;
        f.up_edge[L(y)] = e;
        f.children[L(x)].push_back(y);
        f.bfs.push_back(y);
      }
    }
  }
  return f;
}

/// Dynamic programming over the forest with the given unary costs.
class ForestDp {
 public:
  ForestDp(const Problem& p, const Forest& f) : p_(p), f_(f) {}

  /// Cost of the edge from c's parent (choice i) to c (choice j).
  double edge_cost(int c, int i, int j) const {
    const Problem::Edge& e = p_.edges[f_.up_edge[L(c)]];
    return e.u == c ? e.at(j, i) : e.at(i, j);
  }

  /// The same table as strides: entry (i, j) at t[i · si + j · sj].
  struct Strided {
    const double* t;
    std::size_t si, sj;
  };
  Strided up_table(int c) const {
    const Problem::Edge& e = p_.edges[f_.up_edge[L(c)]];
    const auto nv = static_cast<std::size_t>(e.nv);
    return e.u == c ? Strided{e.table(), 1, nv} : Strided{e.table(), nv, 1};
  }

  /// Upward: sub[c][j] = the cheapest cost of c's subtree with c at j; up[c][i] = the cheapest
  /// cost of c's subtree plus its edge, with c's parent at i. Returns the trees' minima.
  std::vector<double> upward(const Table& unary) {
    sub_ = unary;
    up_.assign(unary.size(), {});
    for (auto it = f_.bfs.rbegin(); it != f_.bfs.rend(); ++it) {
      const int c = *it, q = f_.parent[L(c)];
      if (q < 0) continue;
      auto& u = up_[L(c)];
      u.assign(L(p_.num_choices(q)), kInf);
      const Strided e = up_table(c);
      const double* s = sub_[L(c)].data();
      const std::size_t nc = sub_[L(c)].size();
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double* row = e.t + i * e.si;
        double best = kInf;
        for (std::size_t j = 0; j < nc; ++j) best = std::min(best, s[j] + row[j * e.sj]);
        u[i] = best;
      }
      for (int i = 0; i < p_.num_choices(q); ++i) sub_[L(q)][L(i)] += u[L(i)];
    }
    std::vector<double> tree_min;
    for (int r : f_.roots)
      tree_min.push_back(*std::min_element(sub_[L(r)].begin(), sub_[L(r)].end()));
    return tree_min;
  }

  /// After upward(unary): each root at its best, each child at its best given its parent's.
  std::vector<int> decode() const {
    std::vector<int> x(sub_.size(), 0);
    for (int c : f_.bfs) {
      const int q = f_.parent[L(c)];
      double best = kInf;
      for (int j = 0; j < p_.num_choices(c); ++j) {
        const double v = sub_[L(c)][L(j)] + (q < 0 ? 0 : edge_cost(c, x[L(q)], j));
        if (v < best) best = v, x[L(c)] = j;
      }
    }
    return x;
  }

  /// After upward(unary): every choice's min-marginal within its tree.
  Table marginals(const Table& unary) const {
    // down[c][j] = the cheapest cost of everything in c's tree outside c's subtree, c at j.
    Table down(unary.size()), out(unary.size());
    for (int c : f_.bfs) {
      const int q = f_.parent[L(c)];
      down[L(c)].assign(L(p_.num_choices(c)), 0);
      if (q >= 0) {
        std::vector<double> outside(down[L(q)]);  // q's side without c's subtree
        for (int i = 0; i < p_.num_choices(q); ++i) {
          outside[L(i)] += unary[L(q)][L(i)];
          for (int k : f_.children[L(q)])
            if (k != c) outside[L(i)] += up_[L(k)][L(i)];
        }
        for (int j = 0; j < p_.num_choices(c); ++j) {
          double best = kInf;
          for (int i = 0; i < p_.num_choices(q); ++i)
            best = std::min(best, outside[L(i)] + edge_cost(c, i, j));
          down[L(c)][L(j)] = best;
        }
      }
      for (int j = 0; j < p_.num_choices(c); ++j)
        out[L(c)].push_back(sub_[L(c)][L(j)] + down[L(c)][L(j)]);
    }
    return out;
  }

 private:
  const Problem& p_;
  const Forest& f_;
  Table sub_, up_;
};

/// The forest's unary costs: the true ones plus every folded edge's shares.
Table shared_unary(const Table& unary, const std::vector<Folded>& folded) {
  Table u = unary;
  for (const Folded& f : folded) {
    auto& a = u[L(f.e->u)];
    auto& b = u[L(f.e->v)];
    for (std::size_t i = 0; i < a.size(); ++i) a[i] += f.mu_u[i];
    for (std::size_t j = 0; j < b.size(); ++j) b[j] += f.mu_v[j];
  }
  return u;
}

/// The folded edge's own problem over the choices that fit (finite unary cost): f.min and where
/// it is, and with `minima` per choice of each end its cheapest entry minus shares (+inf for a
/// choice that does not fit).
struct EdgeMinima {
  std::vector<double> row, col;
};
void solve_folded(Folded& f, const Table& unary, EdgeMinima* minima = nullptr) {
  const auto& fu = unary[L(f.e->u)];
  const auto& fv = unary[L(f.e->v)];
  if (minima) minima->row.assign(fu.size(), kInf), minima->col.assign(fv.size(), kInf);
  const double* table = f.e->table();
  const double* mu_v = f.mu_v.data();
  const std::size_t nv = fv.size();
  double least = kInf;
  std::size_t at_u = 0, at_v = 0;
  for (std::size_t i = 0; i < fu.size(); ++i) {
    if (!std::isfinite(fu[i])) continue;
    const double* row = table + i * nv;
    const double mu_u = f.mu_u[i];
    for (std::size_t j = 0; j < nv; ++j) {
      if (!std::isfinite(fv[j])) continue;
      const double c = row[j] - mu_u - mu_v[j];
      if (minima)
        minima->row[i] = std::min(minima->row[i], c), minima->col[j] = std::min(minima->col[j], c);
      if (c < least) least = c, at_u = i, at_v = j;
    }
  }
  f.min = least;
  if (least < kInf) f.at_u = static_cast<int>(at_u), f.at_v = static_cast<int>(at_v);
}

/// Every choice's lower bound under the shares in `folded`: its min-marginal in the forest's
/// problem, plus each folded edge's minimum, raised to its minimum with that choice at an end.
Table lower_bounds(const Problem& p, const Forest& forest, const Table& unary,
                   std::vector<Folded>& folded) {
  const Table shared = shared_unary(unary, folded);
  ForestDp dp(p, forest);
  const std::vector<double> tree_min = dp.upward(shared);
  Table lower = dp.marginals(shared);
  double rest = std::accumulate(tree_min.begin(), tree_min.end(), 0.0);
  std::vector<EdgeMinima> minima(folded.size());
  for (std::size_t k = 0; k < folded.size(); ++k)
    solve_folded(folded[k], unary, &minima[k]), rest += folded[k].min;
  for (int l = 0; l < p.num_layers(); ++l)
    for (double& v : lower[L(l)]) v += rest - tree_min[L(forest.tree_of[L(l)])];
  for (std::size_t k = 0; k < folded.size(); ++k) {
    const Folded& f = folded[k];
    for (std::size_t i = 0; i < minima[k].row.size(); ++i)
      lower[L(f.e->u)][i] += minima[k].row[i] - f.min;
    for (std::size_t j = 0; j < minima[k].col.size(); ++j)
      lower[L(f.e->v)][j] += minima[k].col[j] - f.min;
  }
  return lower;
}

/// Iterated conditional modes: each layer in turn to its cheapest choice given the others,
/// until none moves (each move lowers the cost, so this ends).
void improve(const Problem& p, std::vector<int>& x) {
  const int n = p.num_layers();
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
          c += ed.u == l ? ed.at(j, x[L(ed.v)]) : ed.at(x[L(ed.u)], j);
        }
        return c;
      };
      int& at = x[L(l)];
      double now = cost_at(at);
      for (int j = 0; j < p.num_choices(l); ++j)
        if (const double c = cost_at(j); c < now - 1e-12 * std::max(1.0, std::abs(now)))
          at = j, now = c, moved = true;
    }
  }
}

}  // namespace

TreeBound tree_bound(const Problem& p, int iterations, double known_upper, double cutoff) {
  const int n = p.num_layers();
  Table unary(L(n));
  for (int l = 0; l < n; ++l)
    for (int i = 0; i < p.num_choices(l); ++i)
      unary[L(l)].push_back(p.fits(l, i) ? p.node[L(l)][L(i)] : kInf);
  const Forest forest = build_forest(p, unary);

  // Start from each folded edge's cheapest entry per choice of one end (the end where that
  // separates choices more) carried by the forest: the edge's own minimum is then 0.
  std::vector<Folded> folded;
  for (std::size_t e : forest.folded) {
    Folded& f = folded.emplace_back();
    f.e = &p.edges[e];
    f.mu_u.assign(L(p.num_choices(f.e->u)), 0);
    f.mu_v.assign(L(p.num_choices(f.e->v)), 0);
    EdgeMinima m;
    solve_folded(f, unary, &m);
    const bool by_row = range_of(m.row) >= range_of(m.col);
    auto& mu = by_row ? f.mu_u : f.mu_v;
    const auto& from = by_row ? m.row : m.col;
    for (std::size_t i = 0; i < mu.size(); ++i) mu[i] = std::isfinite(from[i]) ? from[i] : 0;
  }

  TreeBound b;
  b.upper = kInf;
  auto offer = [&](std::vector<int> x) {
    if (const double c = evaluate(p, x); c < b.upper) b.upper = c, b.assignment = std::move(x);
  };
  // Subgradient ascent on the shares (Polyak steps towards the best known cost): the forest
  // and a folded edge that disagree on an end's choice move share from the choice the forest
  // took to the one the edge took. The best shares found give the bounds; every forest
  // assignment on the way is a candidate for the upper bound.
  std::vector<Folded> start = folded, best = folded;
  double best_bound = -kInf, start_bound = -kInf, scale = 1;
  int stale = 0;
  for (int it = 0;; ++it) {
    const Table shared = shared_unary(unary, folded);
    ForestDp dp(p, forest);
    const std::vector<double> tree_min = dp.upward(shared);
    std::vector<int> x = dp.decode();
    double bound = std::accumulate(tree_min.begin(), tree_min.end(), 0.0);
    for (Folded& f : folded) solve_folded(f, unary), bound += f.min;
    if (it == 0) {
      start_bound = bound;
      improve(p, x);  // a tight upper bound from the start: the steps aim at it
    }
    offer(x);
    const double target = std::min(b.upper, known_upper);
    // A step that closes less than 0.1 % of the remaining gap counts as no progress; after 20
    // such steps the step size halves.
    const bool progress = it == 0 || bound > best_bound + 1e-3 * (target - best_bound);
    if (bound > best_bound) best_bound = bound, best = folded;
    stale = progress ? 0 : stale + 1;
    if (stale >= 20) scale /= 2, stale = 0;
    double norm = 0;
    for (const Folded& f : folded)
      norm += (x[L(f.e->u)] != f.at_u ? 2 : 0) + (x[L(f.e->v)] != f.at_v ? 2 : 0);
    if (it >= iterations || norm == 0 || scale < 1e-4 || bound_met(best_bound, target) ||
        above_cutoff(best_bound, cutoff))
      break;
    const double step = scale * (target - bound) / norm;
    for (Folded& f : folded) {
      if (x[L(f.e->u)] != f.at_u) f.mu_u[L(x[L(f.e->u)])] += step, f.mu_u[L(f.at_u)] -= step;
      if (x[L(f.e->v)] != f.at_v) f.mu_v[L(x[L(f.e->v)])] += step, f.mu_v[L(f.at_v)] -= step;
    }
  }

  b.bound = best_bound;
  if (above_cutoff(best_bound, cutoff)) return b;  // no choice's bound is needed
  b.lower = lower_bounds(p, forest, unary, best);
  if (best_bound > start_bound) {  // per choice the starting shares can still be the tighter
    const Table first = lower_bounds(p, forest, unary, start);
    for (std::size_t l = 0; l < first.size(); ++l)
      for (std::size_t j = 0; j < first[l].size(); ++j)
        b.lower[l][j] = std::max(b.lower[l][j], first[l][j]);
  }
  std::vector<int> x = b.assignment;
  improve(p, x);
  offer(std::move(x));
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

BoundPruning prune_by_bound(const Problem& p, double cutoff) {
  for (const auto& e : p.edges)
    if (!e.tabulated()) throw std::logic_error("prune_by_bound: an edge has rows on demand");
  BoundPruning r;
  r.kept.resize(static_cast<std::size_t>(p.num_layers()));
  for (int l = 0; l < p.num_layers(); ++l)
    for (int j = 0; j < p.num_choices(l); ++j) r.kept[static_cast<std::size_t>(l)].push_back(j);
  r.upper = std::numeric_limits<double>::infinity();
  r.lower = p.num_layers() > 0 ? -std::numeric_limits<double>::infinity() : 0;
  // Short tuning first: each round that drops many choices leaves a smaller problem for the
  // next to tune; one that drops few (under a tenth) makes the next tune 4 times longer.
  int iterations = std::min(25, kTreeBoundIterations);
  std::size_t offered = 0, dropped = 0;  // the last round's choices, and how many it dropped
  std::size_t all = 0;
  for (const auto& k : r.kept) all += k.size();
  for (;;) {
    if (r.rounds > 0 && dropped == 0 &&
        (iterations >= kTreeBoundIterations || bound_met(r.lower, r.upper)))
      break;
    if (r.rounds > 0 && dropped * 10 < offered)
      iterations = std::min(4 * iterations, kTreeBoundIterations);
    offered = 0;
    for (const auto& k : r.kept) offered += k.size();
    // (Until a round drops a choice the problem is p itself: no copy of its tables.)
    const TreeBound b =
        offered == all ? tree_bound(p, iterations, r.upper, cutoff)
                       : tree_bound(restrict_problem(p, r.kept), iterations, r.upper, cutoff);
    ++r.rounds;
    r.lower = std::max(r.lower, b.bound);
    if (!b.lower.empty()) {
      const auto& first = b.lower.front();
      r.lower = std::max(r.lower, *std::min_element(first.begin(), first.end()));
    }
    if (b.upper < r.upper) {
      r.upper = b.upper;
      r.assignment = unrestricted(b.assignment, r.kept);
    }
    if (above_cutoff(r.lower, cutoff)) {
      r.above_cutoff = true;
      break;
    }
    const auto within = choices_within(b, r.upper);
    dropped = 0;
    for (std::size_t l = 0; l < r.kept.size(); ++l) {
      if (within[l].size() == r.kept[l].size()) continue;
      dropped += r.kept[l].size() - within[l].size();
      std::vector<int> next;
      for (int j : within[l]) next.push_back(r.kept[l][static_cast<std::size_t>(j)]);
      r.kept[l] = std::move(next);
    }
  }
  return r;
}

}  // namespace nocflow::optimizer
