// SPDX-License-Identifier: MIT
#pragma once
// Lowering: a partition plan becomes one program per PE. For every layer, in topological order,
// each PE of its placement:
//   1. receives its inputs: every transfer of every incoming edge whose destination it is
//      (optimizer::edge_transfers, the same code the linkload cost model uses);
//   2. computes its share (optimizer/cost/pe_model.h, as the linkload model does);
//   3. with INPP > 1, reduces partial sums with its INPP group: ring all-reduce
//      (reduce-scatter + all-gather), members in INPP order, which the placement keeps adjacent;
//   4. sends every transfer of every outgoing edge whose source it is, in ring order from its
//      successor on the snake, or nearest first when the edge is all-gathers within two or more
//      groups (the OUTP peers of each spatial block; lowering.cpp, grouped_all_gathers) or, on
//      an xy mesh, when the round-robin fluid says that ends sooner (nearest_ends_sooner); the
//      all-gathers that lowering.all_gather runs as rings (ring: all; auto: an edge's where
//      linkload prices them lower, optimizer::LinkloadModel::rings_to_run) run as ring
//      all-gathers instead, after the layer's direct sends; the consumer then has nothing left
//      to receive from them.
// Dataflow mode is exactly that: a PE starts a layer as soon as its inputs have arrived, and
// sends overlap later computation. Barrier mode separates phases with global barriers: all
// compute of a layer, then its reduction, then each outgoing edge alone, so that each
// redistribution is measured in isolation.
//
// The plan must fit: every layer of the network present with a valid choice, its placement on
// existing PEs, its per-PE data within SRAM. Otherwise InputError naming the layer.
#include <string>
#include <vector>

#include "optimizer/partition/transfers.h"
#include "optimizer/partition/workload.h"
#include "optimizer/plan/plan.h"
#include "sim/config/hw_spec.h"
#include "sim/system/program.h"

namespace nocflow::sim {

enum class ExecMode { Dataflow, Barrier };

/// A layer edge (or a layer's INPP reduction) as lowered: what moves where.
struct LoweredEdge {
  std::string src, dst;  ///< layer names; dst == src for a reduction
  int src_layer = 0, dst_layer = 0;
  bool reduction = false;
  bool stage_input = false;  ///< pipelined plans: between two stages (different bands)
  std::vector<optimizer::Transfer> transfers;
  /// The all-gathers run as rings (lowering.all_gather; optimizer/partition/transfers.h):
  /// their transfers stay in `transfers` (what each PE receives), but move as ring rounds,
  /// which belong to the producer layer.
  std::vector<optimizer::RingGather> rings;
  std::int64_t bytes = 0;
};

/// The edge as transfers.csv, --dump-programs and memory.csv name it: SRC->DST, or SRC:inpp
/// for an INPP layer's partial sums.
inline std::string edge_name(const LoweredEdge& e) {
  return e.reduction ? e.src + ":inpp" : e.src + "->" + e.dst;
}

struct Lowered {
  ProgramSet programs;
  std::vector<LoweredEdge> edges;                ///< index = Step::edge
  std::vector<optimizer::PlacedLayer> layers;    ///< workload order
  std::vector<std::int64_t> compute_cycles;      ///< per layer, per PE (all PEs equal)
  bool resident_weights = false;  ///< the plan's: stages keep their weights for the whole run
  /// The plan's (micro_batched): layer l is network layer l % (layers / micro_batches) of
  /// micro-batch l / (layers / micro_batches).
  int micro_batches = 1;
};

/// A pipelined plan's micro-batches as one workload to lower: every layer and edge of the
/// network `plan.micro_batches` times, copy m's layers named NAME@m, in micro-batch order, and
/// the plan's layers likewise. Lowered, each PE runs its stage's layers for micro-batch 0, then
/// for 1, ...: in dataflow mode the stages overlap as a pipeline. Throws InputError unless the
/// plan is pipelined and has a layer for each of the workload's.
struct MicroBatched {
  optimizer::Workload workload;
  optimizer::Plan plan;
};
MicroBatched micro_batched(const optimizer::Workload& workload, const optimizer::Plan& plan);

Lowered lower_plan(const optimizer::Workload& workload, const optimizer::Plan& plan,
                   const HwSpec& hw, ExecMode mode);

}  // namespace nocflow::sim
