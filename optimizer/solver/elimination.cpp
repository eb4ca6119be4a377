// SPDX-License-Identifier: MIT
#include "optimizer/solver/elimination.h"

#include <algorithm>
#include <cstdint>
#include <limits>

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

struct Edge {
  int a = 0, b = 0;          // endpoints; m is |C_a| × |C_b| row-major
  const double* m = nullptr;   // the problem's table, or `own` once written
  std::vector<double> own;
  bool alive = true;
};

struct Step {
  enum Kind { Isolated, Leaf, Node } kind;
  int v = 0, u = 0, w = 0;
  std::vector<int> argmin;  // Isolated: 1; Leaf: per choice of u
  std::vector<double> a, b; // Node: e1 + cost(v) as [j][i], e2 as [j][k]
  std::size_t nu = 0, nw = 0;

  int node_argmin(std::size_t i, std::size_t k) const {
    int best = 0;
    double best_cost = kInf;
    for (std::size_t j = 0; j < a.size() / nu; ++j) {
      const double c = a[j * nu + i] + b[j * nw + k];
      if (c < best_cost) best_cost = c, best = static_cast<int>(j);
    }
    return best;
  }
};

/// A cost over a few layers: `table` row-major over `scope` (ascending), the last layer fastest.
struct Factor {
  std::vector<int> scope;
  std::vector<double> table;
};

/// One bucket-elimination step: v's best choice for every choice of the other layers in scope.
struct FactorStep {
  int v = 0;
  std::vector<int> scope;
  std::vector<int> argmin;
};

class Eliminator {
 public:
  Eliminator(const Problem& p, double max_additions)
      : n_(p.num_layers()), cost_(p.node), adj_(static_cast<std::size_t>(n_)),
        max_additions_(max_additions) {
    for (int l = 0; l < n_; ++l)
      for (int i = 0; i < p.num_choices(l); ++i)
        if (!p.fits(l, i)) cost_[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)] = kInf;
    edges_.reserve(p.edges.size() * 2 + 1);
    for (const auto& e : p.edges) {
      edges_.push_back({e.u, e.v, e.table(), {}, true});
      link(static_cast<int>(edges_.size() - 1));
    }
    alive_.assign(static_cast<std::size_t>(n_), true);
  }

  /// After run() gave up: what the best order found would take.
  const EliminationNeeds& needs() const { return needs_; }

  std::optional<EliminationResult> run() {
    int left = n_;
    while (left > 0) {
      merge_parallel_edges();
      int best = -1;
      double best_work = kInf;
      for (int v = 0; v < n_; ++v) {
        if (!alive_[static_cast<std::size_t>(v)]) continue;
        const auto nb = neighbours(v);
        double work = kInf;
        if (nb.empty()) work = 0;
        else if (nb.size() == 1) work = size(v) * size(nb[0].first);
        else if (nb.size() == 2) work = size(v) * size(nb[0].first) * size(nb[1].first);
        if (work < best_work) best_work = work, best = v;
      }
      if (best < 0) return eliminate_rest();
      eliminate(best);
      --left;
    }
    return finish();
  }

 private:
  double size(int v) const { return static_cast<double>(cost_[static_cast<std::size_t>(v)].size()); }

  void link(int id) {
    adj_[static_cast<std::size_t>(edges_[static_cast<std::size_t>(id)].a)].push_back(id);
    adj_[static_cast<std::size_t>(edges_[static_cast<std::size_t>(id)].b)].push_back(id);
  }

  void add_edge(int a, int b, std::vector<double> m) {
    edges_.push_back({a, b, nullptr, std::move(m), true});
    edges_.back().m = edges_.back().own.data();
    link(static_cast<int>(edges_.size() - 1));
  }

  /// Cost of edge e with v's choice j and the other end's choice k.
  double edge_at(const Edge& e, int v, int j, int k) const {
    return e.a == v ? e.m[static_cast<std::size_t>(j) * cost_[static_cast<std::size_t>(e.b)].size() + static_cast<std::size_t>(k)]
                    : e.m[static_cast<std::size_t>(k) * cost_[static_cast<std::size_t>(v)].size() + static_cast<std::size_t>(j)];
  }

  /// Alive (neighbour, edge) pairs of v; after merge_parallel_edges each neighbour once.
  std::vector<std::pair<int, int>> neighbours(int v) const {
    std::vector<std::pair<int, int>> out;
    for (int id : adj_[static_cast<std::size_t>(v)]) {
      const Edge& e = edges_[static_cast<std::size_t>(id)];
      if (e.alive) out.push_back({e.a == v ? e.b : e.a, id});
    }
    return out;
  }

  void merge_parallel_edges() {
    for (int v = 0; v < n_; ++v) {
      if (!alive_[static_cast<std::size_t>(v)]) continue;
      auto nb = neighbours(v);
      std::sort(nb.begin(), nb.end());
      for (std::size_t k = 1; k < nb.size(); ++k) {
        if (nb[k].first != nb[k - 1].first) continue;
        Edge& keep = edges_[static_cast<std::size_t>(nb[k - 1].second)];
        Edge& drop = edges_[static_cast<std::size_t>(nb[k].second)];
        const std::size_t cols = cost_[static_cast<std::size_t>(keep.b)].size();
        if (keep.own.empty()) {
          keep.own.assign(keep.m, keep.m + cost_[static_cast<std::size_t>(keep.a)].size() * cols);
          keep.m = keep.own.data();
        }
        for (std::size_t i = 0; i < cost_[static_cast<std::size_t>(keep.a)].size(); ++i)
          for (std::size_t j = 0; j < cols; ++j)
            keep.own[i * cols + j] += drop.a == keep.a ? drop.m[i * cols + j]
                                                      : drop.m[j * cost_[static_cast<std::size_t>(keep.a)].size() + i];
        drop.alive = false;
        nb[k].second = nb[k - 1].second;
        ++result_.edge_steps;
      }
    }
  }

  void eliminate(int v) {
    const auto nb = neighbours(v);
    const auto& cv = cost_[static_cast<std::size_t>(v)];
    Step s{Step::Isolated, v, -1, -1, {}, {}, {}, 0, 0};
    if (nb.empty()) {
      s.argmin = {static_cast<int>(std::min_element(cv.begin(), cv.end()) - cv.begin())};
    } else if (nb.size() == 1) {
      s.kind = Step::Leaf;
      s.u = nb[0].first;
      const Edge& e = edges_[static_cast<std::size_t>(nb[0].second)];
      auto& cu = cost_[static_cast<std::size_t>(s.u)];
      s.argmin.assign(cu.size(), 0);
      for (std::size_t i = 0; i < cu.size(); ++i) {
        double best = kInf;
        for (std::size_t j = 0; j < cv.size(); ++j) {
          const double c = cv[j] + edge_at(e, v, static_cast<int>(j), static_cast<int>(i));
          if (c < best) best = c, s.argmin[i] = static_cast<int>(j);
        }
        cu[i] += best;
      }
      edges_[static_cast<std::size_t>(nb[0].second)].alive = false;
      ++result_.leaf_steps;
    } else {
      s.kind = Step::Node;
      s.u = nb[0].first;
      s.w = nb[1].first;
      const Edge& e1 = edges_[static_cast<std::size_t>(nb[0].second)];
      const Edge& e2 = edges_[static_cast<std::size_t>(nb[1].second)];
      const std::size_t nu = cost_[static_cast<std::size_t>(s.u)].size();
      const std::size_t nw = cost_[static_cast<std::size_t>(s.w)].size();
      // Tables indexed [j][i] and [j][k] so the inner loop runs over contiguous memory.
      std::vector<double> a(cv.size() * nu), b(cv.size() * nw);
      for (std::size_t j = 0; j < cv.size(); ++j) {
        for (std::size_t i = 0; i < nu; ++i) a[j * nu + i] = edge_at(e1, v, static_cast<int>(j), static_cast<int>(i)) + cv[j];
        for (std::size_t k = 0; k < nw; ++k) b[j * nw + k] = edge_at(e2, v, static_cast<int>(j), static_cast<int>(k));
      }
      // Min-plus product without argmin bookkeeping (vectorises); undo() recomputes the one
      // argmin it needs from the stored tables.
      std::vector<double> m(nu * nw, kInf);
      for (std::size_t j = 0; j < cv.size(); ++j)
        for (std::size_t i = 0; i < nu; ++i) {
          const double ai = a[j * nu + i];
          double* row = &m[i * nw];
          const double* bj = &b[j * nw];
          for (std::size_t k = 0; k < nw; ++k) {
            const double c = ai + bj[k];
            row[k] = c < row[k] ? c : row[k];
          }
        }
      s.a = std::move(a);
      s.b = std::move(b);
      s.nu = nu;
      s.nw = nw;
      edges_[static_cast<std::size_t>(nb[0].second)].alive = false;
      edges_[static_cast<std::size_t>(nb[1].second)].alive = false;
      add_edge(s.u, s.w, std::move(m));
      ++result_.node_steps;
    }
    alive_[static_cast<std::size_t>(v)] = false;
    steps_.push_back(std::move(s));
  }

  /// Bucket elimination of what node and edge elimination left (every layer with three or more
  /// neighbours): the layer costs and edges become factors; in the order elimination_order
  /// picks, each layer's factors are summed and minimised over its choices into one factor over
  /// their other layers. nullopt when that order exceeds the limits (elimination.h).
  std::optional<EliminationResult> eliminate_rest() {
    std::vector<Factor> factors;
    std::vector<int> rest;
    for (int v = 0; v < n_; ++v)
      if (alive_[static_cast<std::size_t>(v)]) {
        rest.push_back(v);
        factors.push_back({{v}, cost_[static_cast<std::size_t>(v)]});
      }
    for (const Edge& e : edges_) {
      if (!e.alive) continue;
      const std::size_t na = cost_[static_cast<std::size_t>(e.a)].size(),
                        nb = cost_[static_cast<std::size_t>(e.b)].size();
      Factor f{{std::min(e.a, e.b), std::max(e.a, e.b)}, {}};
      f.table.resize(na * nb);
      for (std::size_t i = 0; i < na; ++i)
        for (std::size_t j = 0; j < nb; ++j)
          (e.a < e.b ? f.table[i * nb + j] : f.table[j * na + i]) = e.m[i * nb + j];
      factors.push_back(std::move(f));
    }
    result_.factor_layers = static_cast<int>(rest.size());
    const Order order = elimination_order(rest);
    if (!order.needs.within_limits()) {
      needs_ = order.needs;
      return std::nullopt;
    }
    result_.largest_table = static_cast<std::int64_t>(order.needs.largest_table);
    std::vector<FactorStep> steps;
    for (int v : order.layers) steps.push_back(eliminate_factor(factors, v));
    choice_.assign(static_cast<std::size_t>(n_), -1);
    for (auto it = steps.rbegin(); it != steps.rend(); ++it) {
      std::size_t index = 0;
      for (int u : it->scope)
        index = index * cost_[static_cast<std::size_t>(u)].size() +
                static_cast<std::size_t>(choice_[static_cast<std::size_t>(u)]);
      choice_[static_cast<std::size_t>(it->v)] = it->argmin[index];
    }
    return undo();
  }

  struct Order {
    std::vector<int> layers;
    EliminationNeeds needs;  ///< additions: Σ entries × choices of the eliminated layer
  };

  /// An elimination order for `rest`, worked out on the layer graph alone (no tables): the
  /// cheapest, by total work, of three greedy rules — fewest table entries next, least
  /// size-weighted fill (new neighbour pairs), fewest neighbours — among those within the
  /// limits (if none is, the one with the smallest largest table).
  Order elimination_order(const std::vector<int>& rest) const {
    std::vector<std::vector<int>> start(static_cast<std::size_t>(n_));
    for (const Edge& e : edges_)
      if (e.alive)
        start[static_cast<std::size_t>(e.a)].push_back(e.b),
            start[static_cast<std::size_t>(e.b)].push_back(e.a);
    std::optional<Order> best;
    for (int rule = 0; rule < 3; ++rule) {
      auto nb = start;
      for (auto& list : nb)
        std::sort(list.begin(), list.end()),
            list.erase(std::unique(list.begin(), list.end()), list.end());
      std::vector<int> left = rest;
      Order o;
      o.needs.max_additions = max_additions_;
      while (!left.empty()) {
        std::size_t pick = 0;
        std::pair<double, double> best_score{kInf, kInf};
        for (std::size_t r = 0; r < left.size(); ++r) {
          const auto& n = nb[static_cast<std::size_t>(left[r])];
          std::pair<double, double> score{table_entries(n), 0};  // second: ties
          if (rule == 1) {
            double fill = 0;
            for (std::size_t x = 0; x < n.size(); ++x)
              for (std::size_t y = x + 1; y < n.size(); ++y)
                if (!std::binary_search(nb[static_cast<std::size_t>(n[x])].begin(),
                                        nb[static_cast<std::size_t>(n[x])].end(), n[y]))
                  fill += size(n[x]) * size(n[y]);
            score = {fill, score.first};  // ties: the smaller table
          } else if (rule == 2) {
            score = {static_cast<double>(n.size()), score.first};
          }
          if (score < best_score) best_score = score, pick = r;
        }
        const int v = left[pick];
        left.erase(left.begin() + static_cast<std::ptrdiff_t>(pick));
        const auto n = nb[static_cast<std::size_t>(v)];
        const double entries = table_entries(n);
        o.layers.push_back(v);
        o.needs.largest_table = std::max(o.needs.largest_table, entries);
        o.needs.all_tables += entries;
        o.needs.additions += entries * size(v);
        for (int a : n) {  // v's neighbours become a clique; v leaves
          auto& list = nb[static_cast<std::size_t>(a)];
          list.erase(std::remove(list.begin(), list.end(), v), list.end());
          for (int b : n)
            if (b != a) list.push_back(b);
          std::sort(list.begin(), list.end());
          list.erase(std::unique(list.begin(), list.end()), list.end());
        }
      }
      const auto key = [](const Order& x) {
        const bool fits = x.needs.within_limits();
        return std::pair{!fits, fits ? x.needs.additions : x.needs.largest_table};
      };
      if (!best || key(o) < key(*best)) best = std::move(o);
    }
    return *best;
  }

  /// The layers sharing a factor with v, ascending.
  static std::vector<int> scope_after(const std::vector<Factor>& factors, int v) {
    std::vector<int> scope;
    for (const Factor& f : factors)
      if (std::binary_search(f.scope.begin(), f.scope.end(), v))
        for (int u : f.scope)
          if (u != v) scope.push_back(u);
    std::sort(scope.begin(), scope.end());
    scope.erase(std::unique(scope.begin(), scope.end()), scope.end());
    return scope;
  }

  double table_entries(const std::vector<int>& scope) const {
    double n = 1;
    for (int u : scope) n *= size(u);
    return n;
  }

  /// Replaces the factors holding v by their sum minimised over v; returns the argmin table.
  FactorStep eliminate_factor(std::vector<Factor>& factors, int v) {
    FactorStep step{v, scope_after(factors, v), {}};
    std::vector<Factor> bucket, others;
    for (Factor& f : factors)
      (std::binary_search(f.scope.begin(), f.scope.end(), v) ? bucket : others)
          .push_back(std::move(f));
    // Each bucket factor's stride for every scope layer (0 if it lacks it) and for v.
    const std::size_t d = step.scope.size(), nv = cost_[static_cast<std::size_t>(v)].size();
    std::vector<std::size_t> radix(d);
    for (std::size_t k = 0; k < d; ++k)
      radix[k] = cost_[static_cast<std::size_t>(step.scope[k])].size();
    std::vector<std::vector<std::size_t>> stride(bucket.size(), std::vector<std::size_t>(d, 0));
    std::vector<std::size_t> v_stride(bucket.size(), 0);
    for (std::size_t b = 0; b < bucket.size(); ++b) {
      std::size_t s = 1;
      for (std::size_t k = bucket[b].scope.size(); k-- > 0;) {
        const int u = bucket[b].scope[k];
        if (u == v)
          v_stride[b] = s;
        else
          stride[b][static_cast<std::size_t>(
              std::lower_bound(step.scope.begin(), step.scope.end(), u) - step.scope.begin())] = s;
        s *= cost_[static_cast<std::size_t>(u)].size();
      }
    }
    const auto entries = static_cast<std::size_t>(table_entries(step.scope));
    Factor out{step.scope, std::vector<double>(entries)};
    step.argmin.assign(entries, 0);
    std::vector<std::size_t> digit(d, 0), base(bucket.size(), 0);
    std::vector<double> sum(nv);
    for (std::size_t e = 0; e < entries; ++e) {
      std::fill(sum.begin(), sum.end(), 0.0);
      for (std::size_t b = 0; b < bucket.size(); ++b) {
        const double* t = bucket[b].table.data() + base[b];
        for (std::size_t j = 0; j < nv; ++j) sum[j] += t[j * v_stride[b]];
      }
      const auto best = std::min_element(sum.begin(), sum.end());
      out.table[e] = *best;
      step.argmin[e] = static_cast<int>(best - sum.begin());
      for (std::size_t k = d; k-- > 0;) {  // next assignment, last scope layer fastest
        for (std::size_t b = 0; b < bucket.size(); ++b) base[b] += stride[b][k];
        if (++digit[k] < radix[k]) break;
        for (std::size_t b = 0; b < bucket.size(); ++b) base[b] -= stride[b][k] * radix[k];
        digit[k] = 0;
      }
    }
    others.push_back(std::move(out));
    factors = std::move(others);
    return step;
  }

  std::optional<EliminationResult> finish() {
    choice_.assign(static_cast<std::size_t>(n_), -1);
    return undo();
  }

  std::optional<EliminationResult> undo() {
    for (auto it = steps_.rbegin(); it != steps_.rend(); ++it) {
      auto& x = choice_;
      if (it->kind == Step::Isolated) x[static_cast<std::size_t>(it->v)] = it->argmin[0];
      else if (it->kind == Step::Leaf) x[static_cast<std::size_t>(it->v)] = it->argmin[static_cast<std::size_t>(x[static_cast<std::size_t>(it->u)])];
      else x[static_cast<std::size_t>(it->v)] = it->node_argmin(static_cast<std::size_t>(x[static_cast<std::size_t>(it->u)]), static_cast<std::size_t>(x[static_cast<std::size_t>(it->w)]));
    }
    result_.choice = choice_;
    return result_;
  }

  int n_;
  std::vector<std::vector<double>> cost_;
  std::vector<std::vector<int>> adj_;
  std::vector<Edge> edges_;
  std::vector<bool> alive_;
  std::vector<Step> steps_;
  std::vector<int> choice_;
  EliminationResult result_;
  double max_additions_;
  EliminationNeeds needs_;
};

}  // namespace

std::optional<EliminationResult> solve_by_elimination(const Problem& p, EliminationNeeds* needs,
                                                      double max_additions) {
  Eliminator e(p, max_additions);
  auto result = e.run();
  if (needs) *needs = e.needs();
  return result;
}

}  // namespace nocflow::optimizer
