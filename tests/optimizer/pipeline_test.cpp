// SPDX-License-Identifier: MIT
// Pipeline stages (seed 004): solve_pipeline's plans against their own definitions, the stage
// pricer's bounds, and plan files of pipelines (under the SRAM: pipeline_memory_test.cpp).
#include "optimizer/plan/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "noc/base/error.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/plan/stage_pricer.h"
#include "tests/input_error.h"
#include "tests/optimizer/prepared.h"
#include "tests/optimizer/stage_costs.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

/// resnet18's SGD training step in 3 stages on a 4×4 mesh of 64 MiB PEs: forward layers send
/// their saved activations stages on, and their consumers' choices need copies of them.
struct TrainingPipeline {
  Graph g = zoo_network("resnet18", {1, 2});
  HwDesc hw;  // 4×4 mesh
  PipelineOptions o;
  TrainingPipeline() {
    TrainingOptions sgd;
    run_passes(g, "default", &sgd);
    hw.sram_bytes = 64 << 20;
    o.stages = 3;
  }
};

TEST(Pipeline, StagesTileTheLayersAndTheMeshAndCostWhatTheirPlansSay) {
  const Graph g = prepared("resnet18");
  HwDesc hw;  // 4×4 mesh
  PipelineOptions o;
  o.stages = 3;
  o.micro_batches = 5;
  o.solver = "dp";
  for (const std::string model : {"paper", "linkload"}) {
    const PipelineResult r = solve_pipeline(g, hw, model, o);
    const Plan& p = r.plan;
    ASSERT_TRUE(p.pipelined());
    ASSERT_EQ(p.stages.size(), 3u);
    EXPECT_EQ(p.micro_batches, 5);
    // Bands of whole rows, one after the other, covering the mesh.
    int next_pe = 0;
    for (const PlanStage& st : p.stages) {
      EXPECT_EQ(st.first_pe, next_pe);
      EXPECT_EQ(st.pes, st.units * hw.topology.cols);
      next_pe += st.pes;
    }
    EXPECT_EQ(next_pe, hw.num_pes());
    const Paid paid = expect_stages_cost_their_parts(g, hw, o, model, r);
    EXPECT_GE(paid.consumer, 2) << model;  // at least one into each later stage
    EXPECT_GT(paid.producer, 0) << model;  // a skip edge from before a cut
    EXPECT_NEAR(p.pipeline_cycles, r.split.pipeline_cost(5), 1e-9 * p.pipeline_cycles);
    EXPECT_DOUBLE_EQ(p.predicted_cycles(), p.pipeline_cycles);
    // Seed 004's balanced baseline: 4 rows shared out evenly (the first stage takes the
    // remainder), every layer in one stage; the DP, exact over every split and share of the
    // rows (dp inside), has no slower bottleneck.
    EXPECT_EQ(r.balanced.units, (std::vector<int>{2, 1, 1})) << model;
    ASSERT_EQ(r.balanced.begin.size(), 4u);
    EXPECT_EQ(r.balanced.begin.front(), 0);
    EXPECT_EQ(r.balanced.begin.back(), static_cast<int>(p.layers.size()));
    for (int s = 0; s < 3; ++s) EXPECT_LT(r.balanced.begin[s], r.balanced.begin[s + 1]) << model;
    EXPECT_LE(r.split.bottleneck(), r.balanced.bottleneck() * (1 + 1e-12)) << model;
    // Some ranges were only solved until shown slower than a split already found.
    EXPECT_GT(r.ranges_stopped, 0) << model;
    EXPECT_LT(r.ranges_stopped, r.ranges_priced) << model;
  }
}

TEST(Pipeline, OneStageIsTheWholeMachinePlan) {
  const Graph g = prepared("vgg5");
  const HwDesc hw;
  PipelineOptions o;
  o.stages = 1;
  o.micro_batches = 3;
  const PipelineResult r = solve_pipeline(g, hw, "paper", o);
  const auto model = make_cost_model("paper", hw);
  const PartitionSetup s = setup_partition(g, hw, *model, {});
  const SolveResult dp = make_solver("dp")->solve(s.problem, {});
  EXPECT_NEAR(r.whole_machine_cycles, dp.cost, 1e-9 * dp.cost);
  EXPECT_NEAR(r.plan.pipeline_cycles, 3 * dp.cost, 1e-9 * dp.cost);
  // The split, the whole machine, the baseline and the plan are one range: solved once.
  EXPECT_EQ(r.ranges_priced, 1);
  const Plan whole = make_plan(s, dp.choice, hw, *model, "dp");
  ASSERT_EQ(r.plan.layers.size(), whole.layers.size());
  for (std::size_t l = 0; l < whole.layers.size(); ++l) {
    EXPECT_EQ(r.plan.layers[l].choice, whole.layers[l].choice) << whole.layers[l].name;
    EXPECT_EQ(r.plan.layers[l].pes, whole.layers[l].pes) << whole.layers[l].name;
  }
}

TEST(Pipeline, CrossbarStagesAreBandsOfAtLeastTwoPorts) {
  // A band of one port is no crossbar: the split must use bands of >= 2 (it used to throw).
  const Graph g = prepared("vgg5");
  HwDesc hw;
  hw.topology = {"crossbar", 0, 0, 16};
  for (int stages : {1, 2, 3}) {
    PipelineOptions o;
    o.stages = stages;
    o.micro_batches = 4;
    const PipelineResult r = solve_pipeline(g, hw, "linkload", o);
    ASSERT_EQ(static_cast<int>(r.plan.stages.size()), stages);
    int ports = 0;
    for (const PlanStage& st : r.plan.stages) {
      EXPECT_GE(st.units, 2);
      ports += st.units;
    }
    EXPECT_EQ(ports, 16);
  }
}

TEST(Pipeline, PlanFileKeepsTheStagesAndBadRequestsAreRefused) {
  const Graph g = prepared("vgg5");
  HwDesc hw;
  PipelineOptions o;
  o.stages = 2;
  o.micro_batches = 4;
  const Plan p = solve_pipeline(g, hw, "linkload", o).plan;
  const std::string file = testing::scratch_path("pipeline_plan.yaml").string();
  std::ofstream(file) << plan_yaml(p);
  const Plan back = read_plan(file);
  EXPECT_EQ(plan_yaml(back), plan_yaml(p));
  // totals are one micro-batch's stage sum: the file says where the pipeline's time is.
  EXPECT_NE(plan_yaml(p).find("# totals: one micro-batch through every stage in turn; the pipeline's time "
                              "for all micro-batches is pipeline.predicted_cycles\ntotals:"),
            std::string::npos);
  ASSERT_EQ(back.stages.size(), 2u);
  EXPECT_EQ(back.micro_batches, 4);
  EXPECT_EQ(back.layers.back().stage, 1);
  EXPECT_NE(plan_dot(p).find("subgraph cluster_stage1"), std::string::npos);

  o.stages = 5;  // the 4×4 mesh has 4 rows
  EXPECT_THROW(solve_pipeline(g, hw, "paper", o), InputError);
  o.stages = 2;
  HwDesc one = hw;  // one row: "1 row" (it read "1 rows")
  one.topology.rows = 1;
  const std::string rows = testing::error_of([&] { solve_pipeline(g, one, "paper", o); });
  EXPECT_NE(rows.find("mesh 1x4 has 1 row, vgg5 has 7 layers (1 to 1)"), std::string::npos);
  o.micro_batches = 0;
  EXPECT_THROW(solve_pipeline(g, hw, "paper", o), InputError);
  o.micro_batches = 2;
  o.solver = "simplex";
  EXPECT_THROW(solve_pipeline(g, hw, "paper", o), InputError);
  o.solver = "dp";
  o.resident_weights = true;
  hw.sram_bytes = 1024;  // no stage holds its weights
  EXPECT_THROW(solve_pipeline(g, hw, "paper", o), InputError);
}

TEST(Pipeline, ATrainingSplitIsTheSameWhetherLongerRangesAreBoundByShorterOnesOrNot) {
  // A stage never costs less for taking more layers, so what a solve proves of [first, end)
  // bounds every [first, end') with end' > end: with and without that bound the runs must find
  // the same split, the first solving fewer. With resident weights too, where what is proven
  // is the search's bound for the cheapest assignment that fits.
  const TrainingPipeline t;
  const Graph& g = t.g;
  const HwDesc& hw = t.hw;
  const PipelineOptions& o = t.o;
  const auto same_split_fewer_solves = [](const Graph& net, const HwDesc& machine,
                                          PipelineOptions options) {
    const PipelineResult bounded = solve_pipeline(net, machine, "linkload", options);
    options.bound_by_shorter = false;
    const PipelineResult plain = solve_pipeline(net, machine, "linkload", options);
    EXPECT_EQ(bounded.split.bottleneck(), plain.split.bottleneck());
    EXPECT_EQ(bounded.split.begin, plain.split.begin);
    EXPECT_EQ(bounded.split.units, plain.split.units);
    EXPECT_EQ(bounded.split.cost, plain.split.cost);
    EXPECT_LT(bounded.ranges_priced, plain.ranges_priced);
    return bounded;
  };
  const PipelineResult trained = same_split_fewer_solves(g, hw, o);
  // Forward layers send their saved activations to backward layers stages on while their own
  // stage runs: that stage pays them, with the copies their consumers' choices need.
  const Paid paid = expect_stages_cost_their_parts(g, hw, o, "linkload", trained);
  EXPECT_GT(paid.copied, 0);
  HwDesc small;
  small.sram_bytes = 2048 * 1024;
  PipelineOptions resident;
  resident.stages = 3;
  resident.resident_weights = true;
  // resnet18 on 4x4 with 2 MiB PEs: the cheapest assignment of the first stage does not fit.
  EXPECT_FALSE(same_split_fewer_solves(prepared("resnet18"), small, resident).notes.empty());
}

TEST(Pipeline, RepricingKeepsOnlyTheSolvesItsCopiesLeaveUnchanged) {
  // Once the producers pay the copies, the ranges that pay none of the changed edges cost what
  // they did: their solves stand, and each must be what a pricer priced with those copies from
  // the start finds, and so must the second split and what it proves.
  const TrainingPipeline t;
  const Graph& g = t.g;
  const HwDesc& hw = t.hw;
  const PipelineOptions& o = t.o;
  const PipelineResult r = solve_pipeline(g, hw, "linkload", o);
  ASSERT_FALSE(r.copies.empty());
  const Workload w = build_workload(g);
  const int n = static_cast<int>(w.layers.size()), units = pipeline_units(hw);
  const auto split = [&](StagePricer& p) {
    return split_min_max_units(
        n, o.stages, units, [&](int f, int e, int q, double cut) { return p.cost(f, e, q, cut); },
        [&](int f, int e, int q) { return p.lower_bound(f, e, q); });
  };
  StagePricer kept(w, hw, o, "linkload"), fresh(w, hw, o, "linkload");
  split(kept);
  const auto before = kept.exact;
  kept.reprice(r.copies);
  fresh.reprice(r.copies);
  int stood = 0;
  for (const auto& [key, result] : before) {
    const bool changed = kept.reads_copies(key[0], key[1], {});
    EXPECT_EQ(kept.exact.count(key), changed ? 0U : 1U);
    if (changed) continue;
    ++stood;
    const StagePricer::Solved again = fresh.solve(key[0], key[1], key[2]);
    EXPECT_DOUBLE_EQ(result.cost, again.result.cost) << key[0] << ".." << key[1];
  }
  EXPECT_GT(stood, 0);
  EXPECT_LT(stood, static_cast<int>(before.size()));
  const StageSplit second = split(kept), from_start = split(fresh);
  EXPECT_EQ(second.begin, r.split.begin);
  EXPECT_EQ(second.begin, from_start.begin);
  EXPECT_EQ(second.units, from_start.units);
  EXPECT_EQ(second.cost, from_start.cost);
  for (int f = 0; f < n; ++f)  // what the kept solves prove holds under the new prices
    for (int e = f + 1; e <= n; ++e)
      for (int q = 1; q <= units; ++q)
        if (const auto it = fresh.exact.find({f, e, q}); it != fresh.exact.end()) {
          EXPECT_LE(kept.lower_bound(f, e, q), it->second.cost) << f << ".." << e << " on " << q;
        }
}

TEST(Pipeline, PlanFileWithInconsistentStagesIsRefused) {
  const Graph g = prepared("vgg5");
  PipelineOptions o;
  o.stages = 2;
  const HwDesc hw;  // named: a temporary here trips GCC 12's -Wmaybe-uninitialized
  const std::string text = plan_yaml(solve_pipeline(g, hw, "paper", o).plan);
  const std::string first_stage = "first_pe: 0, pes: 8";
  ASSERT_NE(text.find(first_stage), std::string::npos) << text;
  auto edited = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    for (std::size_t at = t.find(from); at != std::string::npos; at = t.find(from, at + to.size()))
      t.replace(at, from.size(), to);
    return t;
  };
  auto message = [](const std::string& t) {
    const std::string file = testing::scratch_path("bad_pipeline_plan.yaml").string();
    std::ofstream(file) << t;
    return testing::error_of([&] { read_plan(file); });
  };
  // Each of these used to replay, some writing outside the per-stage tables.
  const std::pair<std::string, std::string> cases[] = {
      {edited("    stage: 0\n", "    stage: 7\n"), "layer 'conv1': stage 7, expected 0 .. 1"},
      {edited("    stage: 1\n", ""), "layer 'conv4': stage missing, expected 0 .. 1"},
      {edited(first_stage, "first_pe: 0, pes: 12"), "stage 1: PEs 8-15 (2 units) is not a band"},
      {edited("last: conv5", "last: bogus"), "stage 1 runs 'conv4' .. 'bogus'"},
      {edited("micro_batches: 4", "micro_batches: 1000000000"),
       "micro_batches must be in 1 .. 4096"},
      {edited("pes: [0, 1, 2, 3, 7, 6, 5, 4]", "pes: [0, 1, 2, 3, 7, 6, 5, 9]"),
       "layer 'conv1': PE 9 is outside its stage's PEs 0-7"},
      {edited("pes: [0, 1, 2, 3, 7, 6, 5, 4]", "pes: [0, 1, 2, 3, 7, 6, 5, 5]"),
       "layer 'conv1': a PE listed twice"}};
  for (const auto& [t, expected] : cases) {
    const std::string msg = message(t);
    EXPECT_NE(msg.find(expected), std::string::npos) << expected << "\n" << msg;
  }
}

}  // namespace
}  // namespace nocflow::optimizer
