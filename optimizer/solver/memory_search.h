// SPDX-License-Identifier: MIT
#pragma once
// Local search for a cheaper assignment within a stage's memory: the primal side of
// `--resident-weights` (optimizer/plan/stage_pricer.cpp), whose Lagrangian search finds a
// fitting assignment by pricing weight bytes and, where the weights are tight, often leaves
// bytes unused or spends them on the wrong layers.
#include <vector>

#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

/// Bytes per PE that an assignment holds: every layer's `summed` share (its weights, resident
/// for the whole run) plus the largest `peak` share (one layer's activations at a time).
struct StageMemory {
  std::vector<std::vector<double>> summed, peak;  ///< [layer][choice] bytes per PE
  double limit = 0;                               ///< bytes per PE

  double bytes(const std::vector<int>& choice) const;
};

/// Lowers the cost of `choice` (which must fit `m`) by moves that keep it fitting, until none
/// improves: one layer's choice changed, or two layers' at once (what one gives up in bytes the
/// other spends; a layer's candidates are its choices on the (cost change, bytes change) front
/// given its neighbours). Every edge of `p` must be tabulated. Returns the cost (evaluate's).
/// The result has no cheaper fitting assignment one layer's change away.
double improve_within_memory(const Problem& p, const StageMemory& m, std::vector<int>& choice);

/// `choice` (which need not fit) changed one layer at a time, each change the one that frees
/// bytes at the least cost per byte (where none frees any, every layer at the peak takes its
/// lightest choice below it), until it fits; then improve_within_memory. Returns the cost, or
/// +inf (choice partly changed) if a layer at the peak has no choice below it first.
double fit_within_memory(const Problem& p, const StageMemory& m, std::vector<int>& choice);

}  // namespace nocflow::optimizer
