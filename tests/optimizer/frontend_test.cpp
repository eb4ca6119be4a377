// SPDX-License-Identifier: MIT
// Network YAML, ONNX import and shape-inference errors.
#include <gtest/gtest.h>
#include <cstdio>

#include <sstream>

#include <fstream>
#include <functional>
#include <iterator>
#include <utility>

#include "noc/base/error.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/report/layer_report.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/input_error.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {
namespace {

const std::string kConfigs = std::string(NOCFLOW_SOURCE_DIR) + "/configs/networks/";
const std::string kData = std::string(NOCFLOW_SOURCE_DIR) + "/tests/optimizer/data/";

using testing::error_of;

TEST(NetworkYaml, SequentialVgg5MatchesTheZoo) {
  const GraphTotals yaml = graph_totals(load_network(kConfigs + "vgg5.yaml"));
  const GraphTotals zoo = graph_totals(load_network("zoo:vgg5"));
  EXPECT_EQ(yaml.macs, zoo.macs);
  EXPECT_EQ(yaml.params, zoo.params);
  // Node for node, names included, so that a plan of one replays on the other.
  const Graph a = load_network(kConfigs + "vgg5.yaml"), b = load_network("zoo:vgg5");
  const std::vector<NodeId> ia = a.topological_order(), ib = b.topological_order();
  ASSERT_EQ(ia.size(), ib.size());
  for (std::size_t i = 0; i < ia.size(); ++i) {
    EXPECT_EQ(a.node(ia[i]).name, b.node(ib[i]).name);
    EXPECT_EQ(a.node(ia[i]).output.shape, b.node(ib[i]).output.shape) << a.node(ia[i]).name;
  }
}

TEST(NetworkYaml, EveryExampleLoads) {
  for (const char* f : {"vgg5.yaml", "residual_block.yaml", "aux_head.yaml", "tiny_attention.yaml"}) {
    const Graph g = load_network(kConfigs + f);
    EXPECT_GT(graph_totals(g).macs, 0) << f;
  }
  const Graph g = load_network(kConfigs + "residual_block.yaml");
  EXPECT_EQ(g.node(*g.find("out")).output.shape, (Shape{1, 128, 28, 28}));
  const Graph a = load_network(kConfigs + "tiny_attention.yaml");
  EXPECT_EQ(a.node(*a.find("scores")).output.shape, (Shape{2, 16, 16}));
}

TEST(NetworkYaml, ReadmeExampleLoads) {
  // The format's example in configs/networks/README.md, as a reader would copy it.
  std::ifstream in(kConfigs + "README.md");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::size_t begin = text.find("```yaml\nname: my_net");
  ASSERT_NE(begin, std::string::npos);
  const std::size_t body = text.find('\n', begin) + 1;
  const std::size_t end = text.find("```", body);
  ASSERT_NE(end, std::string::npos);
  const Graph g = parse_network_yaml(text.substr(body, end - body), "README.md example");
  EXPECT_EQ(g.node(*g.find("sum")).output.shape, (Shape{1, 64, 32, 32}));
  EXPECT_GT(graph_totals(g).macs, 0);
}

TEST(LayerTable, ColumnsFitTheLongestCellAndBytesHaveBinaryUnits) {
  const Graph g = parse_network_yaml(
      "input: [1, 3, 32, 32]\nlayers:\n"
      "  - {name: features.denseblock4.denselayer16.conv2.with.a.long.name, op: conv, out: 64, kernel: 3, pad: 1}\n"
      "  - {name: pool, op: maxpool, kernel: 2}\n",
      "net.yaml");
  std::istringstream table(layer_table(g));
  std::vector<std::string> lines;
  for (std::string line; std::getline(table, line);) lines.push_back(line);
  ASSERT_EQ(lines.size(), 5u);  // network, header, two layers, total
  // The last column starts at one offset on every row: the header's, the long name's, the pool's.
  const std::size_t dims = lines[1].find("partition dims");
  EXPECT_EQ(lines[2].find("OUTP,OFMP_H,OFMP_W,INPP"), dims) << lines[2];
  EXPECT_EQ(lines[3].find("OUTP,OFMP_H,OFMP_W"), dims) << lines[3];
  EXPECT_NE(lines[2].find("  7.0 KiB  "), std::string::npos) << lines[2];  // 64·3·9 + 64 floats
  EXPECT_NE(lines[3].find("  64.0 KiB  "), std::string::npos) << lines[3];  // 64 x 16 x 16 floats
  // The pool's element-wise work has a column of its own: 64 x 16 x 16 outputs of 2 x 2 taps.
  const std::size_t vector_ops = lines[1].find("vector ops") + std::string("vector ops").size();
  EXPECT_EQ(lines[3].rfind("65.5 k", vector_ops), vector_ops - std::string("65.5 k").size())
      << lines[3];
  EXPECT_NE(lines[4].find("7.0 KiB of weights, 320.0 KiB of activations"), std::string::npos)
      << lines[4];
}

TEST(LayerTable, ALayerShowsTheFixedMaskItHoldsWithItsWeights) {
  // gpt2_block's causal mask is a fixed constant that attn.masked reads: not a parameter, yet
  // the layer holds it (its PEs the part their blocks read), so inspect shows it.
  const Graph g = load_network("zoo:gpt2_block", {1, 2});
  std::int64_t mask = 0;
  for (NodeId id : g.node_ids())
    if (is_fixed_data(g.node(id))) mask += g.node(id).output.bytes();
  ASSERT_GE(mask, 1 << 20);  // so that the table writes it in MiB
  char mib[32];
  std::snprintf(mib, sizeof mib, "%.2f MiB", static_cast<double>(mask) / (1 << 20));
  const NodeId masked = *g.find("attn.masked");
  EXPECT_EQ(fixed_input_bytes(g, masked), mask);
  EXPECT_EQ(op_cost(g, masked).params, 0);
  EXPECT_EQ(graph_totals(g).fixed_bytes, mask);
  std::istringstream table(layer_table(g));
  std::string row, total;
  for (std::string line; std::getline(table, line);) {
    if (line.rfind("attn.masked ", 0) == 0) row = line;
    total = line;
  }
  EXPECT_NE(row.find(std::string("  ") + mib + "  "), std::string::npos) << row;
  EXPECT_NE(total.find(std::string("and ") + mib + " of fixed constants the layers read"),
            std::string::npos)
      << total;
  const std::string json = graph_json(g);
  EXPECT_NE(json.find("\"total_fixed_bytes\": " + std::to_string(mask)), std::string::npos);
  // A network without such constants says nothing of them.
  EXPECT_EQ(layer_table(load_network("zoo:vgg5", {1, 2})).find("fixed"), std::string::npos);
}

TEST(NetworkYaml, ErrorsNameFileLineAndKey) {
  auto load = [](const std::string& text) { parse_network_yaml(text, "net.yaml"); };
  {
    const auto msg = error_of([&] { load("input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: 4, kernle: 3}\n"); });
    EXPECT_NE(msg.find("net.yaml:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("did you mean 'kernel'"), std::string::npos) << msg;
  }
  {
    const auto msg = error_of([&] { load("input: [1, 3, 8, 8]\nlayers:\n  - {op: convolution}\n"); });
    EXPECT_NE(msg.find("unknown operator 'convolution'"), std::string::npos) << msg;
  }
  {
    const auto msg = error_of([&] { load("input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: four, kernel: 3}\n"); });
    EXPECT_NE(msg.find("net.yaml:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected an integer"), std::string::npos) << msg;
  }
  // yaml-cpp alone reads 010 as octal 8 and 0x10 as 16: a layer of 8 channels from "out: 010".
  for (const std::string out : {"010", "0x10"}) {
    const auto msg = error_of(
        [&] { load("input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: " + out + ", kernel: 3}\n"); });
    EXPECT_NE(msg.find("net.yaml:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("expected an integer, got '" + out + "'"), std::string::npos) << msg;
  }
  {
    const auto msg = error_of([&] { load("input: [1, 3, 8, 8]\nlayers:\n  - {op: add, inputs: [input, nope]}\n"); });
    EXPECT_NE(msg.find("unknown input name 'nope'"), std::string::npos) << msg;
  }
  {
    const auto msg =
        error_of([&] { load("input: [1, 4]\nlayers:\n  - {op: fc, out: 2}\noutputs: [fc1]\n"); });
    EXPECT_NE(msg.find("net.yaml:4:10: outputs: unknown output name 'fc1'"), std::string::npos)
        << msg;
    EXPECT_NE(msg.find("gemm1"), std::string::npos) << msg;  // named by the canonical operator
  }
  {  // A generated name that meets a given one: the layer without a name is told to take one.
    const auto msg = error_of([&] {
      load("input: [1, 4]\nlayers:\n  - {name: relu2, op: sigmoid}\n  - relu\n  - relu\n");
    });
    EXPECT_NE(msg.find("net.yaml:5:5: layers[2].name: duplicate layer name 'relu2', the name "
                       "generated for this unnamed 'relu' layer: give it a name: of its own"),
              std::string::npos)
        << msg;
  }
  // Values no operator can take, a network without outputs, a reshape without a shape: used
  // to load.
  const std::pair<std::string, std::string> nonsense[] = {
      {"input: [1, 4]\nlayers:\n  - {op: clip, min: 5, max: 1}\n",
       "net.yaml:3:5: layers[0]: clip min 5 is above max 1"},
      {"input: [1, 4]\nlayers:\n  - {op: dropout, ratio: 7}\n",
       "dropout ratio 7 is outside [0, 1)"},
      {"input: [1, 4]\nlayers:\n  - {op: batchnorm, epsilon: .nan}\n",
       "net.yaml:3:30: layers[0].epsilon: expected a finite number, got '.nan'"},
      {"input: [1, 4]\nlayers:\n  - relu\noutputs: []\n", "net.yaml:4:10: outputs: no outputs"},
      {"input: [1, 4]\nlayers:\n  - {op: constant, shape: [4], inputs: [input]}\n",
       "net.yaml:3:40: layers[0].inputs: operator 'constant' reads no inputs"},
      {"input: [1, 4]\nlayers:\n  - relu\n---\ninput: [1, 8]\n",
       "net.yaml:5:1: a second YAML document"},
      {"input: [1, 4]\nlayers:\n  - {name: a, op: add, inputs: [input, b]}\n  - {name: b, op: relu}\n",
       "net.yaml:3:32: layers[0].inputs: 'b' is layers[1], not defined yet"},
      {"input: [1, 4]\nlayers:\n  - {name: \"\", op: relu}\n",
       "net.yaml:3:12: layers[0].name: an empty name"},
      {"input: 5\nlayers:\n  - relu\n", "net.yaml:1:8: input: expected a shape, a list"},
      {"input: [1, 4, 8]\nlayers:\n  - {op: reduce_mean, axes: [1, -2]}\n",
       "reduce axis -2 given twice (axes [1,-2])"},
      {"input: [1, 4, 8, 8]\nlayers:\n  - {op: conv_transpose, out: 4, kernel: 2, stride: 4611686018427387904}\n",
       "output size 3.23e+19 is more than 2^53"},
      {"input: [1, 3, 8, 8]\nlayers:\n  - {op: maxpool, kernel: 2, pad: 5}\n",
       "net.yaml:3:35: layers[0].pad: top pad 5 is not smaller than the window's 2"},
      {"input: [1, 16]\nlayers:\n  - reshape\n",
       "net.yaml:3:5: layers[0]: operator 'reshape' needs 'shape'"},
      // A key given twice: both values parse and the reader would take one of them silently.
      {"input: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: 4, kernel: 3, kernel: 5}\n",
       "net.yaml:3:35: key 'kernel' given twice (first at line 3)"},
      {"input: [1, 3, 8, 8]\nlayers:\n  - op: conv\n    out: 4\n    kernel: 3\n    kernel: 5\n",
       "net.yaml:6:5: key 'kernel' given twice (first at line 5)"},
      {"name: a\ninput: [1, 3, 8, 8]\nname: b\nlayers:\n  - {op: conv, out: 4}\n",
       "net.yaml:3:1: key 'name' given twice (first at line 1)"}};
  for (const auto& [text, expected] : nonsense) {
    const auto msg = error_of([&] { load(text); });
    EXPECT_NE(msg.find(expected), std::string::npos) << msg;
  }
  {
    const auto msg = error_of([&] {
      load("inputs: {a: [1, 3, 8, 8], b: [1, 4, 8, 8]}\nlayers:\n  - {name: s, op: add, inputs: [a, b]}\n");
    });
    EXPECT_NE(msg.find("net.yaml:3:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("[1,3,8,8] and [1,4,8,8]"), std::string::npos) << msg;
  }
  {
    const auto msg = error_of(
        [&] { load("elem_bytes: 0\ninput: [1, 3, 8, 8]\nlayers:\n  - {op: conv, out: 4}\n"); });
    EXPECT_NE(msg.find("net.yaml:1:"), std::string::npos) << msg;
    EXPECT_NE(msg.find("elem_bytes: expected bytes per element in 1..64"), std::string::npos)
        << msg;
  }
}

TEST(NetworkYaml, OnlyZooNetworksTakeABatchSize) {
  const std::string file = kConfigs + "vgg5.yaml";  // batch 1
  EXPECT_EQ(load_network(file, {1, 2}).node(0).output.shape,
            load_network(file, {0, 2}).node(0).output.shape);
  const auto msg = error_of([&] { load_network(file, {2, 2}); });
  EXPECT_NE(msg.find("vgg5.yaml: batch 2: input 'input' has shape [1,3,32,32]; only zoo "
                     "networks take a batch size"),
            std::string::npos)
      << msg;
  EXPECT_EQ(load_network("zoo:vgg5", {2, 2}).node(0).output.shape[0], 2);
  EXPECT_EQ(load_network("zoo:vgg5", {0, 2}).node(0).output.shape[0], 1);  // not given
}

// A leading dimension written `batch` is left open: --batch sets it (default 1), and every
// shape after it follows; elsewhere the word is refused where it is written.
TEST(NetworkYaml, AnInputsLeadingBatchTakesTheBatchGiven) {
  const std::string text =
      "input: [batch, 3, 8, 8]\nlayers:\n  - {op: conv, out: 4, kernel: 3, pad: 1}\n"
      "  - {op: reshape, shape: [0, -1]}\n  - {op: gemm, out: 10}\n";
  const Graph one = parse_network_yaml(text, "net.yaml");
  const Graph three = parse_network_yaml(text, "net.yaml", 3);
  EXPECT_EQ(one.node(0).output.shape, (std::vector<std::int64_t>{1, 3, 8, 8}));
  EXPECT_EQ(three.node(0).output.shape, (std::vector<std::int64_t>{3, 3, 8, 8}));
  const auto last = [](const Graph& g) { return g.node(g.outputs().front()).output.shape; };
  EXPECT_EQ(last(one), (std::vector<std::int64_t>{1, 10}));
  EXPECT_EQ(last(three), (std::vector<std::int64_t>{3, 10}));
  const auto msg = error_of([] { parse_network_yaml("input: [1, batch, 8]\nlayers:\n  - relu\n", "net.yaml", 2); });
  EXPECT_NE(msg.find("net.yaml:1:12: input: only the leading dimension can be 'batch'"), std::string::npos) << msg;
  // A reshape that names a number where the open batch goes would fold it into the features at
  // --batch 4 ([1, 4 x 256]); one input open beside a fixed one would broadcast against it.
  const auto folded = error_of([] {
    parse_network_yaml("input: [batch, 4, 8, 8]\nlayers:\n  - {op: reshape, shape: [1, -1]}\n", "net.yaml", 4);
  });
  EXPECT_NE(folded.find("net.yaml:3:26: layers[0].shape: the network's batch is open (input: [batch, ...]): write "
                        "the leading dimension 0 (copy), -1 (infer) or batch, not 1"),
            std::string::npos)
      << folded;
  const auto flat = error_of([] {
    parse_network_yaml("input: [batch, 4, 8, 8]\nlayers:\n  - {op: flatten, axis: 0}\n", "net.yaml", 4);
  });
  EXPECT_NE(flat.find("layers[0].axis: the network's batch is open (input: [batch, ...]): flattening from axis 0"),
            std::string::npos)
      << flat;
  // A transpose that moves the open batch would leave a later reshape's `batch` (or 0) on
  // another axis: refused, wherever the batch goes.
  for (const std::string layer : {"{op: transpose, perm: [1, 0, 2, 3]}",
                                   "{op: transpose, perm: [3, 1, 2, 0]}", "transpose"}) {
    const auto moved = error_of([&] {
      parse_network_yaml("input: [batch, 4, 8, 8]\nlayers:\n  - " + layer +
                             "\n  - {op: reshape, shape: [batch, -1]}\n",
                         "net.yaml", 2);
    });
    EXPECT_NE(moved.find(std::string("net.yaml:3:") + (layer == "transpose" ? "5" : "27") +
                         ": layers[0].perm: the network's batch is open (input: [batch, ...]): a "
                         "transpose must keep it leading"),
              std::string::npos)
        << moved;
  }
  const Graph kept = parse_network_yaml(
      "input: [batch, 4, 8, 8]\nlayers:\n  - {op: transpose, perm: [0, 2, 3, 1]}\n", "net.yaml", 2);
  EXPECT_EQ(kept.node(kept.outputs().front()).output.shape,
            (std::vector<std::int64_t>{2, 8, 8, 4}));
  const Graph fixed = parse_network_yaml(
      "input: [2, 4, 8, 8]\nlayers:\n  - {op: transpose, perm: [1, 0, 2, 3]}\n", "net.yaml");
  EXPECT_EQ(fixed.node(fixed.outputs().front()).output.shape,
            (std::vector<std::int64_t>{4, 2, 8, 8}));
  const Graph named = parse_network_yaml(
      "input: [batch, 4, 8, 8]\nlayers:\n  - {op: reshape, shape: [batch, -1]}\n", "net.yaml", 4);
  EXPECT_EQ(named.node(named.outputs().front()).output.shape, (std::vector<std::int64_t>{4, 256}));
  // Only a reshape must carry an open batch: a constant's shape is its own.
  const Graph bias = parse_network_yaml(
      "input: [batch, 4]\nlayers:\n  - {name: c, op: constant, shape: [1, 4]}\n"
      "  - {name: s, op: add, inputs: [input, c]}\n",
      "net.yaml", 3);
  EXPECT_EQ(bias.node(*bias.find("s")).output.shape, (std::vector<std::int64_t>{3, 4}));
  // Inputs that fix their batch leave `batch` nothing to name: it read --batch's default 1, so
  // [4, ...] reshaped to [batch, -1] became [1, 1024] (another network than at --batch 4).
  for (const int batch : {0, 4}) {
    const auto unnamed = error_of([&] {
      parse_network_yaml("input: [4, 4, 8, 8]\nlayers:\n  - {op: reshape, shape: [batch, -1]}\n",
                         "net.yaml", batch);
    });
    EXPECT_NE(unnamed.find("net.yaml:3:26: layers[0].shape: 'batch' stands for an open batch "
                           "(input: [batch, ...]), and this network's inputs fix theirs"),
              std::string::npos)
        << unnamed;
  }
  const auto mixed = error_of([] {
    parse_network_yaml("inputs:\n  a: [batch, 4]\n  b: [1, 4]\nlayers:\n  - {op: add, inputs: [a, b]}\n",
                       "net.yaml", 4);
  });
  EXPECT_NE(mixed.find("net.yaml:3:6: inputs.b: the inputs' leading dimensions must all be 'batch' or all be numbers"),
            std::string::npos)
      << mixed;
}

TEST(NetworkYaml, HardSigmoidAndLeakyReluTakeTheirSlopes) {
  const Graph g = parse_network_yaml(
      "name: act\ninputs:\n  x: [1, 8, 4, 4]\nlayers:\n"
      "  - {name: hs, op: hard_sigmoid, beta: 0.25}\n"
      "  - {name: hsw, op: hard_swish}\n"
      "  - {name: lr, op: leaky_relu, alpha: 0.2}\n",
      "act.yaml");
  EXPECT_EQ(g.node(*g.find("hs")).attrs.alpha, 0.2);  // ONNX's default
  EXPECT_EQ(g.node(*g.find("hs")).attrs.beta, 0.25);
  EXPECT_EQ(g.node(*g.find("lr")).attrs.alpha, 0.2);
  EXPECT_EQ(g.node(*g.find("lr")).output.shape, (Shape{1, 8, 4, 4}));
  EXPECT_EQ(op_cost(g, *g.find("hsw")).vector_ops, 8 * 4 * 4);
  const std::string msg = error_of([] {
    parse_network_yaml("inputs:\n  x: [1, 8]\nlayers:\n  - {op: leaky_relu, beta: 1}\n",
                       "bad.yaml");
  });
  EXPECT_NE(msg.find("beta"), std::string::npos) << msg;
}

// An imported bias, scale or weight matrix arrives as a trainable Constant that an Add, Mul or
// MatMul reads: every reader holds it (its PEs keep it); its first reader counts its parameters,
// and the totals count them once.
TEST(NetworkYaml, LayersHoldTheTrainableConstantsTheyRead) {
  const Graph g = parse_network_yaml(
      "name: held\ninputs:\n  x: [2, 16, 32]\nlayers:\n"
      "  - {name: w, op: constant, shape: [32, 64], trainable: true}\n"
      "  - {name: b, op: constant, shape: [64], trainable: true}\n"
      "  - {name: mask, op: constant, shape: [64]}\n"
      "  - {name: y, op: matmul, inputs: [x, w]}\n"
      "  - {name: y1, op: add, inputs: [y, b]}\n"
      "  - {name: y2, op: add, inputs: [y1, b]}\n"
      "  - {name: out, op: mul, inputs: [y2, mask]}\n",
      "held.yaml");
  auto held = [&](const char* name) { return op_cost(g, *g.find(name)); };
  EXPECT_EQ(held("y").params, 32 * 64);
  EXPECT_EQ(held("y").weight_bytes, 32 * 64 * 4);
  EXPECT_EQ(held("y1").params, 64);
  EXPECT_EQ(held("y2").weight_bytes, 64 * 4);         // b's second reader keeps it too ...
  EXPECT_EQ(held("y2").params, 0);                    // ... but counts no parameter twice
  EXPECT_EQ(held("out").params, 0);                   // not trainable: not a parameter
  EXPECT_EQ(held("y").input_bytes, 2 * 16 * 32 * 4);  // the weights are not activations
  const GraphTotals t = graph_totals(g);
  EXPECT_EQ(t.params, 32 * 64 + 64);
  EXPECT_EQ(t.weight_bytes, (32 * 64 + 64) * 4);
}

TEST(ShapeInference, MismatchNamesNodeAndBothShapes) {
  GraphBuilder b("bad");
  const NodeId x = b.input({1, 8, 4, 4});
  b.matmul(b.reshape(x, {1, 8, 16}, "r"), b.reshape(x, {1, 8, 16}, "r2"), "mm");
  const auto msg = error_of([&] { b.finish(); });
  EXPECT_NE(msg.find("node 'mm'"), std::string::npos) << msg;
  EXPECT_NE(msg.find("[1,8,16] x [1,8,16]"), std::string::npos) << msg;
}

TEST(ShapeInference, CycleNamesANodeOnIt) {
  Graph g("loop");
  OpAttrs in;
  in.shape = {1, 4};
  const NodeId x = g.add_node(Node{"x", OpKind::Input, in, {}});
  const NodeId a = g.add_node(Node{"a", OpKind::Add, {}, {}}, {x, x});
  const NodeId r = g.add_node(Node{"r", OpKind::Relu, {}, {}}, {a});
  g.set_input(a, 1, r);  // a reads r, r reads a
  const auto msg = error_of([&] { infer_shapes(g); });
  EXPECT_NE(msg.find("cycle through node"), std::string::npos) << msg;
  EXPECT_TRUE(msg.find("'a'") != std::string::npos || msg.find("'r'") != std::string::npos) << msg;
}

TEST(ShapeInference, ConvPoolAndDepthwiseRules) {
  GraphBuilder b("rules");
  const NodeId x = b.input({2, 32, 15, 15});
  const NodeId dw = b.conv(x, 32, 3, 2, 1, 32, false, "dw");
  const NodeId pool = b.maxpool(x, 3, 2, 0, true, "pool");  // ceil: 7
  const Graph g = b.finish();
  EXPECT_EQ(g.node(dw).output.shape, (Shape{2, 32, 8, 8}));
  EXPECT_EQ(g.node(pool).output.shape, (Shape{2, 32, 7, 7}));
  EXPECT_EQ(op_cost(g, dw).macs, 2 * 32 * 8 * 8 * 9);
  EXPECT_FALSE(legal_part_dims(g, dw).contains(PartDim::Inpp));  // depthwise: nothing to reduce
  EXPECT_TRUE(legal_part_dims(g, dw).contains(PartDim::Batch));
}

class OnnxTotals : public ::testing::TestWithParam<const char*> {};

TEST_P(OnnxTotals, MatchTheZooWithinOnePercent) {
  // Exported by scripts/export_onnx.py with weights stripped to absent external data.
  const std::string name = GetParam();
  const Graph g = load_network(kData + name + ".onnx");
  EXPECT_EQ(g.name(), name);  // the file's stem: every PyTorch export is named torch_jit
  const GraphTotals onnx = graph_totals(g);
  const GraphTotals zoo = graph_totals(load_network("zoo:" + name));
  EXPECT_NEAR(static_cast<double>(onnx.macs), static_cast<double>(zoo.macs), 0.01 * static_cast<double>(zoo.macs));
  EXPECT_NEAR(static_cast<double>(onnx.params), static_cast<double>(zoo.params), 0.01 * static_cast<double>(zoo.params));
}

INSTANTIATE_TEST_SUITE_P(Torchvision, OnnxTotals,
                         ::testing::Values("resnet18", "resnet50", "mobilenet_v2", "googlenet"));

TEST(Onnx, GoogLeNetConcatBranchesImport) {
  const Graph g = load_network(kData + "googlenet.onnx");
  int concats = 0;
  for (NodeId id : g.node_ids())
    if (g.node(id).kind == OpKind::Concat) {
      ++concats;
      EXPECT_EQ(g.inputs(id).size(), 4u);
    }
  EXPECT_EQ(concats, 9);  // inception 3a-3b, 4a-4e, 5a-5b, each joining its 4 branches
}

TEST(Onnx, UnreadableAndMissingFilesAreInputErrors) {
  EXPECT_NE(error_of([&] { load_network(kConfigs + "vgg5.onnx"); })
                .find("vgg5.onnx: cannot read the network: no such file"),
            std::string::npos);
  // A folder is named as one (it used to fail as a file with no 'layers' or no protobuf).
  for (const char* name : {"folder.yaml", "folder.onnx", "folder"}) {  // whatever its name
    const std::filesystem::path dir = nocflow::testing::scratch_path(name);
    std::filesystem::create_directories(dir);
    EXPECT_NE(error_of([&] { load_network(dir.string()); })
                  .find(dir.string() + ": cannot read the network: it is a directory"),
              std::string::npos)
        << name;
  }
  // A YAML file is not a protobuf model.
  const std::string tmp = nocflow::testing::scratch_path("garbage.onnx").string();
  { std::ofstream(tmp) << "this is not a model\n"; }
  EXPECT_NE(error_of([&] { load_network(tmp); }).find("not a readable ONNX model"), std::string::npos);
}

}  // namespace
}  // namespace nocflow::optimizer
