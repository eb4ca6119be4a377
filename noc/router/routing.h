// SPDX-License-Identifier: MIT
#pragma once
// Routing functions. Contract: given the router a head flit is at, the input port it came in
// through and its destination node, return the set of permitted output ports as a bit mask
// (bit p = port p), never empty, every port connected. Deterministic algorithms return one
// bit; adaptive ones several, and the router picks the candidate with the most free credits
// (ties: lowest port). Pure functions of their arguments: the linkload cost model routes bytes
// with the same code (first candidate for adaptive ones).
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "noc/topology/topology.h"

namespace nocflow::noc {

using PortMask = std::uint64_t;

class RoutingFunction {
 public:
  virtual ~RoutingFunction() = default;
  virtual PortMask route(const Topology& topo, int router, int in_port, int dest) const = 0;
};

/// Build by name (xy, yx, west_first); unknown names throw InputError listing the known ones.
std::unique_ptr<RoutingFunction> make_routing(const std::string& name);
std::vector<std::string> routing_names();
/// Why `routing` cannot route on a topology of `kind` ("mesh", "crossbar"), or "" when it can:
/// west_first needs a mesh. The one rule behind the network's, the config loader's and
/// validate's refusals.
std::string routing_mismatch(const std::string& routing, const std::string& kind);

/// The first candidate port of a mask.
inline int first_port(PortMask m) { return __builtin_ctzll(m); }

}  // namespace nocflow::noc
