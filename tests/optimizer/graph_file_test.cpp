// SPDX-License-Identifier: MIT
// Graph files: every graph the front end, the passes and autodiff make is saved and read back
// node for node; what is not a graph file is refused with its place.
#include "optimizer/io/graph_file.h"

#include <gtest/gtest.h>

#include <string>

#include "noc/base/error.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/report/layer_report.h"

namespace nocflow::optimizer {
namespace {

const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

/// Saves `g`, reads it back and checks node for node: names in order, operators, attributes,
/// fused parts with their names, inputs, outputs and shapes; then the layer table.
void expect_round_trip(const Graph& g, const std::string& what) {
  const std::string text = graph_yaml(g);
  const Graph back = parse_network_yaml(text, what + ".yaml");
  EXPECT_EQ(back.name(), g.name()) << what;
  const auto order = g.topological_order(), back_order = back.topological_order();
  ASSERT_EQ(back_order.size(), order.size()) << what;
  for (std::size_t i = 0; i < order.size(); ++i) {
    const Node &a = g.node(order[i]), &b = back.node(back_order[i]);
    ASSERT_EQ(a.name, b.name) << what;
    EXPECT_EQ(a.kind, b.kind) << what << " " << a.name;
    EXPECT_EQ(a.attrs, b.attrs) << what << " " << a.name;
    for (std::size_t p = 0; p < a.attrs.parts.size() && p < b.attrs.parts.size(); ++p)
      EXPECT_EQ(a.attrs.parts[p].name, b.attrs.parts[p].name) << what << " " << a.name;
    EXPECT_EQ(a.output, b.output) << what << " " << a.name;
    std::vector<std::string> ins, back_ins;
    for (NodeId in : g.inputs(order[i])) ins.push_back(g.node(in).name);
    for (NodeId in : back.inputs(back_order[i])) back_ins.push_back(back.node(in).name);
    EXPECT_EQ(ins, back_ins) << what << " " << a.name;
  }
  ASSERT_EQ(back.outputs().size(), g.outputs().size());
  for (std::size_t i = 0; i < g.outputs().size(); ++i)
    EXPECT_EQ(back.node(back.outputs()[i]).name, g.node(g.outputs()[i]).name) << what;
  EXPECT_EQ(layer_table(back), layer_table(g)) << what;
  // Saving what was read gives the same file.
  EXPECT_EQ(graph_yaml(back), text) << what;
}

TEST(GraphFile, EveryZooNetworkAfterItsPassesReadsBackNodeForNode) {
  for (const std::string& name : zoo_names()) {
    Graph g = load_network("zoo:" + name);
    run_passes(g, "default");
    expect_round_trip(g, name);
    // The passes are at a fixpoint: running them again on what was read changes nothing.
    Graph again = parse_network_yaml(graph_yaml(g), name + ".yaml");
    run_passes(again, "default");
    EXPECT_EQ(layer_table(again), layer_table(g)) << name;
  }
}

TEST(GraphFile, UnpassedOnnxAndTrainingGraphsReadBackToo) {
  // Straight from ONNX: constants with values, shape arithmetic, dropout.
  expect_round_trip(load_network(kData + "encoder.onnx"), "encoder.onnx");
  // A Resize to sizes that shape arithmetic computes, before constant folding.
  expect_round_trip(load_network(kData + "lraspp_mobilenet_v3_large.onnx"), "lraspp.onnx");
  // Transposed convolutions and their gradients.
  Graph unet = load_network(kData + "tiny_unet.onnx");
  const TrainingOptions sgd;
  run_passes(unet, "default", &sgd);
  expect_round_trip(unet, "tiny_unet.train");
  for (const char* name : {"vgg5", "mobilenet_v2", "bert_base_layer"}) {
    Graph g = load_network(std::string("zoo:") + name);
    const TrainingOptions adam{"adam"};
    run_passes(g, "default", &adam);
    ASSERT_TRUE(is_training_graph_name(g.name()));
    expect_round_trip(g, std::string(name) + ".train");
    // A training graph read back is not differentiated twice, nor are its batch norms folded.
    Graph back = parse_network_yaml(graph_yaml(g), "t.yaml");
    EXPECT_THROW(run_passes(back, "default", &adam), InputError);
    EXPECT_THROW(run_passes(back, "identity,bnfold"), InputError);
    run_passes(back, "default");
    EXPECT_EQ(layer_table(back), layer_table(g)) << name;
  }
}

TEST(GraphFile, WhatIsNotAGraphIsRefusedWithItsPlace) {
  const std::string head =
      "format: nocflow-graph-1\nname: g\noutputs: [b]\nnodes:\n"
      "  - {name: a, op: Input, attrs: {shape: [1, 4, 8, 8]}}\n";
  const struct {
    std::string text;
    const char* message;
  } cases[] = {
      {"format: nocflow-graph-9\nnodes: []\noutputs: []\n",
       "g.yaml:1:9: format: expected nocflow-graph-1"},
      {head + "  - {name: b, op: Comv, inputs: [a]}\n",
       "g.yaml:6:19: nodes[1].op: unknown operator 'Comv'; did you mean 'Conv'?"},
      {head + "  - {name: b, op: Conv, inputs: [a], attrs: {out_chanels: 8}}\n",
       "did you mean 'out_channels'?"},
      {head + "  - {name: b, op: Conv, inputs: [z], attrs: {out_channels: 8}}\n",
       "nodes[1].inputs: 'z' is not an earlier node"},
      {head + "  - {name: b, op: Conv, inputs: [a], attrs: {out_channels: x}}\n",
       "nodes[1].attrs.out_channels: wrong type of value"},
      // yaml-cpp reads a list's 010 as octal 8 too: a pool of 8x8 windows.
      {head + "  - {name: b, op: MaxPool, inputs: [a], attrs: {kernel: [010, 010]}}\n",
       "nodes[1].attrs.kernel: wrong type of value (expected a whole number in decimal)"},
      {head + "  - {name: b, op: Conv, inputs: [a], attrs: {out_channels: 8}, output: {shape: [1, "
              "9, 8, 8]}}\n",
       "g.yaml:6:72: output: node 'b': the file records [1,9,8,8] x 4 B, shape inference gives "
       "[1,8,8,8] x 4 B"},
      {head + "  - {name: b, op: Relu, inputs: [a], parts: [{name: r, op: Relu, num_inputs: 1}]}\n",
       "only a Fused node has parts"},
      {head + "  - {name: a, op: Relu, inputs: [a]}\n", "duplicate name 'a'"},
      {"format: nocflow-graph-1\nname: g\noutputs: []\nnodes:\n"
       "  - {name: a, op: Input, attrs: {shape: [1, 4]}}\n",
       "g.yaml:3:10: outputs: no outputs"},
  };
  for (const auto& c : cases) {
    try {
      parse_network_yaml(c.text, "g.yaml");
      ADD_FAILURE() << "accepted: " << c.text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace nocflow::optimizer
