// SPDX-License-Identifier: MIT
// SRAM in use during a run (sim/output/memory_use.h): the memory plan's live buffers plus the
// messages that complete before the first receive step of their buffer. By hand, against a
// cycle-by-cycle count on random programs, and on a dataflow replay of a training step, whose
// producers run ahead. One process per test (the last runs SystemC).
#include "sim/output/memory_use.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>

#include "noc/base/error.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/lowering.h"
#include "sim/lower/workload_setup.h"

namespace nocflow::sim {
namespace {

namespace opt = optimizer;
const std::string kDir = std::string(NOCFLOW_SOURCE_DIR);

/// The same figures counted cycle by cycle: at cycle t each PE is in the last step started by
/// t, holding that step's live plan bytes, plus every message that could be taken by t but
/// whose buffer's first step (a reduction chunk's: its own receive step) had not started by t.
RunMemory count_each_cycle(const std::vector<PeMemoryPlan>& plans, const ProgramSet& programs,
                           const std::vector<Span>& spans) {
  std::vector<std::vector<const Span*>> by_pe(programs.pe.size());
  for (const Span& s : spans) by_pe[static_cast<std::size_t>(s.pe)].push_back(&s);
  RunMemory r;
  r.peak_bytes = r.early_peak_bytes = -1;
  for (std::size_t p = 0; p < by_pe.size(); ++p) {
    const Program& prog = programs.pe[p];
    const auto& steps = by_pe[p];
    std::map<int, const Buffer*> buffer;
    for (const Buffer& b : plans[p].buffers)
      if (b.edge >= 0) buffer[b.edge] = &b;
    const noc::Cycle end = steps.empty() ? 0 : steps.back()->end;
    for (noc::Cycle t = 0; t <= end; ++t) {
      std::int64_t early = 0;
      for (std::size_t k = 0; k < prog.size(); ++k) {
        if (prog[k].kind != StepKind::Recv || !buffer.count(prog[k].edge)) continue;
        const Buffer& b = *buffer[prog[k].edge];
        const std::size_t from =
            b.kind == BufferKind::Chunk ? k : static_cast<std::size_t>(b.first);
        if (steps[k]->arrived <= t && t < steps[from]->start) early += prog[k].bytes;
      }
      // Every step that starts at t counts; else the last one started before t (none before
      // the first: no plan bytes).
      for (std::size_t k = 0; k <= prog.size(); ++k) {
        const bool current =
            k == prog.size()
                ? prog.empty() || steps[0]->start > t
                : steps[k]->start == t ||
                      (steps[k]->start < t && (k + 1 == prog.size() || steps[k + 1]->start > t));
        if (!current) continue;
        std::int64_t live = 0;
        for (const Buffer& b : plans[p].buffers)
          live +=
              (k < prog.size() && b.first <= static_cast<int>(k) && static_cast<int>(k) <= b.last)
                  ? b.bytes
                  : 0;
        if (live + early > r.peak_bytes) {
          r.peak_bytes = live + early;
          r.pe = static_cast<int>(p);
          r.cycle = t;
          r.early_bytes = early;
        }
      }
      if (early > r.early_peak_bytes) {
        r.early_peak_bytes = early;
        r.early_peak_pe = static_cast<int>(p);
      }
    }
  }
  return r;
}

void expect_same(const RunMemory& got, const RunMemory& want, const std::string& what) {
  EXPECT_EQ(got.peak_bytes, want.peak_bytes) << what;
  EXPECT_EQ(got.pe, want.pe) << what;
  EXPECT_EQ(got.cycle, want.cycle) << what;
  EXPECT_EQ(got.early_bytes, want.early_bytes) << what;
  EXPECT_EQ(got.early_peak_bytes, want.early_peak_bytes) << what;
  EXPECT_EQ(got.early_peak_pe, want.early_peak_pe) << what;
}

TEST(MemoryInUse, MessagesCountFromTheirArrivalUntilTheirBuffersFirstStep) {
  // One PE: compute layer 0 (cycles 0-10), receive edge 0 in two messages (100 and 50 bytes),
  // receive edge 1 (30 bytes), compute layer 1. The plan: weights 1000 at step 0, edge 0's
  // buffer 150 from step 1, edge 1's 30 from step 3, layer 1's output 200 at step 4.
  ProgramSet programs(1);
  programs.compute(0, 0, 10);
  programs.pe[0].push_back({StepKind::Recv, 1, 1, 100, 0, 1, 0});
  programs.pe[0].push_back({StepKind::Recv, 1, 1, 50, 0, 2, 0});
  programs.pe[0].push_back({StepKind::Recv, 1, 1, 30, 0, 3, 1});
  programs.compute(0, 1, 5);
  std::vector<PeMemoryPlan> plans(1);
  plans[0].buffers = {{BufferKind::Weights, 0, -1, 1000, 0, 0},
                      {BufferKind::Received, 1, 0, 150, 1, 4},
                      {BufferKind::Received, 1, 1, 30, 3, 4},
                      {BufferKind::Output, 1, -1, 200, 4, 4}};
  // The messages could be taken at cycles 5, 8 and 2: all while layer 0 computes. Edge 0's
  // buffer starts at cycle 10 (step 1), edge 1's at 12 (step 3).
  const std::vector<Span> spans = {{0, StepKind::Compute, 0, 0, 10},
                                   {0, StepKind::Recv, 1, 10, 10, 1, 100, 0, 5},
                                   {0, StepKind::Recv, 1, 10, 12, 1, 50, 0, 8},
                                   {0, StepKind::Recv, 1, 12, 12, 1, 30, 1, 2},
                                   {0, StepKind::Compute, 1, 12, 17}};
  const RunMemory m = run_memory(plans, programs, spans);
  // From cycle 8 to 9 the PE holds the weights and all three messages: 1000 + 180 bytes. The
  // plan alone peaks at 1000 (step 0).
  EXPECT_EQ(m.peak_bytes, 1000 + 100 + 50 + 30);
  EXPECT_EQ(m.cycle, 8);
  EXPECT_EQ(m.early_bytes, 180);
  EXPECT_EQ(m.early_peak_bytes, 180);
  expect_same(m, count_each_cycle(plans, programs, spans), "by hand");

  // A message taken by the step that starts its buffer, when it arrives after that start, is
  // the plan's: nothing early.
  std::vector<Span> late = spans;
  late[1].arrived = late[1].end = 10;
  late[2].arrived = 12;
  late[3].arrived = 12;
  const RunMemory on_time = run_memory(plans, programs, late);
  EXPECT_EQ(on_time.peak_bytes, 1000);
  EXPECT_EQ(on_time.early_peak_bytes, 0);
}

TEST(MemoryInUse, MatchesACycleByCycleCountOnRandomPrograms) {
  std::mt19937 rng(7);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 300; ++trial) {
    const int pes = pick(1, 3);
    ProgramSet programs(pes);
    std::vector<PeMemoryPlan> plans(static_cast<std::size_t>(pes));
    std::vector<Span> spans;
    for (int p = 0; p < pes; ++p) {
      const int n = pick(0, 9);
      std::map<int, int> edge_first;
      noc::Cycle t = 0;
      for (int k = 0; k < n; ++k) {
        const noc::Cycle start = t + pick(0, 3), end = start + pick(0, 4);
        if (pick(0, 1)) {
          const int edge = pick(0, 2);
          const std::int64_t bytes = pick(1, 50);
          programs.pe[p].push_back({StepKind::Recv, 0, 0, bytes, 0, k, edge});
          // Ready at the step's start or before, or waited for (the step ends as it arrives).
          const noc::Cycle arrived =
              pick(0, 1) ? std::max<noc::Cycle>(1, pick(0, static_cast<int>(start))) : end;
          spans.push_back({p, StepKind::Recv, 0, start, end, 0, bytes, edge, arrived});
          edge_first.try_emplace(edge, k);
        } else {
          programs.pe[p].push_back({StepKind::Compute, 0, -1, 0, end - start, 0});
          spans.push_back({p, StepKind::Compute, 0, start, end});
        }
        t = end;
        const int first = pick(0, k), last = pick(k, n - 1);
        plans[static_cast<std::size_t>(p)].buffers.push_back(
            {BufferKind::Output, 0, -1, pick(1, 100), first, last});
      }
      for (const auto& [edge, first] : edge_first)  // edge 2: a reduction's chunk
        plans[static_cast<std::size_t>(p)].buffers.push_back(
            {edge == 2 ? BufferKind::Chunk : BufferKind::Received, 0, edge, pick(1, 80), first,
             n - 1});
    }
    // Spans come in completion order: PEs interleaved.
    std::stable_sort(spans.begin(), spans.end(),
                     [](const Span& a, const Span& b) { return a.end < b.end; });
    expect_same(run_memory(plans, programs, spans), count_each_cycle(plans, programs, spans),
                "trial " + std::to_string(trial));
  }
}

TEST(MemoryInUse, RefusesSpansThatAreNotTheProgramsSteps) {
  ProgramSet programs(1);
  programs.compute(0, 0, 10);
  programs.compute(0, 1, 10);
  const std::vector<PeMemoryPlan> plans(1);
  EXPECT_THROW(run_memory(plans, programs, {{0, StepKind::Compute, 0, 0, 10}}), CheckError);
  EXPECT_THROW(run_memory(plans, programs, {{0, StepKind::Recv, 0, 0, 10}}), CheckError);
}

TEST(MemoryInUse, ADataflowTrainingStepHoldsMessagesThePlanDoesNotCount) {
  // vgg5's training step on a 4x4 mesh in dataflow replay: forward layers send the activations
  // their gradients will read long before the backward pass receives them.
  const HwSpec hw = load_hw_config(kDir + "/configs/hw/mesh4x4.yaml");
  const opt::Graph g = prepare_network("zoo:vgg5", 1, hw, "default", "sgd");
  const opt::Workload w = opt::build_workload(g);
  const Lowered low =
      lower_plan(w, solve_plan(g, hw_desc_of(hw), "dp", "linkload").plan, hw, ExecMode::Dataflow);
  const std::vector<PeMemoryPlan> plans = plan_memory(low, w);
  System sys("sys", hw, low.programs);
  const RunResult r = sys.run();
  const RunMemory m = run_memory(plans, low.programs, r.spans);
  expect_same(m, count_each_cycle(plans, low.programs, r.spans), "vgg5 training");
  std::int64_t plan_live = 0;
  for (const PeMemoryPlan& p : plans) plan_live = std::max(plan_live, p.live_peak_bytes);
  EXPECT_GT(m.early_peak_bytes, 0);
  EXPECT_GT(m.peak_bytes, plan_live);
  EXPECT_LE(m.peak_bytes - m.early_bytes, plan_live);
}

}  // namespace
}  // namespace nocflow::sim
