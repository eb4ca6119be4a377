// SPDX-License-Identifier: MIT
#pragma once
// SystemC shell of a Network. Every router and network interface is an sc_module (so they have
// hierarchical names in traces and reports), but none has a process of its own: one SC_METHOD
// per network evaluates the busy routers and NIs of a cycle and re-triggers itself one clock
// period later, or, when the network is idle, at the next cycle that has an event (or when
// wake() says new work arrived). Measured costs here (DESIGN.md section 10): a process ticking
// plain objects ~1.3 ns per component, a clocked SC_METHOD per component ~14 ns, so one
// process per network is what keeps the cost proportional to traffic. Flits never travel
// through sc_signal.
//
// Time: cycle c of the network is evaluated at SystemC time (c + base) * period + phase. With
// a phase of half a period, components that act on cycle boundaries (PEs) see the network's
// cycle c after their own cycle-c actions and before cycle c + 1: two phases per cycle, so
// results never depend on process order.
#include <systemc>

#include <exception>
#include <functional>
#include <memory>
#include <vector>

#include "noc/network/network.h"

namespace nocflow::noc {

class RouterModule : public sc_core::sc_module {
 public:
  RouterModule(const sc_core::sc_module_name& name, const Router& router)
      : sc_core::sc_module(name), router(router) {}
  const Router& router;
};

class NiModule : public sc_core::sc_module {
 public:
  NiModule(const sc_core::sc_module_name& name, int node) : sc_core::sc_module(name), node(node) {}
  const int node;
};

class NocModule : public sc_core::sc_module {
 public:
  /// `phase`: offset of each cycle's evaluation within the clock period (see above).
  NocModule(const sc_core::sc_module_name& name, Network& net, double clock_ghz,
            sc_core::sc_time phase = sc_core::SC_ZERO_TIME);

  /// Standalone use: run the kernel until network cycle `end` (exclusive); SystemC time
  /// advances with it (one period per cycle, idle stretches in one step). With end == kNever,
  /// run until the network has nothing left to do. Rethrows what the network threw
  /// (CheckError keeps its type).
  void run_until(Cycle end);

  /// Co-simulation: keep evaluating whenever there is work, with no end; the owner runs the
  /// kernel. Call wake() whenever work was added to an idle network (e.g. a message sent).
  void free_run();
  void wake();
  /// Rethrow an error the network raised during free-running simulation, if any.
  void rethrow_error();

  /// The network cycle the current SystemC time belongs to.
  Cycle cycle_now() const;

  /// Called before a cycle is evaluated (with that cycle) and after (with the next one); for
  /// sampling and progress reports (keep them cheap).
  std::function<void(Cycle)> before_cycle;
  std::function<void(Cycle)> on_cycle;

  const sc_core::sc_time& period() const { return period_; }
  Network& network() { return net_; }

 private:
  void tick();
  sc_core::sc_time time_of(Cycle c) const;

  Network& net_;
  sc_core::sc_time period_, phase_;
  sc_core::sc_event wake_;
  Cycle target_ = 0;
  Cycle base_ = 0;  ///< network cycle 0 sits at SystemC time base_ * period + phase
  std::exception_ptr error_;
  std::vector<std::unique_ptr<RouterModule>> routers_;
  std::vector<std::unique_ptr<NiModule>> nis_;
};

}  // namespace nocflow::noc
