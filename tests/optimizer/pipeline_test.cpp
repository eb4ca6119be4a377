// SPDX-License-Identifier: MIT
// Pipeline stages (seed 004): the min-max splits against brute force, the balanced baseline
// by hand, and solve_pipeline's plans against their own definitions.
#include "optimizer/plan/pipeline.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <numeric>
#include <random>
#include <set>

#include "noc/base/error.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/plan/stage_pricer.h"
#include "optimizer/solver/stage_split.h"
#include "tests/input_error.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// Every way to cut `layers` into `stages` non-empty ranges and `units` into as many positive
/// parts: the least maximum of cost(range, units).
double brute_min_max(int layers, int stages, int units, const StageBound& cost) {
  double best = kInf;
  std::function<void(int, int, int, double)> go = [&](int first, int left_units, int stage,
                                                      double worst) {
    if (stage == stages - 1) {
      best = std::min(best, std::max(worst, cost(first, layers, left_units)));
      return;
    }
    for (int end = first + 1; end <= layers - (stages - stage - 1); ++end)
      for (int q = 1; q <= left_units - (stages - stage - 1); ++q)
        go(end, left_units - q, stage + 1, std::max(worst, cost(first, end, q)));
  };
  go(0, units, 0, 0);
  return best;
}

/// A random split problem: each layer's work, a unit count and a stage count.
struct Instance {
  std::vector<double> work;
  int layers = 0, units = 0, stages = 0;
  double work_in(int a, int b) const {
    return std::accumulate(work.begin() + a, work.begin() + b, 0.0);
  }
};

/// Layers in [min_layers, max_layers], work per layer in [1, max_work], units in [min_units,
/// max_units], stages from min_stages to as many as layers and units allow.
Instance random_instance(std::mt19937& rng, int min_layers, int max_layers, int max_work,
                         int min_units, int max_units, int min_stages) {
  Instance x;
  x.work.resize(static_cast<std::size_t>(
      std::uniform_int_distribution<int>(min_layers, max_layers)(rng)));
  std::uniform_int_distribution<int> w(1, max_work);
  for (double& v : x.work) v = w(rng);
  x.layers = static_cast<int>(x.work.size());
  x.units = std::uniform_int_distribution<int>(min_units, max_units)(rng);
  x.stages =
      std::uniform_int_distribution<int>(min_stages, std::min(x.layers, x.units))(rng);
  return x;
}

/// A stage cost that is always exact, whatever the cutoff.
StageCost exact(const StageBound& cost) {
  return [cost](int a, int b, int q, double) { return cost(a, b, q); };
}

TEST(StageSplit, MinMaxIsOptimalAndCoversTheLayersInOrder) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> len(1, 9), t(1, 20);
  for (int n = 0; n < 200; ++n) {
    std::vector<double> times(static_cast<std::size_t>(len(rng)));
    for (double& x : times) x = t(rng);
    const int layers = static_cast<int>(times.size());
    const int stages = std::uniform_int_distribution<int>(1, layers)(rng);
    const StageSplit s = split_min_max(times, stages);
    ASSERT_EQ(s.stages(), stages);
    ASSERT_EQ(s.begin.front(), 0);
    ASSERT_EQ(s.begin.back(), layers);
    for (int k = 0; k < stages; ++k) {
      ASSERT_LT(s.begin[k], s.begin[k + 1]) << "stage " << k << " is empty";
      EXPECT_EQ(s.cost[k],
                std::accumulate(times.begin() + s.begin[k], times.begin() + s.begin[k + 1], 0.0));
    }
    const double brute = brute_min_max(layers, stages, stages, [&](int a, int b, int) {
      return std::accumulate(times.begin() + a, times.begin() + b, 0.0);
    });
    EXPECT_EQ(s.bottleneck(), brute) << "instance " << n;
    // The baseline is a valid split, never better.
    const StageSplit b = split_balanced(times, stages);
    ASSERT_EQ(b.stages(), stages);
    for (int k = 0; k < stages; ++k) ASSERT_LT(b.begin[k], b.begin[k + 1]);
    EXPECT_GE(b.bottleneck(), s.bottleneck());
  }
}

TEST(StageSplit, SeedsExampleAndTheBalancedBaselineByHand) {
  // Seed 004 §1.1: stages of 10, 15, 8, 12 ms: efficiency 11.25 / 15 = 75 %.
  StageSplit s;
  s.cost = {10, 15, 8, 12};
  EXPECT_DOUBLE_EQ(s.bottleneck(), 15);
  EXPECT_DOUBLE_EQ(s.efficiency(), 0.75);
  EXPECT_DOUBLE_EQ(s.imbalance(), 15.0 / 8);
  EXPECT_DOUBLE_EQ(s.pipeline_cost(8), 45 + 7 * 15);  // fill and drain, then one per 15
  // Balanced, target 24 / 3 = 8: [5 3] reaches 8; [1 6] is 7, + 2 reaches 9; [7] is the rest.
  const std::vector<double> times{5, 3, 1, 6, 2, 7};
  const StageSplit b = split_balanced(times, 3);
  EXPECT_EQ(b.begin, (std::vector<int>{0, 2, 5, 6}));
  EXPECT_EQ(b.cost, (std::vector<double>{8, 9, 7}));
  const StageSplit m = split_min_max(times, 3);
  EXPECT_EQ(m.bottleneck(), 9);  // the stage with 7 holds 9 or leaves 17 for two stages of 8
  EXPECT_THROW(split_min_max(times, 7), InputError);
  EXPECT_THROW(split_balanced(times, 0), InputError);
}

TEST(StageSplit, UnitsAreSharedOutOptimally) {
  // A stage's cost falls with its units (work / units, plus a fixed part): the DP must find the
  // best cuts and unit counts together.
  std::mt19937 rng(11);
  int asked_total = 0, asked_bounded_total = 0;  // stage costs asked, without and with a bound
  for (int n = 0; n < 150; ++n) {
    const Instance x = random_instance(rng, 1, 7, 30, 1, 6, 1);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) {
      const double sum = x.work_in(a, b);
      return (sum * 3 > 40 * q) ? kInf : sum / q + (b - a);  // too much work on few units: no fit
    };
    const double brute = brute_min_max(layers, stages, units, cost);
    if (brute == kInf) {
      EXPECT_THROW(split_min_max_units(layers, stages, units, exact(cost)), InputError);
      continue;
    }
    const StageSplit s = split_min_max_units(layers, stages, units, exact(cost));
    EXPECT_DOUBLE_EQ(s.bottleneck(), brute) << "instance " << n;
    // A lower bound (here one below the cost, and finite where the cost is not) only saves
    // stage costs: the same bottleneck, from stages that cost what they say.
    int asked = 0, asked_bounded = 0;
    auto counted = [&](int& calls) {
      return [&, c = &calls](int a, int b, int q, double) { return ++*c, cost(a, b, q); };
    };
    const StageBound bound = [&](int a, int b, int q) { return x.work_in(a, b) / q + (b - a) - 1; };
    split_min_max_units(layers, stages, units, counted(asked));
    const StageSplit bounded =
        split_min_max_units(layers, stages, units, counted(asked_bounded), bound);
    EXPECT_DOUBLE_EQ(bounded.bottleneck(), brute) << "instance " << n;
    EXPECT_EQ(std::accumulate(bounded.units.begin(), bounded.units.end(), 0), units);
    for (int k = 0; k < stages; ++k)
      EXPECT_DOUBLE_EQ(bounded.cost[k],
                       cost(bounded.begin[k], bounded.begin[k + 1], bounded.units[k]));
    EXPECT_LE(asked_bounded, asked);
    asked_total += asked, asked_bounded_total += asked_bounded;
    EXPECT_EQ(std::accumulate(s.units.begin(), s.units.end(), 0), units);
    for (int k = 0; k < stages; ++k) {
      EXPECT_GE(s.units[k], 1);
      EXPECT_DOUBLE_EQ(s.cost[k], cost(s.begin[k], s.begin[k + 1], s.units[k]));
    }
  }
  EXPECT_LT(asked_bounded_total, asked_total);
}

TEST(StageSplit, AStageIsPricedOnlyWhereAWholeSplitThroughItCouldWin) {
  // With a bound equal to the cost, the cap ends within 2 % of the bottleneck, and a stage is
  // worth pricing only if some whole split holding it stays within that: a first stage that
  // fits leaves no room for the others is never asked (nor is its band tabulated, in
  // solve_pipeline).
  std::mt19937 rng(5);
  int asked_total = 0;
  for (int n = 0; n < 120; ++n) {
    const Instance x = random_instance(rng, 2, 8, 40, 2, 7, 2);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) { return x.work_in(a, b) / q + 2 * (b - a); };
    std::vector<std::array<int, 3>> asked;
    const StageSplit s = split_min_max_units(
        layers, stages, units,
        [&](int a, int b, int q, double) { return asked.push_back({a, b, q}), cost(a, b, q); },
        cost);
    const double cap = s.bottleneck() * 1.02;
    // The stages of every whole split within the cap.
    std::set<std::array<int, 3>> could_win;
    std::vector<std::array<int, 3>> path;
    std::function<void(int, int, int)> go = [&](int first, int left, int stage) {
      const bool last = stage == stages - 1;
      for (int end = last ? layers : first + 1; end <= layers - (stages - stage - 1); ++end)
        for (int q = last ? left : 1; q <= left - (stages - stage - 1); ++q) {
          if (cost(first, end, q) > cap) continue;
          path.push_back({first, end, q});
          if (last)
            could_win.insert(path.begin(), path.end());
          else
            go(end, left - q, stage + 1);
          path.pop_back();
        }
    };
    go(0, units, 0);
    for (const auto& [a, b, q] : asked)
      EXPECT_TRUE(could_win.count({a, b, q}))
          << "instance " << n << ": layers [" << a << ", " << b << ") on " << q << " units";
    asked_total += static_cast<int>(asked.size());
  }
  EXPECT_GT(asked_total, 120);  // every instance asks its answer's stages at least
}

TEST(StageSplit, AStageProvenSlowerThanItsCutoffNeedsNoExactCost) {
  // A stage cost may answer only a bound in (cutoff, cost] once its cost is above the cutoff
  // (a solve stopped by its lower bound): the same bottleneck as brute force, from stages
  // whose costs are exact, with or without a lower bound.
  std::mt19937 rng(13);
  int bounds = 0, asks = 0;  // answers that were bounds, and all answers
  for (int n = 0; n < 150; ++n) {
    const Instance x = random_instance(rng, 2, 8, 40, 2, 7, 1);
    const int layers = x.layers, units = x.units, stages = x.stages;
    const StageBound cost = [&](int a, int b, int q) { return x.work_in(a, b) / q + (b - a); };
    const StageCost cut = [&](int a, int b, int q, double cutoff) -> StagePrice {
      ++asks;
      const double c = cost(a, b, q);
      if (c <= cutoff || !std::isfinite(cutoff)) return c;
      ++bounds;
      return {(cutoff + c) / 2, true};  // midway between the cutoff and the cost
    };
    const StageBound loose = [&](int a, int b, int q) { return cost(a, b, q) * 0.7; };
    const double brute = brute_min_max(layers, stages, units, cost);
    for (const StageBound& bound : {StageBound{}, loose}) {
      const StageSplit s = split_min_max_units(layers, stages, units, cut, bound);
      EXPECT_DOUBLE_EQ(s.bottleneck(), brute) << "instance " << n;
      EXPECT_EQ(std::accumulate(s.units.begin(), s.units.end(), 0), units);
      for (int k = 0; k < stages; ++k)
        EXPECT_EQ(s.cost[k], cost(s.begin[k], s.begin[k + 1], s.units[k])) << "instance " << n;
    }
  }
  EXPECT_GT(bounds, asks / 10);  // the cutoffs were used, often
}

Graph prepared(const std::string& name) {
  Graph g = zoo_network(name, {1, 2});
  PassManager(parse_pass_list("default")).run(g);
  return g;
}

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
    // Every layer in one stage, stages in layer order, every PE inside its stage's band.
    int stage = 0;
    std::vector<double> stage_sum(3, 0);
    for (const PlanLayer& l : p.layers) {
      ASSERT_GE(l.stage, stage) << l.name;
      stage = l.stage;
      const PlanStage& st = p.stages[static_cast<std::size_t>(l.stage)];
      for (int pe : l.pes) {
        EXPECT_GE(pe, st.first_pe) << l.name;
        EXPECT_LT(pe, st.first_pe + st.pes) << l.name;
      }
      stage_sum[static_cast<std::size_t>(l.stage)] += l.compute_cycles;
    }
    EXPECT_EQ(p.stages[0].first, p.layers.front().name);
    EXPECT_EQ(p.stages[2].last, p.layers.back().name);
    // A stage's cost is its layers' compute, its own edges and its stage inputs.
    auto stage_of = [&](const std::string& name) {
      for (const PlanLayer& l : p.layers)
        if (l.name == name) return l.stage;
      return -1;
    };
    int stage_inputs = 0;
    for (const PlanEdge& e : p.edges) {
      const int s = stage_of(e.src), d = stage_of(e.dst);
      EXPECT_EQ(e.type == "STAGE_INPUT", s != d) << e.src << " -> " << e.dst;
      stage_inputs += s != d;
      stage_sum[static_cast<std::size_t>(d)] += e.cycles;
    }
    EXPECT_GE(stage_inputs, 2);  // at least one into each later stage
    for (int s = 0; s < 3; ++s)
      EXPECT_NEAR(stage_sum[s], p.stages[s].cycles, 1e-6 * p.stages[s].cycles)
          << model << " stage " << s;
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
  Graph g = zoo_network("resnet18", {1, 2});
  TrainingOptions sgd;
  run_passes(g, "default", &sgd);
  HwDesc hw;  // 4×4 mesh
  hw.sram_bytes = 64 << 20;
  PipelineOptions o;
  o.stages = 3;
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
  same_split_fewer_solves(g, hw, o);
  HwDesc small;
  small.sram_bytes = 2048 * 1024;
  PipelineOptions resident;
  resident.stages = 3;
  resident.resident_weights = true;
  // resnet18 on 4x4 with 2 MiB PEs: the cheapest assignment of the first stage does not fit.
  EXPECT_FALSE(same_split_fewer_solves(prepared("resnet18"), small, resident).notes.empty());
}

TEST(Pipeline, ResidentWeightsTakeAStageAssignmentThatFitsWhereTheCheapestDoesNot) {
  // vgg5 in 2 stages on 4x4 with 192 KiB PEs: the cheapest assignment of a stage holds more than
  // that with every weight resident, but one splitting the weights further fits.
  const Graph g = prepared("vgg5");
  HwDesc hw;
  hw.sram_bytes = 192 * 1024;
  PipelineOptions o;
  o.stages = 2;
  const PipelineResult free = solve_pipeline(g, hw, "linkload", o);
  EXPECT_GT(*std::max_element(free.resident_bytes.begin(), free.resident_bytes.end()),
            static_cast<double>(hw.sram_bytes));
  o.resident_weights = true;
  const PipelineResult fitted = solve_pipeline(g, hw, "linkload", o);
  ASSERT_EQ(fitted.resident_bytes.size(), 2u);
  for (double bytes : fitted.resident_bytes) EXPECT_LE(bytes, static_cast<double>(hw.sram_bytes));
  // What fits costs at least what does not have to, and the plan's layers and edges are the
  // assignment each stage was priced with (its cycles sum to the stage's cost).
  EXPECT_GE(fitted.plan.pipeline_cycles, free.plan.pipeline_cycles);
  std::map<std::string, int> stage_of;
  std::vector<double> cycles(2, 0.0);
  for (const PlanLayer& l : fitted.plan.layers) {
    stage_of[l.name] = l.stage;
    cycles[static_cast<std::size_t>(l.stage)] += l.compute_cycles;
  }
  for (const PlanEdge& e : fitted.plan.edges)
    cycles[static_cast<std::size_t>(stage_of.at(e.dst))] += e.cycles;
  for (std::size_t s = 0; s < 2; ++s)
    EXPECT_NEAR(cycles[s], fitted.split.cost[s], 1e-6 * cycles[s]) << s;
}

// The resident-weights assignment of each chosen stage against every assignment of it that fits
// (vgg5 on 2x2, bands of 2 PEs: few choices a layer): never cheaper than the cheapest, and within
// the bound its note states, or the cheapest where it has none.
TEST(Pipeline, AResidentWeightsAssignmentIsWithinItsStatedBoundOfTheCheapestThatFits) {
  const Graph g = prepared("vgg5");
  const Workload w = build_workload(g);
  int noted = 0;
  for (const std::int64_t kib : {512, 768}) {
    HwDesc hw;
    hw.topology.rows = hw.topology.cols = 2;
    hw.sram_bytes = kib * 1024;
    PipelineOptions o;
    o.stages = 2;
    o.resident_weights = true;
    const PipelineResult r = solve_pipeline(g, hw, "linkload", o);
    StagePricer pricer(w, hw, o, "linkload");
    for (int s = 0; s < 2; ++s) {
      const int first = r.split.begin[s], end = r.split.begin[s + 1], q = r.split.units[s];
      const StagePricer::Solved st = pricer.solve(first, end, q);
      const Problem& p = st.setup.problem;
      double cheapest = std::numeric_limits<double>::infinity();
      std::vector<int> choice(p.node.size(), 0);
      std::function<void(std::size_t)> all = [&](std::size_t l) {
        if (l == choice.size()) {
          if (StagePricer::stage_bytes(st.setup, choice) <= static_cast<double>(hw.sram_bytes))
            cheapest = std::min(cheapest, evaluate(p, choice));
          return;
        }
        for (choice[l] = 0; choice[l] < static_cast<int>(p.node[l].size()); ++choice[l]) all(l + 1);
      };
      all(0);
      ASSERT_LT(cheapest, std::numeric_limits<double>::infinity()) << kib << " KiB, stage " << s;
      EXPECT_GE(st.result.cost, cheapest * (1 - 1e-12)) << kib << " KiB, stage " << s;
      const auto fit = pricer.resident_fits.find({first, end, q});
      if (fit == pricer.resident_fits.end() || fit->second.note.empty()) {
        EXPECT_NEAR(st.result.cost, cheapest, 1e-9 * cheapest) << kib << " KiB, stage " << s;
        continue;
      }
      ++noted;
      const std::string& text = fit->second.note;
      EXPECT_LE(fit->second.lower, cheapest * (1 + 1e-12)) << text;  // a lower bound indeed
      const std::size_t at = text.find("at most ");
      ASSERT_NE(at, std::string::npos) << text;
      const double percent = std::stod(text.substr(at + 8));
      EXPECT_LE(st.result.cost, cheapest * (1 + percent / 100 + 1e-4)) << text;
      EXPECT_FALSE(st.result.optimal) << text;
    }
  }
  EXPECT_GT(noted, 0);  // the case the bound is for
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
