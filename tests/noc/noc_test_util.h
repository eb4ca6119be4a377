// SPDX-License-Identifier: MIT
#pragma once
// Shared helpers for NoC tests: specs built in code (BookSim defaults), traffic without SystemC.
#include <gtest/gtest.h>

#include "noc/network/network.h"
#include "noc/spec.h"
#include "noc/traffic/traffic.h"

namespace nocflow::noc::testing {

inline NocSpec booksim_spec(int rows, int cols) {
  NocSpec s;
  s.topology = {"mesh", rows, cols, 0};
  s.router.preset = "booksim";
  s.router.vcs = 4;
  s.router.buffer_depth = 4;
  s.router.routing_delay = s.router.vc_alloc_delay = s.router.sw_alloc_delay = 1;
  s.router.st_delay = 1;
  s.router.routing = "xy";
  s.router.vc_allocator = s.router.sw_allocator = "islip";
  s.router.alloc_iterations = 1;
  s.link = {16, 1};
  s.ni = {0, 0, 16};
  s.watchdog_cycles = 5000;
  return s;
}

inline NocSpec crossbar_spec(int ports) {
  NocSpec s = booksim_spec(1, 2);
  s.topology = {"crossbar", 0, 0, ports};
  return s;
}

/// The output port of `router` whose link leads to router `next`, or to node `next` when
/// `kind` is Node.
inline int port_towards(const Topology& t, int router, int next,
                        PortPeer::Kind kind = PortPeer::Kind::Router) {
  for (int p = 0; p < t.num_ports(router); ++p)
    if (t.out(router, p).kind == kind && t.out(router, p).id == next) return p;
  ADD_FAILURE() << "router " << router << " has no output to " << next;
  return 0;
}

inline TrafficResult run_plain(Network& net, const TrafficOptions& o) {
  return run_traffic(net, o, [&net](Cycle c) { net.run_until(c); });
}

}  // namespace nocflow::noc::testing
