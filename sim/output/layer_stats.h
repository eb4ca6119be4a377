// SPDX-License-Identifier: MIT
#pragma once
// Per-layer timing from a run's spans. For each layer: first start and last end over its PEs;
// and, on the PE that finished the layer last (the critical one), its busy cycles (compute and
// reduce), its exposed communication (cycles blocked in receives) and the rest of the span
// (idle: waiting for the layer to start, barriers).
#include <string>
#include <vector>

#include "optimizer/partition/workload.h"
#include "optimizer/plan/plan.h"
#include "sim/system/system.h"

namespace nocflow::sim {

struct LayerStats {
  std::string name;
  noc::Cycle start = 0, end = 0;
  noc::Cycle compute = 0, communication = 0, idle = 0;
  int pes = 0;  ///< PEs with a step in this layer
};

std::vector<LayerStats> layer_stats(const RunResult& run, const std::vector<std::string>& layer_names);

/// The run's critical path, split into computing and moving data; the two sum to the run's
/// cycles. The path runs back from the last step of the PE that finished last (the
/// lowest-numbered of them) to cycle 0, through what each step waited for: the step before it
/// on its PE; for a receive that waited, its message, from the send that queued it to its
/// arrival, then the sender's steps before that send; for a barrier, the last PE to reach it.
/// compute: its compute and reduce steps; communication: its messages, its sends held up by a
/// full NI queue, and its barriers' opening. Unlike one PE's totals, it does not count as
/// waiting the cycles a PE spends before its first layer: a run whose last layers fall to
/// another PE has the same path.
struct RunTotals {
  noc::Cycle compute = 0, communication = 0;
};
RunTotals run_totals(const RunResult& run);

/// What summary.json's compute_cycles / communication_cycles are, for its "units".
extern const char* const kRunTotalsUnits;
/// The console's line of them: `critical path    C cycles computing + M cycles moving data ...`.
std::string run_totals_line(const RunTotals& t);

/// A pipelined replay seen per stage (micro-batch m's copy of network layer l is layer
/// m·n + l of the replay).
struct PipelineRun {
  /// Per stage, mean over micro-batches of its service time. Dataflow replay: from when it
  /// could start to its last end: its previous micro-batch done, and the inputs of one of its
  /// first layers (those reading other stages' outputs and none of its own) all there. In a
  /// training graph's pipeline that can be before the previous stage ends: a weight gradient reads
  /// the forward's output long before that stage's last backward layer is done. Barrier replay,
  /// where every phase (a layer's compute, its reduction, an edge's transfers) runs alone between
  /// barriers: its phases summed, an edge's to the stage that pays it (optimizer's
  /// crossing_payer: the producer's when more of its stage comes after it, else the
  /// consumer's), so that the stages sum to the run's time (from when it could start counted
  /// the other stages' turns in between; its layers' spans summed counted a layer that received
  /// an input early as running from then).
  std::vector<double> stage_cycles;
  double interval = 0;  ///< cycles between micro-batches leaving the last stage (mean)
};
/// `replayed`: the pipelined plan as replayed (every micro-batch's layers), `workload` its
/// workload (micro_batched; its edges give each layer's producers); `layers` their stats;
/// `barrier`: the run, when replayed in barrier mode (its spans give the phases).
PipelineRun pipeline_run(const optimizer::Plan& replayed, const optimizer::Workload& workload,
                         const std::vector<LayerStats>& layers, const RunResult* barrier);

}  // namespace nocflow::sim
