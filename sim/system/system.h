// SPDX-License-Identifier: MIT
#pragma once
// The accelerator: one PE module per node, the NoC between them, messages on top. run()
// executes a ProgramSet to completion under the SystemC kernel and checks that it really
// completed: every PE finished its program, every message sent was received once with the size
// expected, the network drained with every credit back. A PE waiting forever (a lowering bug)
// or a stalled network (watchdog) is a CheckError that says who waits for what.
//
// Timing: PEs act on cycle boundaries; the network evaluates cycle c half a period later, so a
// message sent in cycle c is injected in cycle c, and a message completed in cycle c can be
// received from cycle c + 1.
#include <functional>
#include <memory>
#include <systemc>
#include <vector>

#include "noc/base/progress.h"
#include "noc/network/network.h"
#include "noc/sc/noc_module.h"
#include "noc/traffic/traffic.h"
#include "sim/config/hw_spec.h"
#include "sim/system/messages.h"
#include "sim/system/pe_module.h"
#include "sim/system/program.h"

namespace nocflow::sim {

/// Flits the links carried during one window of cycles: those that carried any, as (index in
/// noc::link_loads order, flits), by index. Sparse: a window of a cycle on a 16x16 mesh has a few
/// of its 1,300 links busy.
struct LinkWindow {
  noc::Cycle start = 0;
  std::vector<std::pair<int, std::int64_t>> flits;
};

struct RunResult {
  noc::Cycle total_cycles = 0;           ///< when the last PE finished
  std::vector<noc::Cycle> pe_finish;     ///< per PE
  std::vector<Span> spans;               ///< every step of every PE, in completion order
  std::int64_t messages = 0, packets = 0, flits = 0, bytes = 0;
  std::int64_t flit_hops =
      0;  ///< flits x hops (router-to-router links; 1 on a crossbar): NoC energy
  std::vector<noc::LinkLoad> links;
  std::vector<LinkWindow> link_windows;  ///< when sampling was asked for; idle windows omitted
  double wall_seconds = 0;
};

/// Throws InputError naming the PE for a message its NI could never take (more flits than it
/// counts): bad input, found before a run (System checks it too).
void check_messages_fit(const noc::NocSpec& spec, const ProgramSet& programs);

class System : public sc_core::sc_module, public PeHost {
 public:
  System(const sc_core::sc_module_name& name, const HwSpec& hw, const ProgramSet& programs);
  ~System() override;

  /// Sample per-link flit counts every `cycles` (0: off) for traces.
  void sample_links(noc::Cycle cycles) { window_ = cycles; }
  /// Called every ~2 s of wall time with the current cycle, while running.
  std::function<void(noc::Cycle)> on_progress;

  /// Run to completion (call once per process: SystemC elaborates once).
  RunResult run();

  noc::Network& network() { return net_; }

 private:
  // PeHost
  noc::Cycle cycle_now() const override;
  const sc_core::sc_time& period() const override { return noc_.period(); }
  bool send(int pe, const Step& s) override;
  std::optional<noc::Cycle> take(int pe, const Step& s) override;
  void arrive_at_barrier(int pe, std::int64_t id) override;
  bool barrier_open(std::int64_t id) const override { return id <= barriers_passed_; }
  sc_core::sc_event& barrier_event() override { return barrier_event_; }
  void record(const Span& span) override { result_.spans.push_back(span); }

  std::string waiting_report() const;
  std::vector<std::int64_t> link_counts() const;
  void close_windows(noc::Cycle before);
  void after_cycle(noc::Cycle now);

  noc::Cycle window_ = 0;
  noc::Cycle window_start_ = 0;
  std::vector<std::int64_t> window_base_;
  std::int64_t cycles_seen_ = 0;
  ProgressThrottle progress_;  ///< on_progress at most every 2 s

  const ProgramSet& programs_;
  noc::Network net_;
  noc::NocModule noc_;
  MessageLayer messages_;
  std::vector<std::unique_ptr<PeModule>> pes_;
  sc_core::sc_event barrier_event_;
  std::int64_t barrier_id_ = 0, barriers_passed_ = 0;
  int barrier_count_ = 0;
  RunResult result_;
};

}  // namespace nocflow::sim
