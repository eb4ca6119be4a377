// SPDX-License-Identifier: MIT
// The static memory plan of a pipelined plan (sim/lower/memory_plan.h): its micro-batches'
// buffers, and a stage's weights held for the whole run when the plan was solved with
// --resident-weights (kept in plan.yaml).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <string>

#include "optimizer/plan/pipeline.h"
#include "sim/lower/lowering.h"
#include "sim/lower/memory_plan.h"
#include "sim/lower/workload_setup.h"
#include "tests/input_error.h"
#include "tests/scratch.h"
#include "tests/sim/memory_plan_util.h"

namespace nocflow::sim {
namespace {

/// vgg5 on the 4x4 mesh, and the options of a pipeline of 2 stages.
struct Vgg5Pipeline {
  HwSpec hw = load_hw_config(kDir + "/configs/hw/mesh4x4.yaml");
  opt::Graph g = prepare_network("zoo:vgg5", 1, hw, "default");
  opt::PipelineOptions o;
  explicit Vgg5Pipeline(int micro_batches) {
    o.stages = 2;
    o.micro_batches = micro_batches;
  }
};

TEST(MemoryPlan, AResidentWeightsPipelineHoldsEachLayersWeightsForTheWholeRun) {
  Vgg5Pipeline v(3);
  const HwSpec& hw = v.hw;
  const opt::Graph& g = v.g;
  opt::PipelineOptions& o = v.o;
  for (const bool resident : {false, true}) {
    o.resident_weights = resident;
    opt::Plan solved = opt::solve_pipeline(g, hw_desc_of(hw), "linkload", o).plan;
    // The flag goes through plan.yaml, as simulate --plan reads it.
    const std::string file =
        testing::scratch_path(resident ? "resident_plan.yaml" : "streamed_plan.yaml").string();
    std::ofstream(file) << opt::plan_yaml(solved);
    const opt::Plan plan = opt::read_plan(file);
    ASSERT_EQ(plan.resident_weights, resident);
    const MicroBatched mb = micro_batched(opt::build_workload(g), plan);
    const Lowered low = lower_plan(mb.workload, mb.plan, hw, ExecMode::Dataflow);
    const std::vector<PeMemoryPlan> memory = plan_memory(low, mb.workload);
    int weighted = 0, inputs_held = 0;
    for (std::size_t p = 0; p < memory.size(); ++p) {
      const int end = static_cast<int>(low.programs.pe[p].size()) - 1;
      std::map<std::string, int> copies;  // weight buffers per layer (NAME of NAME@m)
      for (const Buffer& b : memory[p].buffers) {
        if (b.kind != BufferKind::Weights) continue;
        const std::string& name = mb.workload.layers[static_cast<std::size_t>(b.layer)].name;
        ++copies[name.substr(0, name.rfind('@'))];
        if (resident) {  // from the program's first step to its last
          EXPECT_EQ(b.first, 0) << name;
          EXPECT_EQ(b.last, end) << name;
        } else {  // during its compute step only
          EXPECT_EQ(b.first, b.last) << name;
        }
      }
      for (const auto& [layer, n] : copies) EXPECT_EQ(n, resident ? 1 : 3) << layer;
      weighted += !copies.empty();
      // Each micro-batch is another sample: an input buffer of its own (one for all 3 held
      // one sample's share).
      std::map<std::string, int> inputs;  // by reader NAME@m
      for (const Buffer& b : memory[p].buffers)
        if (b.kind == BufferKind::Input)
          ++inputs[mb.workload.layers[static_cast<std::size_t>(b.layer)].name];
      if (!inputs.empty()) {
        EXPECT_EQ(inputs,
                  (std::map<std::string, int>{{"conv1@0", 1}, {"conv1@1", 1}, {"conv1@2", 1}}));
      }
      inputs_held += !inputs.empty();
    }
    EXPECT_GT(weighted, 1);
    EXPECT_GT(inputs_held, 0);
  }
}

TEST(Lowering, AStageOffTheRowsIsRefused) {
  // The plan file's reader keeps each layer in its stage's PEs; the lowering keeps a stage on
  // whole rows: 8 PEs from PE 6 are two rows' worth, but not two rows.
  const Vgg5Pipeline v(2);
  opt::Plan plan = opt::solve_pipeline(v.g, hw_desc_of(v.hw), "linkload", v.o).plan;
  const MicroBatched mb = micro_batched(opt::build_workload(v.g), plan);
  EXPECT_NO_THROW(lower_plan(mb.workload, mb.plan, v.hw, ExecMode::Dataflow));
  opt::PlanStage& st = plan.stages[1];
  ASSERT_EQ(st.units, 2);
  ASSERT_EQ(st.pes, 2 * v.hw.topology.cols);
  st.first_pe -= 2;
  const MicroBatched shifted = micro_batched(opt::build_workload(v.g), plan);
  EXPECT_HAS(testing::error_of(
                 [&] { lower_plan(shifted.workload, shifted.plan, v.hw, ExecMode::Dataflow); }),
             "the plan's stage 1: units 2, first_pe " + std::to_string(st.first_pe) +
                 " and pes 8 are not 2 mesh rows of mesh 4x4 (4 PEs each)");
}

}  // namespace
}  // namespace nocflow::sim
