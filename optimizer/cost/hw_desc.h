// SPDX-License-Identifier: MIT
#pragma once
// The optimizer's description of the hardware: what the cost models need, and nothing of the
// simulator's config structs (the `optimize` command converts sim::HwSpec into this).
#include <cstdint>
#include <optional>
#include <string>

#include "noc/spec.h"
#include "optimizer/partition/placement.h"

namespace nocflow::optimizer {

struct HwDesc {
  noc::TopologySpec topology{"mesh", 4, 4, 0};
  std::string routing = "xy";             ///< noc routing function name
  double macs_per_cycle = 256;            ///< per PE
  double adds_per_cycle = 64;             ///< per PE, element-wise operations
  double sram_bytes_per_cycle = 64;       ///< per PE
  int array_rows = 0;                     ///< MAC array shape; 0 = no array (rate only)
  int array_cols = 0;
  double link_bytes_per_cycle = 32;       ///< one link (flit width × one flit per cycle)
  int router_pipeline_cycles = 2;         ///< per hop, router stages
  int link_latency_cycles = 1;            ///< per hop
  double mac_pj = 0.5;
  double hop_pj_per_byte = 2.0;  ///< per byte of whole flits per hop (linkload_model.h)
  double sram_pj_per_byte = 1.0;
  std::int64_t sram_bytes = 1 << 20;      ///< per PE
  /// paper model's B_NoC in bytes per cycle; 0 = one link's bytes per cycle (the seed's
  /// formula 9 divides by "the NoC bandwidth" without saying which, we read it as one link).
  double bnoc_bytes_per_cycle = 0;
  /// paper model: cycles added to every redistribution that moves bytes. 0 = the seed's formula;
  /// `nocflow validate --calibrate` fits it (with B_NoC) to cycle-level microbenchmarks.
  double paper_latency_cycles = 0;
  /// linkload's router contention: how much slower than its flits a busiest router-to-router
  /// link drains when many sources' flows share it (LinkloadModel::drain_flits; the drain then
  /// also overlaps latency, overlap_cycles). Unset = uncalibrated: the longest route plus the
  /// busiest link. Fitted per machine by `nocflow validate` (calibration.yaml,
  /// `linkload.router_contention`); 0 there keeps the overlap without a slowdown.
  std::optional<double> router_slowdown;
  /// Set when a calibration file was given that has no router contention for this machine:
  /// the linkload model refuses to run uncalibrated by mistake (the paper model does not care).
  std::string router_slowdown_missing;
  int vc_buffer_flits = 8;                ///< router buffer per VC (flits), the slowdown's scale

  int num_pes() const { return topology.num_nodes(); }
  bool mesh() const { return topology.kind != "crossbar"; }
  PeGrid grid() const {
    return mesh() ? PeGrid{true, topology.rows, topology.cols} : PeGrid{false, 1, topology.ports};
  }
  double bnoc() const {
    return bnoc_bytes_per_cycle > 0 ? bnoc_bytes_per_cycle : link_bytes_per_cycle;
  }
};

}  // namespace nocflow::optimizer
