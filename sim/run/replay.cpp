// SPDX-License-Identifier: MIT
#include "sim/run/replay.h"

#include <sstream>

#include "noc/base/error.h"
#include "sim/lower/memory_plan.h"
#include "sim/output/layer_stats.h"
#include "sim/output/run_report.h"
#include "sim/run/child_process.h"
#include "sim/system/system.h"

namespace nocflow::sim {

std::string ReplayOutcome::serialize() const {
  std::ostringstream o;
  o.precision(17);
  o << total_cycles << ' ' << compute_cycles << ' ' << communication_cycles << ' ' << energy_pj << ' '
    << messages << ' ' << flits << ' ' << bytes << ' ' << wall_seconds << ' ' << memory_plan_bytes << ' '
    << memory_plan_pe << ' ' << in_use.peak_bytes << ' ' << in_use.pe << ' ' << in_use.cycle;
  return o.str();
}

ReplayOutcome ReplayOutcome::deserialize(const std::string& line) {
  std::istringstream in(line);
  ReplayOutcome r;
  in >> r.total_cycles >> r.compute_cycles >> r.communication_cycles >> r.energy_pj >> r.messages >> r.flits >>
      r.bytes >> r.wall_seconds >> r.memory_plan_bytes >> r.memory_plan_pe >> r.in_use.peak_bytes >> r.in_use.pe >>
      r.in_use.cycle;
  if (!in) throw CheckError("cannot read a replay report: '" + line + "'");
  return r;
}

ReplayOutcome replay(const HwSpec& hw, const optimizer::Workload& workload, const optimizer::Plan& plan,
                     ExecMode mode) {
  const Lowered lowered = lower_plan(workload, plan, hw, mode);
  System system("system", hw, lowered.programs);
  const RunResult r = system.run();
  const RunTotals totals = run_totals(r);
  ReplayOutcome out;
  out.total_cycles = static_cast<std::int64_t>(r.total_cycles);
  out.compute_cycles = static_cast<std::int64_t>(totals.compute);
  out.communication_cycles = static_cast<std::int64_t>(totals.communication);
  out.energy_pj = run_energy(workload, lowered, r, hw).total();
  out.messages = static_cast<std::int64_t>(r.messages);
  out.flits = static_cast<std::int64_t>(r.flits);
  out.bytes = static_cast<std::int64_t>(r.bytes);
  out.wall_seconds = r.wall_seconds;
  const std::vector<PeMemoryPlan> memory = plan_memory(lowered, workload);
  for (std::size_t pe = 0; pe < memory.size(); ++pe)
    if (memory[pe].peak_bytes > out.memory_plan_bytes) {
      out.memory_plan_bytes = memory[pe].peak_bytes;
      out.memory_plan_pe = static_cast<std::int64_t>(pe);
    }
  out.in_use = run_memory(memory, lowered.programs, r.spans);
  return out;
}

ReplayOutcome replay_in_child(const HwSpec& hw, const optimizer::Workload& workload,
                              const optimizer::Plan& plan, ExecMode mode) {
  return ReplayOutcome::deserialize(run_in_child([&] { return replay(hw, workload, plan, mode).serialize(); }));
}

}  // namespace nocflow::sim
