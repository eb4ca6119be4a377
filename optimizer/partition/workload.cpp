// SPDX-License-Identifier: MIT
#include "optimizer/partition/workload.h"

#include <numeric>
#include <unordered_map>

#include "noc/base/error.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/relayout.h"

namespace nocflow::optimizer {
namespace {

bool windowed(OpKind k) {
  return k == OpKind::Conv || k == OpKind::ConvTransposeGradInput || k == OpKind::MaxPool ||
         k == OpKind::AvgPool;
}

/// The view axis of an operator's output that holds its output channels, which the MAC array's
/// rows take (workload.h, array_rows_axis): a product's features are its last axis, the view's C
/// up to rank 3 and W beyond (attention's N×h×S×E scores: E, not the heads).
int array_rows_axis(OpKind kind, const Shape& out) {
  const bool product =
      kind == OpKind::Gemm || kind == OpKind::MatMul || kind == OpKind::GemmGradInput;
  return product && out.size() >= 4 ? kW : kC;
}

/// The window an operator's outputs each meet (kernel, stride), if it has one.
bool take_window(Layer& l, OpKind kind, const OpAttrs& a) {
  if (windowed(kind)) {
    l.kernel = a.kernel;
    l.stride = a.stride;
    return true;
  }
  if (kind == OpKind::ConvGradInput || kind == OpKind::ConvTranspose ||
      (kind == OpKind::PoolGrad && a.kernel != std::array<std::int64_t, 2>{1, 1})) {
    // A transposed window: output o meets the taps r with r·d ≡ o + pad (mod s), one in every
    // s / gcd(s, d) consecutive taps where any: at most ⌈k / (s / gcd(s, d))⌉ per axis (⌈k/s⌉
    // undilated; s = d = 2: all k taps on every other row, none between).
    for (int i = 0; i < 2; ++i) {
      const std::int64_t period = a.stride[i] / std::gcd(a.stride[i], a.dilation[i]);
      l.kernel[i] = (a.kernel[i] + period - 1) / period;
    }
    return true;
  }
  return false;
}

/// The reduction and window of the layer's operator (of a fused layer's head), and what a fused
/// layer's tail costs on its own: its vector ops and the weights it holds (an unfolded
/// BatchNorm's, trainable constants a tail part reads such as PRelu slopes).
void fill_op_details(Layer& l, const Graph& g, NodeId id, const std::vector<const Tensor*>& in) {
  const Node& n = g.node(id);
  if (n.kind != OpKind::Fused) {
    l.reduction = reduction_size(n.kind, n.attrs, in);
    l.array_rows_axis = array_rows_axis(n.kind, n.output.shape);
    take_window(l, n.kind, n.attrs);
    return;
  }
  bool window_found = false;
  for (std::size_t p = 0; p < n.attrs.parts.size(); ++p) {
    const FusedPart& part = n.attrs.parts[p];
    std::vector<const Tensor*> pin;
    for (const Tensor& t : part.inputs) pin.push_back(&t);
    if (p == 0) {
      l.reduction = reduction_size(part.kind, part.attrs, pin);
      l.array_rows_axis = array_rows_axis(part.kind, part.output.shape);
    } else {
      const OpCost tail = op_cost(part.kind, part.attrs, pin, part.output);
      l.tail_vector_ops += tail.vector_ops;
      l.tail_weight_bytes += tail.params * n.output.elem_bytes;
    }
    if (!window_found) window_found = take_window(l, part.kind, part.attrs);
  }
  for (std::size_t i = 0; i < in.size(); ++i)
    if (const Node& k = g.node(g.input(id, static_cast<int>(i)));
        k.kind == OpKind::Constant && k.attrs.trainable &&
        fused_part_of_input(n, static_cast<int>(i)) > 0)
      l.tail_weight_bytes += k.output.bytes();
}

/// Each input slot's bytes the layer reads and the dimensions that split them: a dimension splits
/// an input when half the output along it (or half the reduction, for INPP) needs less of the
/// input. A fixed constant (a mask) is split the same way, so that a PE holds the part its block
/// reads.
std::vector<Layer::Input> layer_inputs(const Graph& g, NodeId id, const Dims4& out,
                                       std::int64_t reduction) {
  const auto inputs = g.inputs(id);
  std::vector<Layer::Input> result(inputs.size());
  const Box whole = full_box(out);
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Node& src = g.node(inputs[i]);
    Layer::Input& in = result[i];
    in.elem_bytes = src.output.elem_bytes;
    const int slot = static_cast<int>(i);
    const bool fixed = holds_fixed_data(g, id, slot);  // held with the weights (a mask)
    if (src.kind == OpKind::Constant && !fixed)
      continue;  // a parameter (op_cost's weight bytes), a shape operand, a single value or zeros
    // What the whole layer reads of it: all but the rows a strided window or Slice skips.
    const std::int64_t all = input_region(g, id, slot, whole, {0, reduction}).volume();
    (fixed ? in.held_bytes : in.bytes) = all * in.elem_bytes;
    for (PartDim d : kAllPartDims) {
      const bool inpp = d == PartDim::Inpp;
      const int axis = static_cast<int>(d);  // BATCH..OFMP_W are view axes N..W
      if (inpp ? reduction < 2 : out[axis] < 2) continue;
      Box half = whole;
      Range red{0, reduction};
      if (inpp)
        red.hi = reduction / 2;
      else
        half.r[axis].hi = out[axis] / 2;
      if (input_region(g, id, slot, half, red).volume() < all) in.splits.insert(d);
    }
  }
  return result;
}

}  // namespace

Workload build_workload(const Graph& g) {
  Workload w;
  w.graph = &g;
  std::unordered_map<NodeId, int> index;
  const ParameterOwners owners(g);
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    Layer l;
    l.id = id;
    l.name = n.name;
    l.op = n.op_label();
    l.out = view4(n.output.shape);
    const OpCost c = op_cost(g, id, owners);
    l.macs = c.macs;
    l.vector_ops = c.vector_ops;
    l.weight_bytes = c.weight_bytes;
    l.weights_like_output = n.kind == OpKind::WeightUpdate;
    l.lookup = n.kind == OpKind::Gather && g.node(g.input(id, 0)).kind == OpKind::Constant;
    l.output_bytes = c.output_bytes;
    l.elem_bytes = n.output.elem_bytes;
    std::vector<const Tensor*> in;
    for (NodeId src : g.inputs(id)) in.push_back(&g.node(src).output);
    if (n.kind == OpKind::Reshape || n.kind == OpKind::Flatten || n.kind == OpKind::Transpose) {
      l.factors = relayout_factors(n.kind, n.attrs, in[0]->shape, n.output.shape);
      l.legal = factor_dims(l.factors);  // legal_part_dims's answer, without a second walk
    } else {
      l.legal = legal_part_dims(g, id);
    }
    fill_op_details(l, g, id, in);
    l.inputs = layer_inputs(g, id, l.out, l.reduction);
    if (n.kind == OpKind::ConvGradWeight || n.kind == OpKind::GemmGradWeight) {
      const Tensor& dy = *in[1];
      l.array_rows_axis = kN;
      l.reduction_span =
          dy.numel() /
          (dy.shape[0] * (n.kind == OpKind::ConvGradWeight ? dy.shape[1] : dy.shape.back()));
    }
    index.emplace(id, static_cast<int>(w.layers.size()));
    w.layers.push_back(std::move(l));
  }
  if (w.layers.empty()) throw InputError("network '" + g.name() + "' has no layer to partition");
  for (std::size_t dst = 0; dst < w.layers.size(); ++dst) {
    const auto inputs = g.inputs(w.layers[dst].id);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto it = index.find(inputs[i]);
      if (it != index.end())
        w.edges.push_back({it->second, static_cast<int>(dst), static_cast<int>(i)});
    }
  }
  return w;
}

std::int64_t activation_bytes(const Workload& workload) {
  std::int64_t sum = 0;
  for (const Layer& l : workload.layers) sum += l.output_bytes;
  return sum;
}

}  // namespace nocflow::optimizer
