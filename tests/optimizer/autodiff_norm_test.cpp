// SPDX-License-Identifier: MIT
// Autodiff of the norms: their parameter gradient holds the scale's and the shift's, as many
// values as the update that reads it writes; a layer norm without a shift has one of each.
#include <gtest/gtest.h>

#include "noc/base/error.h"
#include "optimizer/frontend/network_yaml.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/passes/autodiff.h"

namespace nocflow::optimizer {
namespace {

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (std::int64_t d : s) n *= d;
  return n;
}

TEST(Autodiff, ANormsParameterGradientIsAsLargeAsTheParametersItUpdates) {
  for (const bool shift : {true, false}) {
    const Graph g = parse_network_yaml(
        std::string("input: [2, 4, 5, 6]\nlayers:\n  - {name: bn, op: bn}\n  - relu\n"
                    "  - {name: ln, op: layernorm, shift: ") +  // over the last axis: 6 values
            (shift ? "true" : "false") +
            "}\n",
        "norms.yaml");
    EXPECT_EQ(op_cost(g, *g.find("bn")).params, 2 * 4);
    EXPECT_EQ(op_cost(g, *g.find("ln")).params, (shift ? 2 : 1) * 6);
    const Graph t = training_graph(g);
    for (const char* layer : {"bn", "ln"}) {
      const std::string name(layer);
      const Shape& grad = t.node(*t.find(name + ".wgrad")).output.shape;
      const NodeId update = *t.find(name + ".update");
      // The update writes every parameter, and the gradient it reads holds one value for each:
      // the norm's two kinds side by side on the leading axis.
      EXPECT_EQ(t.node(update).attrs.params, op_cost(g, *g.find(name)).params) << name;
      EXPECT_EQ(numel(grad), t.node(update).attrs.params) << name << " " << shape_str(grad);
    }
    EXPECT_EQ(t.node(*t.find("bn.wgrad")).output.shape, (Shape{2, 4, 1, 1}));
    EXPECT_EQ(t.node(*t.find("ln.wgrad")).output.shape, (Shape{shift ? 2 : 1, 1, 1, 6}));
  }
}

// A layer norm over every axis leaves no axis for its shift's gradient beside the scale's: its
// parameter gradient is the scale's, of the input's shape (a batch of 3, so that a 2 shows).
TEST(Autodiff, ALayerNormOverEveryAxisHasNoAxisForTwoGradients) {
  const Graph g = parse_network_yaml(
      "input: [3, 4, 5, 6]\nlayers:\n  - {name: ln, op: layernorm, axis: 0}\n", "all.yaml");
  const Graph t = training_graph(g);
  EXPECT_EQ(t.node(*t.find("ln.wgrad")).output.shape, (Shape{3, 4, 5, 6}));
}

// The two gradients of a norm's parameters must each broadcast to dY: a shape wider than dY
// is refused, where broadcasting alone would widen the result.
TEST(Autodiff, ANormsParameterGradientWiderThanDyIsRefused) {
  OpAttrs a;
  a.grad_of = OpKind::BatchNorm;
  a.grad_input = 1;
  a.shape = {2, 4, 3, 1};
  const Tensor dy{{2, 4, 1, 1}, 4, std::nullopt};
  EXPECT_THROW(infer_output(OpKind::Grad, a, {&dy}), InputError);
  a.shape = {2, 4, 1, 1};
  EXPECT_EQ(infer_output(OpKind::Grad, a, {&dy}).shape, (Shape{2, 4, 1, 1}));
}

}  // namespace
}  // namespace nocflow::optimizer
