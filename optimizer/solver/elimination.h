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
// reverse to recover every layer's choice. What is left when every remaining layer has three or
// more neighbours (training graphs, where each forward activation also feeds the backward pass)
// goes to bucket elimination: the layer whose elimination writes the smallest table first, its
// factors summed and minimised over its choices into one factor over its neighbours. Exact
// either way; not reducible when the best of a few elimination orders would exceed a table of
// 2^24 entries, 2^26 entries over all tables, or 10^10 additions.
#include <cstdint>
#include <optional>
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

struct EliminationResult {
  std::vector<int> choice;
  int leaf_steps = 0, node_steps = 0, edge_steps = 0;
  int factor_layers = 0;           ///< layers left for bucket elimination
  std::int64_t largest_table = 0;  ///< ... the most entries one of its factors had
};

/// Bucket elimination's limits: entries of one table (8 bytes each plus a 4-byte argmin), of
/// the argmin tables kept for undoing (4 bytes each), and additions (about a second per 10^9).
inline constexpr double kMaxEliminationTable = 1 << 24;
inline constexpr double kMaxEliminationTables = 1 << 26;
inline constexpr double kMaxEliminationWork = 1e10;

/// What the best elimination order found for the core would take.
struct EliminationNeeds {
  double largest_table = 0, all_tables = 0, additions = 0;
  double max_additions = kMaxEliminationWork;  ///< the work limit these are held to
  bool within_limits() const {
    return largest_table <= kMaxEliminationTable && all_tables <= kMaxEliminationTables &&
           additions <= max_additions;
  }
};

/// nullopt: the graph does not reduce within the limits, `max_additions` for the work (caller
/// falls back to ilp); `needs`, if given, then says what the best order found would take.
std::optional<EliminationResult> solve_by_elimination(const Problem& problem,
                                                      EliminationNeeds* needs = nullptr,
                                                      double max_additions = kMaxEliminationWork);

}  // namespace nocflow::optimizer
