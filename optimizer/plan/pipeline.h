// SPDX-License-Identifier: MIT
#pragma once
// Pipeline stages (seed 004, DESIGN §7) combined with per-layer partitioning.
//
// The layers, in topological order, are cut into K contiguous stages. Stage s runs on its own
// band of whole mesh rows (a crossbar: of ports), which under XY routing is a machine of its
// own: no route between two of its PEs leaves it. Inside a band every layer is partitioned by
// an ordinary solver, priced by the cost model of a machine of the band's shape. Micro-batches
// (the network's batch each) stream through the stages, so M of them take
//   Σ_s T_s + (M − 1) · max_s T_s   cycles,
// where T_s is stage s's cost per micro-batch: its layers' compute, its own redistributions,
// and its part of the edges between stages (stage inputs). How many rows each stage gets, and
// where the cuts fall, is the min-max split (solver/stage_split.h) over the costs of every
// range of layers on every number of rows.
//
// An edge between stages costs an estimate, paid by one stage or shared (crossing_payer,
// stage_pricer.h). From the last layer of the stage before the consumer's, the consumer's
// stage pays it all, as it waits for it: the consumer PE's share of that input (input_share)
// through its ejection channel (a one-PE producer's injection channel) and, on a mesh, all its
// PEs' shares through the band's `cols` boundary links, whichever is slower, plus the hop
// latency of half the band's rows and columns. From a layer with more of its stage after it
// (a training graph's saved activations, a skip edge), the producer's stage pays the tensor
// once through its band's boundary links (a crossbar: its PEs' injection channels), which it
// sends while it runs on, and the consumer's the copies beyond one that its choice needs; when
// the split found has such an edge whose consumer's choice needs copies, the stages are split
// again with the producer's stage paying all the copies that choice needs (its PEs send them)
// and the consumer's those its own choice needs beyond them.
// Each part is added to its layer's cost for each of its choices, so the solver inside the
// band sees it.
#include <functional>
#include <string>

#include "optimizer/plan/partition_setup.h"
#include "optimizer/plan/plan.h"
#include "optimizer/solver/stage_split.h"

namespace nocflow::optimizer {

struct PipelineOptions {
  int stages = 2;
  int micro_batches = 4;
  std::string solver = "dp";  ///< inside each band (greedy, greedy-layout, dp, dp-local, ilp)
  SolveOptions solve;         ///< for every range's solve (ilp: time limit, formulation)
  SetupOptions setup;         ///< memory_limit: every layer's share within SRAM, as everywhere
  /// Progress, if set: each band's tabulation reports to band_progress(its mesh rows or
  /// crossbar ports) instead of setup.progress, and priced_progress(stage costs so far) follows
  /// every (layer range, rows) stage cost solved.
  std::function<TabulationProgress(int)> band_progress{};
  std::function<void(int)> priced_progress{};
  /// Seed 004's memory constraint: a stage fits only if its PEs can hold the weights of all its
  /// layers at once (resident across micro-batches) plus its largest layer's activations.
  bool resident_weights = false;
  /// What a solve proves of a range bounds the longer ranges from its first layer (the same
  /// splits either way; off: for tests and measurements).
  bool bound_by_shorter = true;
};

struct PipelineResult {
  Plan plan;         ///< choices placed in their bands; stages, micro-batches, pipeline cycles
  StageSplit split;  ///< cuts, rows (ports) and cost per stage
  /// Per stage, bytes per PE to keep every layer's weights resident plus the largest layer's
  /// activations (what `resident_weights` bounds).
  std::vector<double> resident_bytes;
  /// Per workload edge, when the stages were split again with the producers paying the copies
  /// their consumers' choices need (StagePricer::reprice): those copies; empty otherwise.
  std::vector<double> copies;
  /// Then: the first split (its stages as first priced, the consumers' stages paying the
  /// copies beyond one), and how many of its edges between stages carried copies that their
  /// producers' stages send.
  StageSplit first_split;
  int copied_edges = 0;
  /// Per micro-batch without pipelining: every layer on the whole machine, the same solver
  /// and cost model (+inf if that does not fit). M micro-batches then take M times this.
  double whole_machine_cycles = 0;
  /// Seed 004's balanced baseline, for comparison: the units shared out evenly (the first stages
  /// take the remainder), the layers cut by split_balanced over each layer's cheapest cost on
  /// the even band, every stage then solved as the DP's are (a cost of +inf: it does not fit).
  StageSplit balanced;
  /// (range, rows) stage solves run: the split's, the whole machine's and the baseline's. An
  /// exact cost is solved once; a range asked again under a higher cutoff counts again.
  int ranges_priced = 0;
  int ranges_stopped = 0;  ///< of those, solves stopped once above the least they could matter at
  /// "stage S: ...": a chosen stage's resident-weights assignment not proven the cheapest that
  /// fits, with how far from it it may be.
  std::vector<std::string> notes;
  double seconds = 0;      ///< wall clock, tabulation included
};

/// Throws InputError for an unknown solver or cost model, a stage count the machine or network
/// cannot take or a micro-batch count below 1: what solve_pipeline refuses before any work.
void check_pipeline_options(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                            const PipelineOptions& options);

/// Throws InputError as check_pipeline_options does, or when no split fits.
PipelineResult solve_pipeline(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                              const PipelineOptions& options);

/// The rows (mesh) or ports (crossbar) stages are made of, and PEs per unit.
int pipeline_units(const HwDesc& hw);
int pes_per_unit(const HwDesc& hw);

}  // namespace nocflow::optimizer
