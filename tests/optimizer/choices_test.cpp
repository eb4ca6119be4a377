// SPDX-License-Identifier: MIT
// Choice enumeration and the pruning counts.
#include <gtest/gtest.h>

#include <set>

#include "noc/base/error.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/placement.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/solver/solver.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

TEST(Choices, DivisorsAscending) {
  EXPECT_EQ(divisors(12), (std::vector<std::int64_t>{1, 2, 3, 4, 6, 12}));
  EXPECT_EQ(divisors(1), (std::vector<std::int64_t>{1}));
  EXPECT_EQ(divisors(49), (std::vector<std::int64_t>{1, 7, 49}));
}

TEST(Choices, FactorsDivideLegalDimsProductAtMostP) {
  Layer l;
  l.out = {1, 4, 2, 1};
  l.reduction = 3;
  l.legal = {PartDim::Outp, PartDim::OfmpH, PartDim::Inpp, PartDim::Batch};  // N = 1: only factor 1
  const auto all = enumerate_choices(l, {4, false});
  std::vector<std::string> names;
  for (const Choice& c : all) names.push_back(c.str());
  EXPECT_EQ(names, (std::vector<std::string>{"SINGLE", "INPP=3", "OFMP_H=2", "OUTP=2", "OUTP=2,OFMP_H=2", "OUTP=4"}));
  const auto exact = enumerate_choices(l, {4, true});
  ASSERT_EQ(exact.size(), 2u);
  EXPECT_EQ(exact[0].str(), "OUTP=2,OFMP_H=2");
  EXPECT_TRUE(enumerate_choices(l, {7, true}).empty());
  l.legal = {PartDim::Outp};
  EXPECT_EQ(enumerate_choices(l, {16, false}).size(), 3u);
  l.legal = {};  // a layer that cannot be split (a Flatten) keeps its one PE under exact
  ASSERT_EQ(enumerate_choices(l, {16, true}).size(), 1u);
  EXPECT_EQ(enumerate_choices(l, {16, true})[0].str(), "SINGLE");
  EXPECT_EQ(parse_choice("OUTP=2,OFMP_H=2", "t"), exact[0]);
  EXPECT_THROW(parse_choice("OUTP=x", "t"), InputError);
}

TEST(Choices, BalancedSplitsAddTheDivisorsOfPUpToTheDimension) {
  Layer l;
  l.out = {1, 20, 7, 1};
  l.reduction = 3;
  l.legal = {PartDim::Outp, PartDim::OfmpH};
  auto factors = [&](const ChoiceOptions& o, PartDim d) {
    std::set<int> out;
    for (const Choice& c : enumerate_choices(l, o)) out.insert(c.factor(d));
    return out;
  };
  // 7 rows on 16 PEs: divisors of 7 ({1, 7}) and, balanced, those of 16 up to 7 ({1, 2, 4}).
  EXPECT_EQ(factors({16, false}, PartDim::OfmpH), (std::set<int>{1, 7}));
  EXPECT_EQ(factors({16, false, true}, PartDim::OfmpH), (std::set<int>{1, 2, 4, 7}));
  EXPECT_EQ(factors({16, false, true}, PartDim::Outp), (std::set<int>{1, 2, 4, 5, 8, 10, 16}));
  // Ascending order and the P bound hold as before; exact keeps p = P.
  for (const Choice& c : enumerate_choices(l, {16, true, true}))
    EXPECT_EQ(c.nodes(), 16) << c.str();
  EXPECT_EQ(enumerate_choices(l, {16, true, true}).size(), 3u);  // OUTP 16, 8 x 2, 4 x 4
  // A relayout keeps its own list (Layer::factors): the blocks must copy their own elements.
  l.factors[static_cast<std::size_t>(PartDim::OfmpH)] = {1, 7};
  EXPECT_EQ(factors({16, false, true}, PartDim::OfmpH), (std::set<int>{1, 7}));
}

TEST(Choices, TheLargestNodesPartIsTheEvenShareWhenFactorsDivide) {
  Layer l;
  l.out = {2, 12, 6, 10};
  l.reduction = 9;
  l.legal = {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW, PartDim::Inpp};
  for (const Choice& c : enumerate_choices(l, {64, false})) {
    for (const std::int64_t total : {0LL, 1LL, 1'000'003LL, 184'320LL})
      EXPECT_EQ(largest_node_part(total, l, c), (total + c.nodes() - 1) / c.nodes()) << c.str();
    for (PartDim d : kAllPartDims) EXPECT_EQ(effective_parts(l, c, d), c.factor(d));
  }
  // 10 columns in 4 blocks (2, 3, 2, 3) and 9 in 2 (4, 5): the largest node has 3 / 10 x 5 / 9.
  const Choice c = make({{PartDim::OfmpW, 4}, {PartDim::Inpp, 2}});
  EXPECT_EQ(largest_node_part(900, l, c), 150);
  EXPECT_DOUBLE_EQ(effective_parts(l, c, PartDim::OfmpW), 10.0 / 3.0);
}

TEST(Choices, NoValidChoiceNamesTheLayer) {
  Graph g = zoo_network("vgg5");
  HwDesc hw;
  hw.topology = {"mesh", 1, 7, 0};
  const auto model = make_cost_model("paper", hw);
  try {
    setup_partition(g, hw, *model, {true, false, true});
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("layer 'conv1'"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("exactly 7 PEs"), std::string::npos) << e.what();
  }
}

TEST(Choices, ALayerThatFitsNoChoiceIsRefusedBeforeAnyEdgeIsTabulated) {
  Graph g = zoo_network("vgg5");
  HwDesc hw;
  hw.topology = {"mesh", 2, 2, 0};
  hw.sram_bytes = 1024;
  const auto model = make_cost_model("linkload", hw);
  int edges_started = 0;
  SetupOptions o;
  o.memory_limit = true;
  o.progress = [&](const TabulationStatus&) { ++edges_started; };
  EXPECT_THROW(setup_partition(g, hw, *model, o), MemoryInfeasible);
  EXPECT_EQ(edges_started, 0);
  o.memory_limit = false;  // without the limit every edge is tabulated
  EXPECT_GT(setup_partition(g, hw, *model, o).problem.edges.size(), 0u);
  EXPECT_GT(edges_started, 0);
}

// Progress comes before each edge and as its rows finish, and counts the entries of the tables
// computed, not copied: resnet18's equal blocks repeat their edges' tables.
TEST(Choices, TabulationProgressCountsTheEntriesComputed) {
  Graph g = zoo_network("resnet18");
  PassManager(parse_pass_list("default")).run(g);
  HwDesc hw;
  hw.topology = {"mesh", 2, 2, 0};
  const auto model = make_cost_model("linkload", hw);
  const Workload w = build_workload(g);
  std::vector<std::vector<Choice>> choices;
  for (const Layer& l : w.layers) choices.push_back(enumerate_choices(l, {hw.num_pes()}));
  std::vector<TabulationStatus> seen;
  const Problem p = tabulate(w, choices, *model, hw, false,
                             [&](const TabulationStatus& s) { seen.push_back(s); });
  ASSERT_FALSE(seen.empty());
  // Per edge, the entries done when it starts (its first report) and the calls in between.
  std::vector<double> at_start(w.edges.size() + 1, -1);
  std::vector<int> row_calls(w.edges.size(), 0);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    const TabulationStatus& s = seen[i];
    EXPECT_EQ(s.edges, w.edges.size());
    EXPECT_EQ(s.entries, seen[0].entries);
    ASSERT_LT(s.edges_done, w.edges.size());
    if (i > 0) {
      EXPECT_GE(s.edges_done, seen[i - 1].edges_done);
      EXPECT_GE(s.entries_done, seen[i - 1].entries_done);
    }
    if (at_start[s.edges_done] < 0)
      at_start[s.edges_done] = s.entries_done;
    else
      ++row_calls[s.edges_done];
  }
  at_start.back() = seen[0].entries;
  double all = 0;
  std::size_t copied = 0;
  for (std::size_t k = 0; k < w.edges.size(); ++k) {
    ASSERT_GE(at_start[k], 0) << "edge " << k << " was not reported";
    // Edge k added its table's entries, a row at a time, or none if it was a copy.
    const double size = static_cast<double>(p.edges[k].cost.size());
    const double added = at_start[k + 1] - at_start[k];
    all += size;
    if (added == 0) {
      ++copied;
      EXPECT_EQ(row_calls[k], 0) << "edge " << k;
    } else {
      EXPECT_EQ(added, size) << "edge " << k;
      EXPECT_EQ(row_calls[k],
                static_cast<int>(choices[static_cast<std::size_t>(w.edges[k].src)].size()))
          << "edge " << k;
    }
  }
  EXPECT_GT(copied, 0u);  // resnet18's repeated blocks
  EXPECT_LT(seen[0].entries, all);
}

TEST(Choices, PruningKeepsTheOptimumOnVgg5BothModels) {
  Graph g = zoo_network("vgg5");
  PassManager(parse_pass_list("default")).run(g);
  HwDesc hw;
  hw.topology = {"mesh", 2, 4, 0};
  for (const std::string name : {"paper", "linkload"}) {
    const auto model = make_cost_model(name, hw);
    const PartitionSetup full = setup_partition(g, hw, *model, {false, false, false});
    const PartitionSetup pruned = setup_partition(g, hw, *model, {false, false, true});
    EXPECT_EQ(full.choices_before, pruned.choices_before);
    // paper: a choice is always the cheapest partner of itself (type NONE), which keeps most
    // choices undominated; linkload's exact costs prune.
    if (name == std::string("linkload")) {
      EXPECT_LT(pruned.choices_after, pruned.choices_before);
    }
    EXPECT_LE(pruned.choices_after, pruned.choices_before);
    const auto dp = make_solver("dp");
    EXPECT_NEAR(dp->solve(full.problem, {}).cost, dp->solve(pruned.problem, {}).cost, 1e-9) << name;
  }
}

TEST(Choices, PlacementSearchOffersRowsTwinsAndNeverPlansWorse) {
  Graph g = zoo_network("vgg5", {1, 2});
  PassManager(parse_pass_list("default")).run(g);
  HwDesc hw;  // as configs/hw/mesh4x4.yaml
  hw.topology = {"mesh", 4, 4, 0};
  hw.array_rows = hw.array_cols = 16;
  const auto model = make_cost_model("linkload", hw);
  const PartitionSetup snake = setup_partition(g, hw, *model, {false, false, false});
  const PartitionSetup search = setup_partition(g, hw, *model, {false, false, false, true});
  std::size_t twins = 0;
  for (const auto& cs : search.choices)
    for (const Choice& c : cs) {
      if (!c.rows_placement) continue;
      ++twins;
      EXPECT_TRUE(rows_placement_applies(c, hw.grid())) << c.str();
    }
  EXPECT_EQ(search.choices_before, snake.choices_before + twins);
  ASSERT_GT(twins, 0u);
  const auto dp = make_solver("dp");
  const SolveResult a = dp->solve(snake.problem, {}), b = dp->solve(search.problem, {});
  // vgg5's 3×3 convolutions split OFMP_H=4,OFMP_W=4 exchange halos one hop apart with ROWS.
  EXPECT_LT(b.cost, a.cost);
  bool rows = false;
  for (std::size_t l = 0; l < b.choice.size(); ++l)
    rows |= search.choices[l][static_cast<std::size_t>(b.choice[l])].rows_placement;
  EXPECT_TRUE(rows);
}

}  // namespace
}  // namespace nocflow::optimizer
