// SPDX-License-Identifier: MIT
#pragma once
// Synthetic traffic patterns (Dally & Towles, ch. 3). Contract: dest(src, rng) returns a node in
// [0, N); deterministic patterns ignore rng. Bit patterns need a power-of-two node count,
// transpose a square mesh (or a power-of-four node count); building an unsuitable pattern
// throws InputError saying why.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "noc/topology/topology.h"

namespace nocflow::noc {

using Rng = std::mt19937_64;

struct PatternOptions {
  bool exclude_self = false;     ///< uniform: never pick the source itself
  int hotspot_node = -1;         ///< hotspot: -1 = the centre node
  double hotspot_fraction = 0.2; ///< hotspot: share of packets sent to the hotspot
};

class TrafficPattern {
 public:
  virtual ~TrafficPattern() = default;
  virtual int dest(int src, Rng& rng) const = 0;
};

std::unique_ptr<TrafficPattern> make_pattern(const std::string& name, const Topology& topo,
                                             const PatternOptions& options = {});
/// The hotspot pattern's node: options.hotspot_node, or the centre node (a mesh's middle
/// router, a crossbar's node 0).
int hotspot_node(const Topology& topo, const PatternOptions& options);
std::vector<std::string> pattern_names();

}  // namespace nocflow::noc
