// SPDX-License-Identifier: MIT
#pragma once
// Exact solution of the partition problem by graph elimination (OptCNN, seed 001 Part 2–3),
// on the undirected layer graph:
//  - edge elimination: parallel edges between two layers merge into one (costs add);
//  - leaf elimination: a layer with one edge folds into its neighbour's layer cost
//    (min over its choices; on a chain this is Viterbi);
//  - node elimination: a layer with edges to exactly two other layers u, w becomes one edge
//    u–w with cost min_j (e1(i,j) + cost(j) + e2(j,k));
//  - isolated layers take their cheapest choice.
// Repeated, cheapest step first, until nothing is left; the eliminations are then undone in
// reverse to recover every layer's choice. A graph where every remaining layer has three or
// more neighbours is enumerated if small (≤ 10^6 assignments), else not reducible.
#include <optional>
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct EliminationResult {
  std::vector<int> choice;
  int leaf_steps = 0, node_steps = 0, edge_steps = 0;
  int enumerated_layers = 0;  ///< layers left for enumeration
};

/// nullopt: the graph does not reduce (caller falls back to ilp).
std::optional<EliminationResult> solve_by_elimination(const Problem& problem);

}  // namespace nocflow::optimizer
