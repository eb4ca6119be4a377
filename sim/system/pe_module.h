// SPDX-License-Identifier: MIT
#pragma once
// A processing element: one SC_THREAD that runs its program step by step on cycle boundaries.
// Compute and reduce steps advance time in one wait (no per-cycle ticking); a receive sleeps
// until its message's completion event. Every step leaves a Span for statistics and traces.
#include <cstdint>
#include <optional>
#include <systemc>
#include <vector>

#include "noc/flit.h"
#include "sim/system/program.h"

namespace nocflow::sim {

struct Span {
  int pe = 0;
  StepKind kind = StepKind::Compute;
  int layer = -1;
  noc::Cycle start = 0, end = 0;
  int peer = -1;
  std::int64_t bytes = 0;
  int edge = -1;
  noc::Cycle arrived = 0;  ///< Recv: first cycle the message could be taken (= end if waited for)
  std::int64_t tag = 0;    ///< Send/Recv: the message's tag; Barrier: its id
};

/// What a PE needs from the system around it.
class PeHost {
 public:
  virtual ~PeHost() = default;
  virtual noc::Cycle cycle_now() const = 0;
  virtual const sc_core::sc_time& period() const = 0;
  /// Queue a message; false when the source queue is full (retry next cycle).
  virtual bool send(int pe, const Step& s) = 0;
  /// Consume the message a Recv step waits for, if it has arrived: the cycle it arrived.
  virtual std::optional<noc::Cycle> take(int pe, const Step& s) = 0;
  virtual void arrive_at_barrier(int pe, std::int64_t id) = 0;
  virtual bool barrier_open(std::int64_t id) const = 0;
  virtual sc_core::sc_event& barrier_event() = 0;
  virtual void record(const Span& span) = 0;
};

class PeModule : public sc_core::sc_module {
 public:
  PeModule(const sc_core::sc_module_name& name, int id, const Program& program, PeHost& host);

  /// Notified when a message for this PE completes (takes effect at the next cycle boundary).
  sc_core::sc_event arrival;

  int id() const { return id_; }
  bool finished() const { return finished_; }
  noc::Cycle finish_cycle() const { return finish_; }
  /// The step it is blocked on, when not finished.
  const Step* current() const { return pc_ < program_.size() ? &program_[pc_] : nullptr; }

 private:
  void run();

  int id_;
  const Program& program_;
  PeHost& host_;
  std::size_t pc_ = 0;
  bool finished_ = false;
  noc::Cycle finish_ = 0;
};

}  // namespace nocflow::sim
