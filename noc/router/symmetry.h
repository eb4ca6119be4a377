// SPDX-License-Identifier: MIT
#pragma once
// Symmetries of a network: relabellings of nodes, routers and ports that map the topology onto
// itself and commute with its routing function, so that traffic between relabelled nodes takes
// the relabelled routes. A plan placed on an image of its PEs moves the same flits over the
// same number of hops on links of the same kinds. `validate --rank` replays plans on these
// images to measure how much the simulator's tie-breaks (arbitration, send order, which of two
// equally near copies supplies a block) move a plan's cycles.
//
// Mesh candidates: the 8 rotations and reflections of the square (4 on a rectangle: the two
// mirrors and the half turn); kept when the routing commutes with them, e.g. all 4 of a mirror
// group for xy and yx, but only the north-south mirror for west_first. Crossbar: the port
// reversal. The identity comes first.
#include <string>
#include <vector>

#include "noc/router/routing.h"
#include "noc/topology/topology.h"

namespace nocflow::noc {

struct Symmetry {
  std::string name;         ///< "identity", "mirror x", "rotate 180", "transpose", ...
  std::vector<int> node;    ///< image of each node
  std::vector<int> router;  ///< image of each router
  std::vector<std::vector<int>> port;  ///< port[r][p]: image at router[r] of port p of router r
};

/// Every candidate symmetry of `t` (see above), whether or not it commutes with a routing.
std::vector<Symmetry> candidate_symmetries(const Topology& t);

/// True when `s` maps every link onto a link and, for every router, input port and destination,
/// the routing's candidate ports at the image are the images of its candidate ports.
bool commutes(const Topology& t, const RoutingFunction& routing, const Symmetry& s);

/// The candidates that commute with `routing`, identity first.
std::vector<Symmetry> routing_symmetries(const Topology& t, const RoutingFunction& routing);

}  // namespace nocflow::noc
