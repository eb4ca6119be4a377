// SPDX-License-Identifier: MIT
#pragma once
// Random small partition problems for the solver tests (exactness against brute force).
#include <random>
#include <string>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

/// A random problem: `layers` layers with 1..max_choices choices, a chain or a random DAG
/// (every layer reads one or two earlier layers), integer-ish costs so ties happen.
inline Problem random_problem(std::mt19937& rng, int layers, int max_choices, bool chain) {
  Problem p;
  std::uniform_int_distribution<int> nch(1, max_choices), cost(0, 40), coin(0, 2);
  for (int l = 0; l < layers; ++l) {
    p.names.push_back("l" + std::to_string(l));
    auto& node = p.node.emplace_back();
    for (int i = nch(rng); i > 0; --i) node.push_back(cost(rng) + 0.25 * coin(rng));
  }
  auto add_edge = [&](int u, int v) {
    Problem::Edge e{u, v, p.num_choices(v), {}};
    for (int i = 0; i < p.num_choices(u) * p.num_choices(v); ++i) e.cost.push_back(cost(rng) * (coin(rng) ? 1.0 : 0.0));
    p.edges.push_back(std::move(e));
  };
  for (int v = 1; v < layers; ++v) {
    if (chain) { add_edge(v - 1, v); continue; }
    std::uniform_int_distribution<int> pick(0, v - 1);
    const int u = pick(rng);
    add_edge(u, v);
    if (coin(rng) == 0) {
      const int w = pick(rng);
      add_edge(w, v);  // may repeat u: parallel edges
    }
  }
  return p;
}

/// K_n with `choices` random choices per layer and random edge costs.
inline Problem complete_graph(std::mt19937& rng, int n, int choices) {
  Problem p;
  std::uniform_real_distribution<double> cost(0, 10);
  for (int l = 0; l < n; ++l) {
    p.names.push_back("l" + std::to_string(l));
    p.node.emplace_back();
    for (int i = 0; i < choices; ++i) p.node.back().push_back(cost(rng));
  }
  for (int u = 0; u < n; ++u)
    for (int v = u + 1; v < n; ++v) {
      Problem::Edge e{u, v, choices, {}};
      for (int i = 0; i < choices * choices; ++i) e.cost.push_back(cost(rng));
      p.edges.push_back(std::move(e));
    }
  return p;
}

}  // namespace nocflow::optimizer
