// SPDX-License-Identifier: MIT
#pragma once
// Typed, validated description of a network-on-chip. Filled once by the config loader
// (sim/config) from YAML; the NoC models are built from these structs, never from YAML.
// Defaults, units and ranges are declared in sim/config/hw_params.cpp (see configs/README.md).
#include <cstdint>
#include <string>

namespace nocflow::noc {

struct TopologySpec {
  std::string kind;  ///< "mesh" | "crossbar"
  int rows = 0;      ///< mesh only
  int cols = 0;      ///< mesh only
  int ports = 0;     ///< crossbar only: number of attached nodes

  int num_nodes() const { return kind == "crossbar" ? ports : rows * cols; }
  /// "mesh 4x4" | "crossbar 16": how plans, validation tables and calibration files name a
  /// machine.
  std::string name() const {
    return kind == "crossbar" ? "crossbar " + std::to_string(ports)
                              : kind + " " + std::to_string(rows) + "x" + std::to_string(cols);
  }
};

struct RouterSpec {
  std::string preset;
  int vcs = 0;               ///< virtual channels per input port
  int buffer_depth = 0;      ///< flits per VC
  int routing_delay = 0;     ///< cycles, route computation (skipped with lookahead routing)
  int vc_alloc_delay = 0;    ///< cycles
  int sw_alloc_delay = 0;    ///< cycles
  int st_delay = 0;          ///< cycles, switch traversal
  bool lookahead_routing = false;
  bool speculative = false;  ///< switch allocation in parallel with VC allocation
  std::string routing;       ///< routing function name
  std::string vc_allocator;  ///< allocator name
  std::string sw_allocator;  ///< allocator name
  int alloc_iterations = 0;  ///< iSLIP iterations; 0: by topology (alloc_iterations_for)
};

/// The iSLIP iterations a router runs: `alloc_iterations` if set, else by topology: one on a
/// mesh router (5 ports, where more barely change a matching), ⌈log2 ports⌉ on a crossbar
/// switch, the iterations iSLIP needs to converge on a maximal matching (McKeown 1999; a
/// single one leaves a 16-port switch's inputs idle that a free output could serve).
inline int alloc_iterations_for(const RouterSpec& r, const TopologySpec& t) {
  if (r.alloc_iterations > 0) return r.alloc_iterations;
  if (t.kind != "crossbar") return 1;
  int iterations = 1;
  while ((1 << iterations) < t.ports) ++iterations;
  return iterations;
}

struct LinkSpec {
  int width_bytes = 0;  ///< bytes per flit
  int latency = 0;      ///< cycles
};

/// The most DMA channels a source NI has (ni.channels).
inline constexpr int kMaxNiChannels = 64;

struct NiSpec {
  int injection_queue_flits = 0;  ///< 0 = unbounded source queue
  int ejection_queue_flits = 0;   ///< 0 = the sink always accepts
  int max_packet_flits = 0;       ///< messages are cut into packets of at most this many flits
  int channels = 1;  ///< DMA channels: messages to distinct destinations injected at once
};

struct NocSpec {
  TopologySpec topology;
  RouterSpec router;
  LinkSpec link;
  NiSpec ni;
  std::int64_t watchdog_cycles = 0;  ///< stop when flits are in flight and none moved this long
};

}  // namespace nocflow::noc
