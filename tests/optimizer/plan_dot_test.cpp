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

/// The one line of `dot` that starts with `prefix` (after the indent); "" and a failure when
/// there is not exactly one.
std::string one_line(const std::string& dot, const std::string& prefix) {
  std::vector<std::string> found;
  for (const std::string& line : lines_with(dot, prefix))
    if (line.rfind("  " + prefix, 0) == 0) found.push_back(line);
  EXPECT_EQ(found.size(), 1u) << prefix << "\n" << dot;
  return found.size() == 1 ? found[0] : "";
}

/// Whether `line` contains `text`.
bool has(const std::string& line, const std::string& text) {
  return line.find(text) != std::string::npos;
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
  const std::string conv = one_line(dot, "\"conv1\" ["), pool = one_line(dot, "\"pool\" ["),
                    fc = one_line(dot, "\"fc\" [");
  EXPECT_TRUE(has(conv, "conv1\\nConv\\nOUTP=4 (4 nodes)\\n120 compute cycles")) << conv;
  EXPECT_TRUE(has(conv, "fillcolor=\"#a5d8ff\"")) << conv;
  EXPECT_TRUE(has(pool, "OUTP=2,OFMP_H=2 (4 nodes)")) << pool;
  EXPECT_TRUE(has(pool, "fillcolor=\"#a5d8ff\"")) << pool;
  EXPECT_TRUE(has(fc, "SINGLE (1 nodes)")) << fc;
  EXPECT_FALSE(has(fc, "fillcolor")) << fc;
  // One arrow per edge, labelled with type, bytes and cycles; width 1 + 9 × its share of the
  // redistribution cycles; a free edge dashed.
  EXPECT_EQ(lines_with(dot, " -> ").size(), 3u);
  const std::string a2a = one_line(dot, "\"conv1\" -> \"pool\""),
                    gather = one_line(dot, "\"pool\" -> \"fc\""),
                    free_edge = one_line(dot, "\"conv1\" -> \"fc\"");
  EXPECT_TRUE(has(a2a, "ALL_TO_ALL\\n4096 B, 30 cycles")) << a2a;
  EXPECT_TRUE(has(a2a, "penwidth=7.75")) << a2a;
  EXPECT_TRUE(has(gather, "penwidth=3.25")) << gather;
  EXPECT_TRUE(has(free_edge, "style=dashed")) << free_edge;
  EXPECT_FALSE(has(free_edge, "penwidth")) << free_edge;
}

}  // namespace
}  // namespace nocflow::optimizer
