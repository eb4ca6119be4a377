// SPDX-License-Identifier: MIT
#include "sim/system/pe_module.h"

namespace nocflow::sim {

PeModule::PeModule(const sc_core::sc_module_name& name, int id, const Program& program, PeHost& host)
    : sc_core::sc_module(name), id_(id), program_(program), host_(host) {
  SC_HAS_PROCESS(PeModule);
  SC_THREAD(run);
}

void PeModule::run() {
  const sc_core::sc_time& period = host_.period();
  for (pc_ = 0; pc_ < program_.size(); ++pc_) {
    const Step& s = program_[pc_];
    Span span{id_, s.kind, s.layer, host_.cycle_now(), 0, s.peer, s.bytes, s.edge, 0, s.tag};
    switch (s.kind) {
      case StepKind::Compute:
      case StepKind::Reduce:
        if (s.cycles > 0)  // integer time: a double loses picoseconds past 2^53
          wait(sc_core::sc_time::from_value(static_cast<sc_core::sc_time::value_type>(s.cycles) *
                                            period.value()));
        break;
      case StepKind::Send:
        while (!host_.send(id_, s)) wait(period);  // bounded source queue full: retry
        break;
      case StepKind::Recv: {
        std::optional<noc::Cycle> at;
        while (!(at = host_.take(id_, s))) wait(arrival);
        span.arrived = *at;
        break;
      }
      case StepKind::Barrier:
        host_.arrive_at_barrier(id_, s.tag);
        while (!host_.barrier_open(s.tag)) wait(host_.barrier_event());
        break;
    }
    span.end = host_.cycle_now();
    host_.record(span);
  }
  finished_ = true;
  finish_ = host_.cycle_now();
}

}  // namespace nocflow::sim
