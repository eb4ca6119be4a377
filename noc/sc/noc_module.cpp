// SPDX-License-Identifier: MIT
#include "noc/sc/noc_module.h"

#include <algorithm>
#include <string>

namespace nocflow::noc {

NocModule::NocModule(const sc_core::sc_module_name& name, Network& net, double clock_ghz)
    : sc_core::sc_module(name), net_(net), period_(1.0 / clock_ghz, sc_core::SC_NS) {
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

void NocModule::tick() {
  try {
    const Cycle now = net_.now();
    if (now >= target_) return;  // reached: no re-trigger, so sc_start() returns
    Cycle next = net_.next_busy_cycle();
    if (next == kNever) {  // nothing will ever happen: stop here, or let time pass to the target
      if (target_ == kNever) return;
      next = target_;
    }
    next = std::min(next, target_);
    if (next > now) {  // idle stretch: sleep through it
      net_.skip_to(next);
      next_trigger((next - now) * period_);
      return;
    }
    net_.step();
    if (on_cycle) on_cycle(net_.now());
    next_trigger(period_);
  } catch (...) {
    error_ = std::current_exception();  // no re-trigger: the kernel runs out of events
  }
}

void NocModule::run_until(Cycle end) {
  if (end <= net_.now()) return;
  target_ = end;
  wake_.notify(sc_core::SC_ZERO_TIME);
  sc_core::sc_start();
  if (error_) {
    auto e = error_;
    error_ = nullptr;
    std::rethrow_exception(e);
  }
}

}  // namespace nocflow::noc
