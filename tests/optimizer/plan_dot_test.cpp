// SPDX-License-Identifier: MIT
// plan.dot: what the Graphviz drawing of a plan shows (optimizer/plan/plan.h, plan_dot).
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <vector>

#include "optimizer/plan/plan.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

/// The lines of `text` that contain `needle`.
std::vector<std::string> lines_with(const std::string& text, const std::string& needle) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.find(needle) != std::string::npos) out.push_back(line);
  return out;
}

/// The statements that declare node `name` (not the arrows to or from it).
std::vector<std::string> node_lines(const std::string& dot, const std::string& name) {
  std::vector<std::string> out;
  for (const std::string& line : lines_with(dot, "\"" + name + "\" ["))
    if (line.rfind("  \"" + name + "\" [", 0) == 0) out.push_back(line);
  return out;
}

TEST(PlanDot, DrawsEveryLayerWithItsChoiceAndEveryEdgeByItsShareOfTheCost) {
  Plan p;
  p.network = "two \"branches\" \\N";  // a quote and a backslash, both escaped
  p.topology = "mesh 2x2";
  p.solver = "dp";
  p.cost_model = "linkload";
  p.layers = {
      {"conv1", "Conv", make({{PartDim::Outp, 4}}), {0, 1, 3, 2}, 120, 0},
      {"pool", "MaxPool", make({{PartDim::OfmpH, 2}, {PartDim::Outp, 2}}), {0, 1, 3, 2}, 30, 0},
      {"fc", "Gemm", Choice{}, {0}, 10, 0}};
  p.edges = {{"conv1", "pool", 0, "ALL_TO_ALL", 4096, 30, 0},
             {"pool", "fc", 0, "ALL_GATHER", 1024, 10, 0},
             {"conv1", "fc", 1, "NONE", 0, 0, 0}};
  p.compute_cycles = 160;
  p.redistribution_cycles = 40;
  const std::string dot = plan_dot(p);

  EXPECT_EQ(dot.rfind("digraph \"two \\\"branches\\\" \\\\N\" {", 0), 0u) << dot;
  EXPECT_NE(dot.find("predicted 200 cycles (compute 160, redistribution 40)"), std::string::npos);
  // One box per layer: name, operator, choice and nodes, compute cycles; filled by the
  // dimension with the largest factor (a tie goes to the first in enum order); one node: white.
  const auto conv = node_lines(dot, "conv1");
  ASSERT_EQ(conv.size(), 1u) << dot;
  EXPECT_NE(conv[0].find("conv1\\nConv\\nOUTP=4 (4 nodes)\\n120 compute cycles"),
            std::string::npos);
  EXPECT_NE(conv[0].find("fillcolor=\"#a5d8ff\""), std::string::npos) << conv[0];
  const auto pool = node_lines(dot, "pool");
  ASSERT_EQ(pool.size(), 1u);
  EXPECT_NE(pool[0].find("OUTP=2,OFMP_H=2 (4 nodes)"), std::string::npos) << pool[0];
  EXPECT_NE(pool[0].find("fillcolor=\"#a5d8ff\""), std::string::npos) << pool[0];
  const auto fc = node_lines(dot, "fc");
  ASSERT_EQ(fc.size(), 1u);
  EXPECT_NE(fc[0].find("SINGLE (1 nodes)"), std::string::npos) << fc[0];
  EXPECT_EQ(fc[0].find("fillcolor"), std::string::npos) << fc[0];
  // One arrow per edge, labelled with type, bytes and cycles; width 1 + 9 × its share of the
  // redistribution cycles; a free edge dashed.
  EXPECT_EQ(lines_with(dot, " -> ").size(), 3u);
  const auto a2a = lines_with(dot, "\"conv1\" -> \"pool\"");
  ASSERT_EQ(a2a.size(), 1u);
  EXPECT_NE(a2a[0].find("ALL_TO_ALL\\n4096 B, 30 cycles"), std::string::npos) << a2a[0];
  EXPECT_NE(a2a[0].find("penwidth=7.75"), std::string::npos) << a2a[0];
  const auto gather = lines_with(dot, "\"pool\" -> \"fc\"");
  ASSERT_EQ(gather.size(), 1u);
  EXPECT_NE(gather[0].find("penwidth=3.25"), std::string::npos) << gather[0];
  const auto free_edge = lines_with(dot, "\"conv1\" -> \"fc\"");
  ASSERT_EQ(free_edge.size(), 1u);
  EXPECT_NE(free_edge[0].find("style=dashed"), std::string::npos) << free_edge[0];
  EXPECT_EQ(free_edge[0].find("penwidth"), std::string::npos) << free_edge[0];
}

}  // namespace
}  // namespace nocflow::optimizer
