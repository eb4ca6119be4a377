// SPDX-License-Identifier: MIT
#pragma once
// What `nocflow simulate` reports about a run: per-edge predicted vs simulated redistribution
// times, energy, and the CSV/JSON files. Units: cycles, bytes, picojoules, seconds.
//
// Simulated time of an edge: from its first send to its last message's arrival. In barrier
// mode the edge runs alone between two barriers, so this is its isolated cost; in dataflow
// mode it overlaps other work and is an upper bound on its exposed cost, and its senders'
// skew (the first send to the last sender's first send) says how much of it was spent waiting
// for producers that finished later.
// Energy: MACs x energy.mac_pj; bytes each PE reads and writes in SRAM x
// energy.sram_pj_per_byte; flit-hops (flits x router-to-router links, or x 1 through a
// crossbar's switch) x link.width_bytes x energy.hop_pj_per_byte. The linkload model predicts
// the same sum for a plan (optimizer/cost/linkload_model.h).
#include <iosfwd>
#include <string>
#include <vector>

#include "optimizer/cost/hw_desc.h"
#include "sim/lower/lowering.h"
#include "sim/output/layer_stats.h"
#include "sim/system/system.h"

namespace nocflow::sim {

struct EdgeReport {
  std::string src, dst, type;
  bool reduction = false;
  std::int64_t bytes = 0;        ///< exact transfer list
  /// -1: the model has no separate figure (paper: reductions; both: stage inputs of a pipeline).
  double paper_cycles = -1;
  double linkload_cycles = -1;
  noc::Cycle simulated_cycles = 0;
  /// Of simulated_cycles, those before the last sending PE's first send: waiting for producers
  /// that finished later than the first (dataflow replay; 0 when all start at a barrier).
  noc::Cycle senders_skew_cycles = 0;
};

std::vector<EdgeReport> edge_reports(const optimizer::Workload& workload, const Lowered& lowered,
                                     const RunResult& run, const optimizer::HwDesc& hw);

/// The same for programs read back (`simulate --programs`), where only the steps' edge names
/// say what an edge is: SRC->DST, or LAYER:inpp for partial sums (type ALL_REDUCE), else the
/// name as src. Bytes from the sends; no type otherwise, and no predictions.
std::vector<EdgeReport> program_edge_reports(const ProgramSet& programs,
                                             const std::vector<std::string>& edge_names,
                                             const RunResult& run);

struct Energy {
  double mac_pj = 0, sram_pj = 0, noc_pj = 0;
  double total() const { return mac_pj + sram_pj + noc_pj; }
};
/// The NoC's share alone: flit_hops x link.width_bytes x energy.hop_pj_per_byte.
double noc_energy_pj(const RunResult& run, const HwSpec& hw);
Energy run_energy(const optimizer::Workload& workload, const Lowered& lowered, const RunResult& run,
                  const HwSpec& hw);

/// One row per layer; op and choice from `lowered`, left empty without it (programs read back).
void write_layers_csv(std::ostream& out, const Lowered* lowered,
                      const std::vector<LayerStats>& layers);
void write_transfers_csv(std::ostream& out, const std::vector<EdgeReport>& edges);
/// The 12 longest edges as a table (name, type, bytes, predicted and simulated cycles, error);
/// long names lose their middle.
void print_transfers_table(std::ostream& out, const std::vector<EdgeReport>& edges);
void write_links_csv(std::ostream& out, const RunResult& run, int width_bytes);

/// Relative error of a prediction against the simulated value ("" when not applicable).
std::string relative_error(double predicted, double simulated);

}  // namespace nocflow::sim
