// SPDX-License-Identifier: MIT
#include "sim/output/memory_use.h"

#include <algorithm>
#include <map>
#include <utility>

#include "noc/base/error.h"

namespace nocflow::sim {

namespace {

struct PeUse {
  std::int64_t peak = 0, early_at_peak = 0, early_peak = 0;
  noc::Cycle cycle = 0;
};

/// One PE: `spans` its steps in program order.
PeUse pe_use(const PeMemoryPlan& plan, const Program& prog, const std::vector<const Span*>& spans) {
  const std::size_t n = prog.size();
  // Plan bytes live at each step: a difference array first.
  std::vector<std::int64_t> live(n + 1, 0);
  std::map<int, const Buffer*> buffer_of;  // edge -> its buffer (Received or Chunk)
  for (const Buffer& b : plan.buffers) {
    live[static_cast<std::size_t>(b.first)] += b.bytes;
    live[static_cast<std::size_t>(b.last) + 1] -= b.bytes;
    if (b.edge >= 0) buffer_of[b.edge] = &b;
  }
  for (std::size_t k = 1; k < n; ++k) live[k] += live[k - 1];

  std::vector<std::pair<noc::Cycle, std::int64_t>> events;  // early messages: (cycle, +/- bytes)
  for (std::size_t k = 0; k < n; ++k) {
    if (prog[k].kind != StepKind::Recv) continue;
    const auto it = buffer_of.find(prog[k].edge);
    if (it == buffer_of.end()) continue;  // a buffer of no bytes
    // A received buffer holds all its edge's messages from its first step; a reduction's chunk
    // one round's, so a round's message counts on its own until its receive step.
    const Buffer& b = *it->second;
    const std::size_t from = b.kind == BufferKind::Chunk ? k : static_cast<std::size_t>(b.first);
    const noc::Cycle counted_from = spans[from]->start;
    if (spans[k]->arrived < counted_from) {
      events.emplace_back(spans[k]->arrived, prog[k].bytes);
      events.emplace_back(counted_from, -prog[k].bytes);
    }
  }
  std::sort(events.begin(), events.end());

  PeUse use;
  std::int64_t early = 0;
  auto consider = [&](std::int64_t live_bytes, noc::Cycle at) {
    use.early_peak = std::max(use.early_peak, early);
    if (live_bytes + early > use.peak) use = {live_bytes + early, early, use.early_peak, at};
  };
  std::size_t e = 0;
  for (std::size_t k = 0; k < n; ++k) {
    for (; e < events.size() && events[e].first < spans[k]->start; ++e) {  // during step k - 1
      early += events[e].second;
      consider(k > 0 ? live[k - 1] : 0, events[e].first);
    }
    // Early messages end where the plan counts them: at a step's start.
    for (; e < events.size() && events[e].first == spans[k]->start; ++e) early += events[e].second;
    consider(live[k], spans[k]->start);
  }
  return use;
}

}  // namespace

RunMemory run_memory(const std::vector<PeMemoryPlan>& plans, const ProgramSet& programs,
                     const std::vector<Span>& spans) {
  std::vector<std::vector<const Span*>> by_pe(programs.pe.size());
  for (const Span& s : spans) {
    const auto p = static_cast<std::size_t>(s.pe);
    if (p >= by_pe.size() || by_pe[p].size() >= programs.pe[p].size() ||
        programs.pe[p][by_pe[p].size()].kind != s.kind)
      throw CheckError("run_memory: PE " + std::to_string(s.pe) +
                       "'s spans are not its program's steps in order");
    by_pe[p].push_back(&s);
  }
  RunMemory r;
  for (std::size_t p = 0; p < by_pe.size(); ++p) {
    if (by_pe[p].size() != programs.pe[p].size())
      throw CheckError("run_memory: PE " + std::to_string(p) + " ran " +
                       std::to_string(by_pe[p].size()) + " of its " +
                       std::to_string(programs.pe[p].size()) + " steps");
    const PeUse u = pe_use(plans[p], programs.pe[p], by_pe[p]);
    const int pe = static_cast<int>(p);
    if (u.peak > r.peak_bytes) {
      r.peak_bytes = u.peak;
      r.pe = pe;
      r.cycle = u.cycle;
      r.early_bytes = u.early_at_peak;
    }
    if (u.early_peak > r.early_peak_bytes) {
      r.early_peak_bytes = u.early_peak;
      r.early_peak_pe = pe;
    }
  }
  return r;
}

std::string sram_overflow_note(std::int64_t plan_bytes, std::size_t plan_pe, const RunMemory& in_use,
                               std::int64_t sram_bytes) {
  const std::string sram = "more than a PE's SRAM (pe.sram_bytes " + std::to_string(sram_bytes) + "): ";
  if (plan_bytes > sram_bytes)
    return "the memory plan of PE " + std::to_string(plan_pe) + " needs " + std::to_string(plan_bytes) +
           " bytes, " + sram +
           "data of several layers is live at once; the cycles assume it fits (raise pe.sram_bytes or use "
           "more PEs)";
  if (in_use.peak_bytes > sram_bytes)
    return "during the run PE " + std::to_string(in_use.pe) + " holds " + std::to_string(in_use.peak_bytes) +
           " bytes at once (cycle " + std::to_string(in_use.cycle) + "), " + sram +
           "messages arrive before the plan counts them; the cycles assume they fit";
  return "";
}

}  // namespace nocflow::sim
