// SPDX-License-Identifier: MIT
#pragma once
// SRAM in use during a run, against the static memory plan (lower/memory_plan.h). The plan
// counts a received buffer from its first receive step; a message can complete before that step
// (in dataflow replay its producer runs ahead, in either mode another edge's receive comes
// first) and waits, in the NI or in SRAM a DMA wrote it to. This counts such early messages:
// from the cycle the receiver could take one to the start of the first step of its buffer
// (where the plan takes over), added to the plan's live buffers of the step the PE was in. A
// reduction's chunk holds one round at a time: a round's message counts until its own receive
// step.
#include <cstdint>
#include <string>
#include <vector>

#include "sim/lower/memory_plan.h"
#include "sim/system/system.h"

namespace nocflow::sim {

struct RunMemory {
  std::int64_t peak_bytes =
      0;                 ///< most bytes live at once on one PE: plan buffers + early messages
  int pe = 0;            ///< where
  noc::Cycle cycle = 0;  ///< when (the first time)
  std::int64_t early_bytes = 0;       ///< of peak_bytes, early messages
  std::int64_t early_peak_bytes = 0;  ///< most bytes of early messages at once on one PE
  int early_peak_pe = 0;
};

/// Throws CheckError when `spans` are not, PE by PE, the steps of `programs` in order.
RunMemory run_memory(const std::vector<PeMemoryPlan>& plans, const ProgramSet& programs,
                     const std::vector<Span>& spans);

/// Why a run needs more SRAM than a PE has (`sram_bytes`), or "" when it fits: the memory plan's
/// fullest PE (`plan_pe`, `plan_bytes`), else what was in use at once (`in_use`, early messages
/// included). The optimizer's SRAM limit holds each layer's own data; what stays live across
/// layers (training's saved activations, early messages) can pass it. The cycles assume it fits.
std::string sram_overflow_note(std::int64_t plan_bytes, std::size_t plan_pe, const RunMemory& in_use,
                               std::int64_t sram_bytes);

}  // namespace nocflow::sim
