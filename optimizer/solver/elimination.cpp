// SPDX-License-Identifier: MIT
#include "optimizer/solver/elimination.h"

#include <algorithm>
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

class Eliminator {
 public:
  explicit Eliminator(const Problem& p) : n_(p.num_layers()), cost_(p.node), adj_(static_cast<std::size_t>(n_)) {
    for (int l = 0; l < n_; ++l)
      for (int i = 0; i < p.num_choices(l); ++i)
        if (!p.fits(l, i)) cost_[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)] = kInf;
    edges_.reserve(p.edges.size() * 2 + 1);
    for (const auto& e : p.edges) {
      edges_.push_back({e.u, e.v, e.cost.data(), {}, true});
      link(static_cast<int>(edges_.size() - 1));
    }
    alive_.assign(static_cast<std::size_t>(n_), true);
  }

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
      if (best < 0) return enumerate_rest();
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
      // argmin it needs from the stored tables, visiting j in the same order.
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

  std::optional<EliminationResult> enumerate_rest() {
    std::vector<int> rest;
    double count = 1;
    for (int v = 0; v < n_; ++v)
      if (alive_[static_cast<std::size_t>(v)]) rest.push_back(v), count *= size(v);
    if (count > 1e6) return std::nullopt;
    result_.enumerated_layers = static_cast<int>(rest.size());
    choice_.assign(static_cast<std::size_t>(n_), -1);
    std::vector<int> x(rest.size(), 0), best_x = x;
    double best = kInf;
    while (true) {
      for (std::size_t k = 0; k < rest.size(); ++k) choice_[static_cast<std::size_t>(rest[k])] = x[k];
      double c = 0;
      for (int v : rest) c += cost_[static_cast<std::size_t>(v)][static_cast<std::size_t>(choice_[static_cast<std::size_t>(v)])];
      for (const Edge& e : edges_)
        if (e.alive) c += edge_at(e, e.a, choice_[static_cast<std::size_t>(e.a)], choice_[static_cast<std::size_t>(e.b)]);
      if (c < best) best = c, best_x = x;
      std::size_t k = 0;
      for (; k < rest.size(); ++k) {
        if (++x[k] < static_cast<int>(size(rest[k]))) break;
        x[k] = 0;
      }
      if (k == rest.size()) break;
    }
    for (std::size_t k = 0; k < rest.size(); ++k) choice_[static_cast<std::size_t>(rest[k])] = best_x[k];
    return undo();
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
};

}  // namespace

std::optional<EliminationResult> solve_by_elimination(const Problem& p) { return Eliminator(p).run(); }

}  // namespace nocflow::optimizer
