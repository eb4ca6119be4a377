// SPDX-License-Identifier: MIT
#pragma once
// One plan replayed on the cycle-level system, reduced to the figures that sweeps and plan
// ranking compare: what `nocflow simulate` prints, without its files. SystemC elaborates once
// per process, so a command replaying several plans calls replay_in_child for each.
#include <cstdint>
#include <string>

#include "optimizer/partition/workload.h"
#include "optimizer/plan/plan.h"
#include "sim/config/hw_spec.h"
#include "sim/lower/lowering.h"
#include "sim/output/memory_use.h"

namespace nocflow::sim {

struct ReplayOutcome {
  std::int64_t total_cycles = 0;
  std::int64_t compute_cycles = 0;        ///< on the critical path (RunTotals)
  std::int64_t communication_cycles = 0;  ///< on the critical path (RunTotals)
  double energy_pj = 0;
  std::int64_t messages = 0, flits = 0, bytes = 0;
  double wall_seconds = 0;  ///< simulation only (wall clock)
  std::int64_t memory_plan_bytes = 0;  ///< the memory plan's fullest PE (lower/memory_plan.h)
  std::int64_t memory_plan_pe = 0;
  RunMemory in_use;  ///< what was live at once, early messages included (its peak only)

  /// Why the run did not fit a PE's SRAM (sram_overflow_note), or "" when it did.
  std::string sram_note(std::int64_t sram_bytes) const {
    return sram_overflow_note(memory_plan_bytes, static_cast<std::size_t>(memory_plan_pe), in_use, sram_bytes);
  }

  std::string serialize() const;  ///< one line, for the child's report
  static ReplayOutcome deserialize(const std::string& line);
};

/// Lower `plan` (InputError if it does not fit the machine) and run it to the end with all
/// checks (CheckError on a violation). Elaborates SystemC: at most once per process.
ReplayOutcome replay(const HwSpec& hw, const optimizer::Workload& workload, const optimizer::Plan& plan,
                     ExecMode mode);

/// replay() in a forked child; errors come back with their type (sim/run/child_process.h).
ReplayOutcome replay_in_child(const HwSpec& hw, const optimizer::Workload& workload,
                              const optimizer::Plan& plan, ExecMode mode);

}  // namespace nocflow::sim
