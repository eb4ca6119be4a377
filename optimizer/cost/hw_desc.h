// SPDX-License-Identifier: MIT
#pragma once
// The optimizer's description of the hardware: what the cost models need, and nothing of the
// simulator's config structs (the `optimize` command converts sim::HwSpec into this).
#include <algorithm>
#include <cmath>
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
  /// busiest link (or the link schedule, LinkLoad::scheduled_cycles). Fitted per machine by
  /// `nocflow validate` (calibration.yaml, `linkload.router_contention`); 0 there keeps the overlap
  /// without a slowdown.
  std::optional<double> router_slowdown;
  /// Set when a calibration file was given that has no router contention for this machine:
  /// the linkload model refuses to run uncalibrated by mistake (the paper model does not care).
  std::string router_slowdown_missing;
  int vc_buffer_flits = 8;                ///< router buffer per VC (flits), the slowdown's scale
  /// A buffer slot's credit loop: from a flit leaving it to the next flit able to leave it,
  /// 2 × link latency + switch allocation + switch traversal + 1 cycles (noc/README.md). One
  /// flow (a packet on one VC) streams at most vc_buffer_flits per loop.
  int credit_loop_cycles = 5;
  int vcs = 4;          ///< VCs per router port: flows a router-to-router link carries at once
  int ni_channels = 8;  ///< messages a PE's NI sends at once (ni.channels)
  /// lowering.all_gather: how the simulator runs an edge's all-gathers (transfers.h,
  /// RingGather), which linkload prices (LinkloadModel::rings_to_run): every transfer one
  /// direct message; ring all-gathers; or, per edge, whichever linkload prices lower.
  enum class AllGather { Direct, Ring, Auto };
  AllGather all_gather = AllGather::Direct;
  /// partition.splits: balanced offers factors that do not divide their dimension too
  /// (ChoiceOptions::balanced).
  bool balanced_splits = false;

  /// Flits per cycle of one long flow: below 1 when the buffers are shorter than the credit loop.
  double flow_rate() const {
    return std::min(1.0, static_cast<double>(vc_buffer_flits) / std::max(1, credit_loop_cycles));
  }
  /// Cycles `flows` packets of `flits` each take to leave one channel, taking turns flit by
  /// flit, each on a VC that starts with a full buffer of credits: B flits of each flow at one
  /// per `flows` cycles, then B more every max(credit loop, flows × B) cycles. Exact for one
  /// lone packet (noc/README.md) and for packets of equal length; a message of at most B flits
  /// streams at the channel's full rate.
  double stream_cycles(double flits, std::int64_t flows = 1) const {
    const double k = static_cast<double>(std::max<std::int64_t>(1, flows)), b = vc_buffer_flits;
    if (flits <= 1 || k * b >= credit_loop_cycles) return k * flits;
    const double loops = std::floor((flits - 1) / b);
    return loops * credit_loop_cycles + (flits - 1 - loops * b) * k + k;
  }
  /// Flits per cycle a router-to-router link drains, its VCs' flows together.
  double router_link_rate() const { return std::min(1.0, vcs * flow_rate()); }
  /// Flits per cycle a PE's injection channel drains when the PE sends `messages` of `flits`
  /// in all: its NI sends min(messages, ni_channels) at once, at most one per VC.
  double injection_rate(std::int64_t messages, std::int64_t flits) const {
    return channel_rate(std::min<std::int64_t>({messages, ni_channels, vcs}), messages, flits);
  }
  /// ... a PE's ejection channel when it receives them (one per VC at once).
  double ejection_rate(std::int64_t messages, std::int64_t flits) const {
    return channel_rate(std::min<std::int64_t>(messages, vcs), messages, flits);
  }
  /// `flows` of the channel's messages at once, each of their mean length.
  double channel_rate(std::int64_t flows, std::int64_t messages, std::int64_t flits) const {
    const double mean = static_cast<double>(flits) / static_cast<double>(messages);
    return static_cast<double>(flows) * mean / stream_cycles(mean, flows);
  }

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
