// SPDX-License-Identifier: MIT
#pragma once
// From a network and a machine to the tabulated partition problem: layers, choices per layer
// (enumerated, then dominance-pruned), layer and edge costs from a cost model, the optional
// per-PE memory limit. The solvers work on `problem`; `choices` maps their indices back.
#include <functional>
#include <string>
#include <vector>

#include "optimizer/cost/cost_model.h"
#include "optimizer/solver/problem.h"

namespace nocflow::optimizer {

/// How far a tabulation has come, for progress lines: the edges finished and the edge table
/// entries computed, each of all (an edge whose table repeats an earlier one's is copied and
/// adds no entry).
struct TabulationStatus {
  std::size_t edges_done = 0, edges = 0;
  double entries_done = 0, entries = 0;
};
/// Called while a cost model is tabulated: before each edge, and as an edge's table rows finish
/// (from the threads that compute them, one call at a time).
using TabulationProgress = std::function<void(const TabulationStatus&)>;

struct SetupOptions {
  bool exact = false;          ///< only choices with p = P
  bool memory_limit = false;   ///< enforce hw.sram_bytes per PE
  bool prune = true;           ///< dominance pruning (exact: never changes the optimum)
  /// Also offer the PLACE=ROWS twin of every choice placement.h's rule 3 applies to.
  bool placement_search = false;
  TabulationProgress progress{};
  /// Full: tabulate every edge's costs (and prune). Less for a solver that reads less
  /// (Solver::edge_tables): None, no edges; Rows, each edge's rows computed on demand from the
  /// cost model, which must outlive the problem, as must the graph. Nothing is pruned then.
  EdgeTables edge_tables = EdgeTables::Full;
  /// With memory_limit: throw MemoryInfeasible when a layer fits none of its choices. Off for
  /// the stage pricer's bands, whose stages each hold only some of the layers.
  bool require_fit = true;
};

struct PartitionSetup {
  Workload workload;
  std::vector<std::vector<Choice>> choices;  ///< [layer], after pruning
  std::size_t choices_before = 0;            ///< total over layers, enumerated
  std::size_t choices_after = 0;             ///< total over layers, after pruning
  Problem problem;                           ///< over `choices`
  double tabulate_seconds = 0;
  double prune_seconds = 0;
};

/// Throws InputError when a layer has no valid choice (with `exact`: P divides no combination
/// of its dimensions), naming the layer, its dimensions and P.
PartitionSetup setup_partition(const Graph& graph, const HwDesc& hw, const CostModel& model,
                               const SetupOptions& options);

/// Tabulates `model` over given choices (no pruning); `progress` as SetupOptions::progress;
/// `edge_tables` as SetupOptions::edge_tables. With `memory_limit` and `require_fit`, throws
/// MemoryInfeasible (before any edge) when a layer fits no choice.
Problem tabulate(const Workload& workload, const std::vector<std::vector<Choice>>& choices,
                 const CostModel& model, const HwDesc& hw, bool memory_limit,
                 const TabulationProgress& progress = {}, EdgeTables edge_tables = EdgeTables::Full,
                 bool require_fit = true);

}  // namespace nocflow::optimizer
