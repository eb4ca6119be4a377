// SPDX-License-Identifier: MIT
// Canonicalising clean-ups: identity/no-op elimination and constant folding of shape arithmetic.
#include <algorithm>
#include <cmath>

#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_rules.h"
#include "optimizer/graph/tensor_walk.h"
#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {
namespace {

/// Removes operators that return their input unchanged: Identity, Dropout (nocflow graphs are
/// inference graphs), Reshape/Flatten/Expand to the same shape, a Slice of everything,
/// Transpose by the identity permutation, Concat of one input.
class IdentityElimination final : public Pass {
 public:
  std::string_view name() const override { return "identity"; }
  std::string_view description() const override { return "remove identity and no-op operators"; }

  bool run(Graph& g) override {
    bool changed = false;
    for (NodeId id : g.topological_order()) {
      // An output whose input is an output too stays: each output keeps its own name.
      if (!is_noop(g, id) || (g.is_output(id) && g.is_output(g.input(id, 0)))) continue;
      forward_value(g, id, g.input(id, 0));
      if (g.contains(id)) g.remove_node(id);
      changed = true;
    }
    return changed;
  }

 private:
  static bool is_noop(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    switch (n.kind) {
      case OpKind::Identity:
      case OpKind::Dropout: return true;
      case OpKind::Reshape:
      case OpKind::Flatten: return n.output.shape == g.node(g.input(id, 0)).output.shape;
      case OpKind::Transpose:
        for (std::size_t i = 0; i < n.attrs.perm.size(); ++i)
          if (n.attrs.perm[i] != static_cast<std::int64_t>(i)) return false;
        return !n.attrs.perm.empty() || n.output.shape.size() <= 1;
      case OpKind::Concat: return g.inputs(id).size() == 1;
      case OpKind::Expand:
      case OpKind::Slice:  // of the whole tensor (`x[:, :]`)
        return n.output.shape == g.node(g.input(id, 0)).output.shape;
      default: return false;
    }
  }
};

/// Folds shape arithmetic: a deterministic operator whose output value shape inference already
/// knows becomes a Constant holding it, and so does one that reads only constants that are not
/// learned and has no learned parameters of its own (Swin's attention scale, head_dim ** -0.5:
/// a value no PE need compute at run time; a Gemm or LayerNorm of a fixed table stays a layer,
/// whose weights training updates). Such a constant keeps its float values when they are small
/// and the operator element-wise arithmetic (fixed_values), as algebra would have had them: it
/// runs after this pass, and x + 3 · 0 is x only if 3 · 0 is known to be 0. A Reshape,
/// Unsqueeze or Squeeze reading a constant shape or axes takes it as an attribute. The nodes
/// this leaves unused are DCE's.
///
/// On tensors of run time, which are layers, the shape operators become the data movement the
/// optimizer partitions: Squeeze and Unsqueeze a Reshape to their output shape, and a Gather of
/// one constant index (a ViT's class token, `x[:, 0]`) a Slice of that index and a Reshape.
class ConstantFolding final : public Pass {
 public:
  /// A folded constant keeps at most this many computed float values (as the ONNX importer
  /// keeps a computed tensor's).
  static constexpr std::int64_t kMaxFoldedValues = 4096;

  std::string_view name() const override { return "constfold"; }
  std::string_view description() const override { return "fold shape arithmetic into constants"; }

  bool run(Graph& g) override {
    bool changed = false;
    for (NodeId id : g.topological_order()) {
      Node& n = g.node(id);
      if ((n.output.value || of_fixed_constants(g, id)) && n.kind != OpKind::Constant &&
          n.kind != OpKind::Input && op_info(n.kind).deterministic) {
        OpAttrs a;
        a.shape = n.output.shape;
        a.elem_bytes = n.output.elem_bytes;
        if (n.output.value)
          a.int_data = *n.output.value;
        else
          a.float_data = fixed_values(g, id);
        n.kind = OpKind::Constant;
        n.attrs = a;
        g.set_inputs(id, {});
        changed = true;
        continue;
      }
      if ((n.kind == OpKind::Slice || n.kind == OpKind::Resize) && g.inputs(id).size() > 1) {
        // Shape inference already took the operands' values into the attributes (a Slice's
        // axis, offset and shape; a Resize's sizes).
        const std::vector<NodeId> ins = g.inputs(id);
        if (!std::all_of(ins.begin() + 1, ins.end(),
                         [&](NodeId in) { return g.node(in).kind == OpKind::Constant; }))
          continue;
        for (auto i = static_cast<int>(ins.size()) - 1; i > 0; --i) g.remove_input(id, i);
        changed = true;
        continue;
      }
      if ((n.kind == OpKind::Squeeze || n.kind == OpKind::Unsqueeze) && !n.output.value) {
        n.kind = OpKind::Reshape;
        n.attrs.shape = n.output.shape;
        n.attrs.axes.clear();
        while (g.inputs(id).size() > 1) g.remove_input(id, 1);
        changed = true;
        continue;
      }
      if (n.kind == OpKind::Gather && !n.output.value && gather_as_slice(g, id)) {
        changed = true;
        continue;
      }
      const bool takes_operand = (n.kind == OpKind::Reshape || n.kind == OpKind::Unsqueeze ||
                                  n.kind == OpKind::Squeeze) && g.inputs(id).size() == 2;
      if (!takes_operand) continue;
      const Node& operand = g.node(g.input(id, 1));
      if (operand.kind != OpKind::Constant || !operand.output.value) continue;
      if (n.kind == OpKind::Reshape)
        n.attrs.shape = *operand.output.value;
      else
        n.attrs.axes = *operand.output.value;
      g.remove_input(id, 1);
      changed = true;
    }
    return changed;
  }

 private:
  /// Whether node `id` has inputs, they are all constants that are not learned, and it holds
  /// no learned parameters of its own (a Conv's, Gemm's or normalisation's weights are
  /// attributes, not inputs: the layer must stay, for its parameters to count and be trained;
  /// nor do weight updates and input gradients, which hold weights, fold).
  static bool of_fixed_constants(const Graph& g, NodeId id) {
    const auto ins = g.inputs(id);
    if (ins.empty() || !std::all_of(ins.begin(), ins.end(), [&](NodeId in) {
          const Node& k = g.node(in);
          return k.kind == OpKind::Constant && !k.attrs.trainable;
        }))
      return false;
    const OpCost c = own_cost(g, id);
    return c.params == 0 && c.weight_bytes == 0;
  }

  /// The values of element-wise arithmetic on constants whose float values are all known, when
  /// the result has at most kMaxFoldedValues elements (rounded to float for 4-byte elements,
  /// as the ONNX importer computes FLOAT tensors); empty otherwise.
  static std::vector<double> fixed_values(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    const bool binary = n.kind == OpKind::Add || n.kind == OpKind::Sub ||
                        n.kind == OpKind::Mul || n.kind == OpKind::Div || n.kind == OpKind::Pow;
    const bool unary = n.kind == OpKind::Sqrt || n.kind == OpKind::Exp;
    const auto ins = g.inputs(id);
    const Shape& out = n.output.shape;
    if ((!binary && !unary) || n.output.numel() > kMaxFoldedValues) return {};
    std::vector<std::vector<double>> walked;  // each operand broadcast to the output
    for (NodeId in : ins) {
      const Node& k = g.node(in);
      if (static_cast<std::int64_t>(k.attrs.float_data.size()) != k.output.numel() ||
          k.output.shape.size() > out.size())
        return {};
      walked.push_back(walk(k.attrs.float_data, broadcast_offsets(k.output.shape, out)));
    }
    std::vector<double> v(static_cast<std::size_t>(n.output.numel()));
    for (std::size_t i = 0; i < v.size(); ++i) {
      const double p = walked[0][i], q = binary ? walked[1][i] : 0;
      switch (n.kind) {
        case OpKind::Add: v[i] = p + q; break;
        case OpKind::Sub: v[i] = p - q; break;
        case OpKind::Mul: v[i] = p * q; break;
        case OpKind::Div: v[i] = p / q; break;
        case OpKind::Pow: v[i] = std::pow(p, q); break;
        case OpKind::Sqrt: v[i] = std::sqrt(p); break;
        default: v[i] = std::exp(p); break;
      }
      if (n.output.elem_bytes == 4) v[i] = static_cast<float>(v[i]);
    }
    return v;
  }

  /// A Gather of one constant index along its axis: a Slice of that index, then a Reshape to the
  /// Gather's output. False (nothing changed) for any other index.
  static bool gather_as_slice(Graph& g, NodeId id) {
    const Node& index = g.node(g.input(id, 1));
    if (index.kind != OpKind::Constant || !index.output.value || index.output.value->size() != 1)
      return false;
    const NodeId data = g.input(id, 0);
    const Shape& in = g.node(data).output.shape;
    const std::size_t axis = shape_rules::norm_axis(g.node(id).attrs.axis, in.size());
    std::int64_t i = index.output.value->front();
    if (i < 0) i += in[axis];
    OpAttrs s;
    s.axis = static_cast<std::int64_t>(axis);
    s.offset = i;
    s.shape = in;
    s.shape[axis] = 1;
    const std::string name = g.node(id).name;
    const NodeId slice =
        g.add_node(Node{g.unique_name(name + ".slice"), OpKind::Slice, s, {}}, {data});
    Node& n = g.node(id);
    n.kind = OpKind::Reshape;
    n.attrs = OpAttrs{};
    n.attrs.shape = n.output.shape;
    g.set_inputs(id, {slice});
    return true;
  }
};

}  // namespace

std::unique_ptr<Pass> make_identity_elimination() { return std::make_unique<IdentityElimination>(); }
std::unique_ptr<Pass> make_constant_folding() { return std::make_unique<ConstantFolding>(); }

}  // namespace nocflow::optimizer
