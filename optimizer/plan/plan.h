// SPDX-License-Identifier: MIT
#pragma once
// A partition plan: per layer its choice, placement and predicted compute; per edge its
// redistribution; totals. Written as plan.yaml by `nocflow optimize` and read back by
// `nocflow simulate --plan`; drawn as plan.dot (Graphviz) by both.
//
// plan.yaml layout (all costs in cycles, energy in pJ, bytes in bytes):
//   network, cost_model, solver, pes, topology, batch, hardware, priced_for: {config key:
//   value}, calibration, bnoc_bytes_per_cycle, train, passes, activation_bytes (the last eight:
//   what it was priced for; optional)
//   totals: {total_cycles, compute_cycles, redistribution_cycles, energy_pj}
//   layers: - {name, op, choice: "OUTP=4,OFMP_H=4", nodes, pes: [..], compute_cycles}
//   edges:  - {src, dst, input, type, bytes, cycles}
// A pipelined plan (plan/pipeline.h) also has, per layer, its `stage`, and
//   pipeline: {micro_batches, predicted_cycles,
//              stages: - {first, last, units, first_pe, pes, cycles}}
// and its edges between stages have type STAGE_INPUT.
#include <optional>
#include <string>
#include <vector>

#include "optimizer/cost/cost_model.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/solver/solver.h"

namespace nocflow::optimizer {

/// Micro-batches a pipelined plan may stream: each is simulated as a copy of the network.
inline constexpr int kMaxMicroBatches = 4096;

struct PlanLayer {
  std::string name;
  std::string op;
  Choice choice;
  std::vector<int> pes;  ///< PE of each grid node (placement.h order)
  double compute_cycles = 0;
  double energy_pj = 0;
  int stage = -1;  ///< pipelined plans: the stage it runs in; -1 otherwise
};

/// One pipeline stage: a contiguous range of layers on its own band of PEs.
struct PlanStage {
  std::string first, last;  ///< its first and last layer
  int units = 0;            ///< mesh rows (crossbar: ports) of its band
  int first_pe = 0;         ///< the band is PEs [first_pe, first_pe + pes)
  int pes = 0;
  double cycles = 0;  ///< predicted per micro-batch, stage inputs included
  /// "first-last" PE of the band, as the tables print it.
  std::string pe_range() const {
    return std::to_string(first_pe) + "-" + std::to_string(first_pe + pes - 1);
  }
};

/// PlanEdge::type of an edge between pipeline stages (the models do not price it as a type).
inline constexpr const char* kStageInputType = "STAGE_INPUT";

struct PlanEdge {
  std::string src, dst;
  int input = 0;
  std::string type;      ///< the seed's redistribution type (paper model's Type function)
  double bytes = 0;      ///< per the cost model
  double cycles = 0;
  double energy_pj = 0;
};

struct Plan {
  std::string network;
  std::string cost_model;
  std::string solver;
  int pes = 0;
  std::string topology;  ///< "mesh 4x4" | "crossbar 16"
  /// What the prediction was priced for (set by `optimize`; 0 / "" in plans that do not say):
  /// the batch size and the hardware in one line (sim::one_line_summary). A replay on other
  /// inputs runs the same choices, but the predicted totals no longer apply.
  int batch = 0;
  std::string hardware;
  /// The hardware config keys the cost model read, with their values (`optimize`: the keys
  /// sim::hw_desc_of reads). A replay where one differs reports that the prediction does not
  /// apply, naming the key; a key the models ignore (the clock, the allocators) does not count.
  std::vector<std::pair<std::string, std::string>> priced_for;
  /// The calibration file the cost model was given (`--calibration`; "" for none; unset in
  /// plans that do not say): a replay
  /// pricing its edges with another says so.
  std::optional<std::string> calibration;
  /// The paper model's B_NoC given with `--bnoc`, bytes/cycle (unset without it): a replay,
  /// which prices with a calibration or one link, says so.
  std::optional<double> bnoc;
  /// The optimizer of a training graph's weight updates ("" for inference; unset in plans that
  /// do not say): their cost depends on it.
  std::optional<std::string> train;
  /// The graph passes the network was prepared with (canonical_pass_list of `--passes`:
  /// "default", "none" or a list; unset in plans that do not say): they decide its layers, so
  /// `simulate --plan` prepares the network with them.
  std::optional<std::string> passes;
  /// "barrier" when its simulated cycles were measured in barrier replay (`validate --rank
  /// --mode barrier`, `simulate --mode barrier`; unset: dataflow, the default): `simulate --plan`
  /// replays in it unless `--mode` says otherwise, so that a rank.csv row can be reproduced.
  std::optional<std::string> replay_mode;
  /// The layers' output bytes summed over the network priced (per micro-batch when pipelined;
  /// 0: not recorded): a replay on a network where it differs (other shapes, batch or element
  /// size) runs the same choices, but the predicted totals no longer apply.
  std::int64_t activation_bytes = 0;
  /// The file's `choices_digest` (read_plan; unset in a plan made here or a file without one):
  /// the digest of the choices it was priced with. A replay whose choices_digest() differs
  /// (the file edited since) says that its predicted totals no longer apply.
  std::optional<std::string> priced_choices;
  /// The file's `costs_digest` (read_plan; unset as above, and in a file written before session
  /// 85): the digest of the cycles, bytes and types it was priced with. A replay whose
  /// costs_digest() differs says that its predicted totals no longer apply.
  std::optional<std::string> priced_costs;
  std::vector<PlanLayer> layers;
  std::vector<PlanEdge> edges;
  double compute_cycles = 0;
  double redistribution_cycles = 0;
  double energy_pj = 0;
  double total_cycles() const { return compute_cycles + redistribution_cycles; }

  /// Pipelined plans: `micro_batches` micro-batches (of `batch` each) stream through `stages`;
  /// compute and redistribution above are then per micro-batch, summed over all stages.
  int micro_batches = 0;
  std::vector<PlanStage> stages;
  double pipeline_cycles = 0;  ///< predicted for all micro-batches (plan/pipeline.h)
  /// Pipelined plans solved with `--resident-weights`: each stage's PEs hold all its layers'
  /// weights for the whole run (the memory plan keeps them, once for every micro-batch).
  bool resident_weights = false;
  bool pipelined() const { return !stages.empty(); }
  /// What a replay of the plan should take: the pipeline's cycles, or the total.
  double predicted_cycles() const { return pipelined() ? pipeline_cycles : total_cycles(); }
};

/// The plan of a solved setup, with every cost recomputed by `model`.
Plan make_plan(const PartitionSetup& setup, const std::vector<int>& choice, const HwDesc& hw,
               const CostModel& model, const std::string& solver);

/// FNV-1a 64 (hex) of what a replay runs: every layer's name, choice and PEs, every stage's
/// layers, band and the micro-batches. plan_yaml writes it as `choices_digest` (the file's
/// own when it has one), so that an edit to the choices shows.
std::string choices_digest(const Plan& plan);
/// The micro-batch count whose choices_digest is the file's (priced_choices), when the plan's
/// own count is not: its `micro_batches` alone was edited. nullopt otherwise.
std::optional<int> priced_micro_batches(const Plan& plan);
/// FNV-1a 64 (hex) of what the plan's predictions are made of: the totals, the pipeline
/// stages' cycles (its predicted cycles follow from them), every layer's compute cycles and
/// every edge's type,
/// bytes and cycles, each to the 12 significant digits plan_yaml writes. plan_yaml writes it as
/// `costs_digest` (the file's own when it has one), so that an edit to them shows.
std::string costs_digest(const Plan& plan);

std::string plan_yaml(const Plan& plan);
/// The plan as a Graphviz digraph: a box per layer (operator, choice, nodes, compute cycles),
/// filled by the dimension with the largest factor (BATCH, OUTP, OFMP_H/W, INPP; white: one
/// node); an arrow per edge labelled with its redistribution type, bytes and cycles, drawn
/// thicker the larger its share of the redistribution cycles, dashed when it costs nothing.
std::string plan_dot(const Plan& plan);
/// Throws InputError naming file and key for a malformed plan.
Plan read_plan(const std::string& file);

}  // namespace nocflow::optimizer
