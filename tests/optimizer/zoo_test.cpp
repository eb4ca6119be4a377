// SPDX-License-Identifier: MIT
// Zoo totals against the published reference figures (torchvision model cards, BERT/GPT-2).
#include <gtest/gtest.h>

#include "noc/base/error.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/graph/op_cost.h"

namespace nocflow::optimizer {
namespace {

struct Published {
  const char* name;
  double gmacs;
  double mparams;
};

class ZooTotals : public ::testing::TestWithParam<Published> {};

TEST_P(ZooTotals, WithinTwoPercentOfPublished) {
  const Published p = GetParam();
  const Graph g = zoo_network(p.name);
  const GraphTotals t = graph_totals(g);
  const double gmacs = static_cast<double>(t.macs) / 1e9;
  const double mparams = static_cast<double>(t.params) / 1e6;
  EXPECT_NEAR(gmacs, p.gmacs, 0.02 * p.gmacs) << p.name;
  EXPECT_NEAR(mparams, p.mparams, 0.02 * p.mparams) << p.name;
}

INSTANTIATE_TEST_SUITE_P(Published, ZooTotals,
                         ::testing::Values(Published{"resnet50", 4.09, 25.6},
                                           Published{"vgg16", 15.5, 138.0},
                                           Published{"resnet18", 1.81, 11.7},
                                           Published{"mobilenet_v2", 0.30, 3.5},
                                           Published{"alexnet", 0.71, 61.0},
                                           Published{"googlenet", 1.50, 6.6}),
                         [](const auto& info) { return std::string(info.param.name); });

TEST(Zoo, TransformerBlocksHaveTheKnownParameterCount) {
  // One encoder layer of BERT-base and one GPT-2 small block: 7,087,872 parameters each.
  EXPECT_EQ(graph_totals(zoo_network("bert_base_layer")).params, 7'087'872);
  EXPECT_EQ(graph_totals(zoo_network("gpt2_block")).params, 7'087'872);
}

TEST(Zoo, TransformerMacsFollowTheFormula) {
  // Linear layers S·(4·768² + 2·768·3072) plus two attention matmuls 2·12·S²·64.
  auto expected = [](std::int64_t s) {
    return s * (4 * 768 * 768 + 2 * 768 * 3072) + 2 * 12 * s * s * 64;
  };
  EXPECT_EQ(graph_totals(zoo_network("bert_base_layer")).macs, expected(128));
  EXPECT_EQ(graph_totals(zoo_network("gpt2_block")).macs, expected(1024));
}

TEST(Zoo, Vgg5HasTheDocumentedShapes) {
  const Graph g = zoo_network("vgg5");
  EXPECT_EQ(g.node(*g.find("conv1")).output.shape, (Shape{1, 64, 32, 32}));
  EXPECT_EQ(g.node(*g.find("conv3")).output.shape, (Shape{1, 128, 16, 16}));
  EXPECT_EQ(g.node(*g.find("conv5")).output.shape, (Shape{1, 256, 8, 8}));
  // 3·3·(3·64·32² + 64·64·32² + 64·128·16² + 128·128·16² + 128·256·8²)
  EXPECT_EQ(graph_totals(g).macs, 9LL * (3 * 64 * 1024 + 64 * 64 * 1024 + 64 * 128 * 256 +
                                         128 * 128 * 256 + 128 * 256 * 64));
}

TEST(Zoo, BatchScalesMacsNotParams) {
  const GraphTotals one = graph_totals(zoo_network("resnet18"));
  const GraphTotals four = graph_totals(zoo_network("resnet18", {4, 4}));
  EXPECT_EQ(four.macs, 4 * one.macs);
  EXPECT_EQ(four.params, one.params);
}

TEST(Zoo, UnknownNameListsKnownOnes) {
  try {
    zoo_network("resnet51");
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("did you mean 'resnet50'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nocflow::optimizer
