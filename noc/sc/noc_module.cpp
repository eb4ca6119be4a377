// SPDX-License-Identifier: MIT
#include "noc/sc/noc_module.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace nocflow::noc {

NocModule::NocModule(const sc_core::sc_module_name& name, Network& net, double clock_ghz,
                     sc_core::sc_time phase)
    : sc_core::sc_module(name), net_(net), period_(1.0 / clock_ghz, sc_core::SC_NS), phase_(phase) {
  const Topology& t = net.topology();
  for (int r = 0; r < t.num_routers(); ++r) {
    const std::string n = t.is_mesh() ? "router_" + std::to_string(t.x(r)) + "_" + std::to_string(t.y(r))
                                      : "crossbar";
    routers_.push_back(std::make_unique<RouterModule>(n.c_str(), net.router(r)));
  }
  for (int n = 0; n < t.num_nodes(); ++n)
    nis_.push_back(std::make_unique<NiModule>(("ni_" + std::to_string(n)).c_str(), n));
  SC_HAS_PROCESS(NocModule);
  SC_METHOD(tick);
  sensitive << wake_;
  dont_initialize();
}

// In SystemC's integer time units: a double holds picoseconds exactly only up to 2^53 (about
// 9,000 simulated seconds, 9 * 10^9 cycles at 1 MHz), past which cycles stop advancing.
Cycle NocModule::cycle_now() const {
  const sc_core::sc_time t = sc_core::sc_time_stamp();
  if (t < phase_) return -base_;
  return static_cast<Cycle>((t.value() - phase_.value()) / period_.value()) - base_;
}

sc_core::sc_time NocModule::time_of(Cycle c) const {
  return sc_core::sc_time::from_value(
      static_cast<sc_core::sc_time::value_type>(c + base_) * period_.value() + phase_.value());
}

void NocModule::tick() {
  try {
    const Cycle c = cycle_now();
    if (net_.now() < c) net_.skip_to(c);
    if (net_.now() >= target_) return;  // reached: no re-trigger, so sc_start() returns
    if (net_.now() == c && net_.next_busy_cycle() == c) {
      if (before_cycle) before_cycle(c);
      net_.step();
      if (on_cycle) on_cycle(net_.now());
    }
    Cycle next = net_.next_busy_cycle();
    if (next == kNever) {
      if (target_ == kNever) {  // idle for good, unless someone adds work
        next_trigger(wake_);
        return;
      }
      next = target_;  // let time pass to the target
    }
    next = std::min(next, target_);
    next_trigger(time_of(next) - sc_core::sc_time_stamp(), wake_);
  } catch (...) {
    error_ = std::current_exception();  // no re-trigger: the kernel runs out of events
  }
}

void NocModule::wake() {
  // The first evaluation point at or after now: the cycle a PE acting now belongs to.
  const sc_core::sc_time now = sc_core::sc_time_stamp();
  Cycle c = std::max(cycle_now(), net_.now());
  if (time_of(c) < now) ++c;
  wake_.notify(time_of(c) - now);
}

void NocModule::free_run() {
  target_ = kNever;
  wake();
}

void NocModule::rethrow_error() {
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

void NocModule::run_until(Cycle end) {
  if (end <= net_.now()) return;
  // Align: the current SystemC time is network cycle now() (the network may have been reset).
  const Cycle sc_cycle = cycle_now() + base_;
  base_ = std::max<Cycle>(0, sc_cycle - net_.now());
  target_ = end;
  wake();
  sc_core::sc_start();
  rethrow_error();
}

}  // namespace nocflow::noc
