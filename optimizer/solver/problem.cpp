// SPDX-License-Identifier: MIT
#include "optimizer/solver/problem.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include "noc/base/error.h"

namespace nocflow::optimizer {

namespace {

void require_tables(const Problem& p, const char* what) {
  for (const auto& e : p.edges)
    if (!e.tabulated())
      throw std::logic_error(
          std::string(what) + ": edge " + p.names[static_cast<std::size_t>(e.u)] + " -> " +
          p.names[static_cast<std::size_t>(e.v)] + " has rows on demand, no table");
}

}  // namespace

std::vector<double> edge_row(const Problem::Edge& e, int i) {
  if (!e.tabulated()) return e.row(i);
  const double* first = e.table() + static_cast<std::ptrdiff_t>(i) * e.nv;
  return {first, first + e.nv};
}

double evaluate(const Problem& p, const std::vector<int>& x,
                std::vector<std::vector<double>>* rows) {
  double total = 0;
  for (int l = 0; l < p.num_layers(); ++l) {
    if (!p.fits(l, x[static_cast<std::size_t>(l)])) return std::numeric_limits<double>::infinity();
    total += p.node[static_cast<std::size_t>(l)][static_cast<std::size_t>(x[static_cast<std::size_t>(l)])];
  }
  for (std::size_t k = 0; k < p.edges.size(); ++k) {
    const Problem::Edge& e = p.edges[k];
    const int i = x[static_cast<std::size_t>(e.u)], j = x[static_cast<std::size_t>(e.v)];
    if (e.tabulated()) {
      total += e.at(i, j);
    } else if (!rows) {
      total += e.row(i)[static_cast<std::size_t>(j)];
    } else {
      std::vector<double>& row = (*rows)[k];
      if (row.empty()) row = e.row(i);
      total += row[static_cast<std::size_t>(j)];
    }
  }
  return total;
}

void for_each_assignment(const Problem& p, const std::function<void(const std::vector<int>&)>& f) {
  std::vector<int> x(static_cast<std::size_t>(p.num_layers()), 0);
  while (true) {
    f(x);
    int l = 0;
    for (; l < p.num_layers(); ++l) {
      auto& v = x[static_cast<std::size_t>(l)];
      if (++v < p.num_choices(l)) break;
      v = 0;
    }
    if (l == p.num_layers()) return;
  }
}

std::vector<int> brute_force(const Problem& p) {
  double count = 1;
  for (int l = 0; l < p.num_layers(); ++l) count *= p.num_choices(l);
  if (count > 1e7) throw std::length_error("brute_force: too many assignments");
  std::vector<int> best(static_cast<std::size_t>(p.num_layers()), 0);
  double best_cost = std::numeric_limits<double>::infinity();
  for_each_assignment(p, [&](const std::vector<int>& x) {
    if (const double c = evaluate(p, x); c < best_cost) best_cost = c, best = x;
  });
  return best;
}

void check_memory_feasible(const Problem& p) {
  if (p.memory_limit <= 0 || p.memory.empty()) return;
  int first = -1, largest = -1;  // the first layer that does not fit; the one needing the most
  double first_bytes = 0, largest_bytes = 0;
  for (int l = 0; l < p.num_layers(); ++l) {
    const auto& m = p.memory[static_cast<std::size_t>(l)];
    const double smallest = m.empty() ? 0 : *std::min_element(m.begin(), m.end());
    if (smallest > p.memory_limit && first < 0) first = l, first_bytes = smallest;
    if (smallest > largest_bytes) largest = l, largest_bytes = smallest;
  }
  if (first < 0) return;
  const auto bytes = [](double b) { return std::to_string(static_cast<long long>(std::ceil(b))); };
  // Every layer's least is named, so that one raise of the limit is enough.
  throw MemoryInfeasible("layer '" + p.names[static_cast<std::size_t>(first)] +
                         "' does not fit in PE memory: its smallest per-PE footprint (weights, "
                         "input and output share) is " +
                         bytes(first_bytes) + " bytes, the limit (pe.sram_bytes) is " +
                         bytes(p.memory_limit) + " bytes; the network needs at least " +
                         bytes(largest_bytes) + " bytes per PE (layer '" +
                         p.names[static_cast<std::size_t>(largest)] +
                         "'); raise pe.sram_bytes or use more PEs");
}

Problem restrict_problem(const Problem& p, const std::vector<std::vector<int>>& kept) {
  require_tables(p, "restrict_problem");
  Problem r;
  r.names = p.names;
  r.memory_limit = p.memory_limit;
  r.max_pes = p.max_pes;
  auto pick = [&](const auto& table) {
    std::decay_t<decltype(table)> out(table.size());
    for (std::size_t l = 0; l < table.size(); ++l)
      for (int i : kept[l]) out[l].push_back(table[l][static_cast<std::size_t>(i)]);
    return out;
  };
  r.node = pick(p.node);
  if (!p.memory.empty()) r.memory = pick(p.memory);
  if (!p.pes.empty()) r.pes = pick(p.pes);
  for (const auto& e : p.edges) {
    Problem::Edge ne{e.u, e.v, static_cast<int>(kept[static_cast<std::size_t>(e.v)].size()), {}};
    ne.cost.reserve(kept[static_cast<std::size_t>(e.u)].size() * kept[static_cast<std::size_t>(e.v)].size());
    for (int i : kept[static_cast<std::size_t>(e.u)])
      for (int j : kept[static_cast<std::size_t>(e.v)]) ne.cost.push_back(e.at(i, j));
    r.edges.push_back(std::move(ne));
  }
  return r;
}

std::vector<int> unrestricted(const std::vector<int>& choice,
                              const std::vector<std::vector<int>>& kept) {
  std::vector<int> out(choice.size());
  for (std::size_t l = 0; l < choice.size(); ++l)
    out[l] = kept[l][static_cast<std::size_t>(choice[l])];
  return out;
}

namespace {

/// Indices (into `alive`) of the choices of layer l that survive dominance.
std::vector<int> undominated(const Problem& p, int l, const std::vector<std::vector<int>>& alive) {
  const auto& mine = alive[static_cast<std::size_t>(l)];
  // Signature of each choice: layer cost, memory, then every incident edge entry against the
  // other end's alive choices.
  std::vector<std::vector<double>> sig(mine.size());
  for (std::size_t a = 0; a < mine.size(); ++a) {
    const int i = mine[a];
    auto& s = sig[a];
    s.push_back(p.node[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)]);
    if (p.memory_limit > 0 && !p.memory.empty()) s.push_back(p.memory[static_cast<std::size_t>(l)][static_cast<std::size_t>(i)]);
    for (const auto& e : p.edges) {
      if (e.u == l) for (int j : alive[static_cast<std::size_t>(e.v)]) s.push_back(e.at(i, j));
      if (e.v == l) for (int j : alive[static_cast<std::size_t>(e.u)]) s.push_back(e.at(j, i));
    }
  }
  std::vector<std::size_t> order(mine.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return sig[a][0] < sig[b][0];
  });
  std::vector<std::size_t> kept;
  for (std::size_t b : order) {
    bool dominated = false;
    for (std::size_t a : kept) {
      bool all = true;
      for (std::size_t k = 0; k < sig[b].size() && all; ++k) all = sig[a][k] <= sig[b][k];
      if (all) { dominated = true; break; }
    }
    if (!dominated) kept.push_back(b);
  }
  std::vector<int> out;
  for (std::size_t b : kept) out.push_back(mine[b]);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

PrunedProblem prune_dominated(const Problem& p) {
  require_tables(p, "prune_dominated");
  std::vector<std::vector<int>> alive(static_cast<std::size_t>(p.num_layers()));
  for (int l = 0; l < p.num_layers(); ++l) {
    for (int i = 0; i < p.num_choices(l); ++i)
      if (p.fits(l, i)) alive[static_cast<std::size_t>(l)].push_back(i);
    if (alive[static_cast<std::size_t>(l)].empty())  // infeasible: keep all, solvers report it
      for (int i = 0; i < p.num_choices(l); ++i) alive[static_cast<std::size_t>(l)].push_back(i);
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (int l = 0; l < p.num_layers(); ++l) {
      auto next = undominated(p, l, alive);
      if (next.size() != alive[static_cast<std::size_t>(l)].size()) changed = true;
      alive[static_cast<std::size_t>(l)] = std::move(next);
    }
  }
  return {restrict_problem(p, alive), alive};
}

}  // namespace nocflow::optimizer
