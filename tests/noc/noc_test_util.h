// SPDX-License-Identifier: MIT
#pragma once
// Shared helpers for NoC tests: specs built in code (BookSim defaults), traffic without SystemC.
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

inline TrafficResult run_plain(Network& net, const TrafficOptions& o) {
  return run_traffic(net, o, [&net](Cycle c) { net.run_until(c); });
}

}  // namespace nocflow::noc::testing
