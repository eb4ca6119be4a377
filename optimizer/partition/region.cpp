// SPDX-License-Identifier: MIT
#include "optimizer/partition/region.h"

#include <algorithm>
#include <numeric>

#include "noc/base/error.h"
#include "optimizer/graph/resize.h"
#include "optimizer/graph/shape_rules.h"
#include "optimizer/partition/relayout.h"

namespace nocflow::optimizer {
namespace {

struct OpView {
  OpKind kind;
  const OpAttrs& attrs;
  std::vector<const Tensor*> inputs;
  const Tensor& output;
};

/// The input rows the windows of output rows `out` read, clipped to the tensor (the halo). The
/// windows start `out.step`·stride rows apart and read kernel taps `dilation` apart, so every
/// row read lies on a lattice of the gcd of the two (of the one that occurs, for one window or
/// one tap): a 1×1 stride-2 convolution reads every other row. The lattice is exactly the rows
/// read when windows meet or overlap and when taps fall on the windows' starts; otherwise
/// (kernel 2, stride 4) it holds the rows read and some between them.
Range window(Range out, std::int64_t stride, std::int64_t kernel, std::int64_t dilation,
             std::int64_t pad, std::int64_t size) {
  if (out.empty()) return {0, 0};
  const std::int64_t first = out.lo * stride - pad;
  const std::int64_t last = (out.hi - 1) * stride - pad + (kernel - 1) * dilation;
  const std::int64_t apart = out.size() > 1 ? out.step * stride : 0;
  const std::int64_t lattice = std::gcd(apart, kernel > 1 ? dilation : 0);
  return clip(strided(first, last, std::max<std::int64_t>(1, lattice)), 0, size);
}

/// The rows of a convolution's output whose windows touch input rows `in` (transposed window):
/// the bounding range over the kernel taps, each tap hitting every stride-th input row.
Range transposed_window(Range in, std::int64_t stride, std::int64_t kernel, std::int64_t dilation,
                        std::int64_t pad, std::int64_t out_size) {
  auto floor_div = [](std::int64_t a, std::int64_t b) {
    return a >= 0 ? a / b : -((-a + b - 1) / b);
  };
  Range hit{0, 0};
  if (in.empty()) return hit;
  for (std::int64_t r = 0; r < kernel; ++r) {  // oh·stride − pad + r·dilation ∈ in
    const std::int64_t lo =
        std::max<std::int64_t>(0, floor_div(in.lo + pad - r * dilation + stride - 1, stride));
    const std::int64_t hi =
        std::min(out_size, floor_div(in.hi - 1 + pad - r * dilation, stride) + 1);
    if (lo >= hi) continue;
    hit = hit.empty() ? Range{lo, hi} : Range{std::min(hit.lo, lo), std::max(hit.hi, hi)};
  }
  return hit;
}

/// Channels of the other side of a grouped convolution: `block` covers channels of one side
/// (`block_per_group` per group); the channels it meets on the side with `per_group` per group,
/// narrowed to `slice` (a range inside one group) when the block lies in a single group.
Range group_channels(Range block, std::int64_t block_per_group, std::int64_t per_group,
                     Range slice) {
  const std::int64_t g0 = block.lo / block_per_group, g1 = (block.hi - 1) / block_per_group;
  if (g0 == g1 && slice.size() < per_group)
    return {g0 * per_group + slice.lo, g0 * per_group + slice.hi};
  return {g0 * per_group, (g1 + 1) * per_group};
}

/// The box over `in` (an input of the same rank as `out`) that holds, along tensor axis `axis`,
/// the rows `rows(r)` for the block's rows r there, and the block's own rows on every other axis:
/// the block taken apart into tensor-axis ranges (relayout.h) and put back together over `in`,
/// since beyond rank 4 the view flattens the leading axes into N.
template <typename Rows>
Box along_axis(const Box& block, const Shape& out, const Shape& in, std::int64_t axis, Rows rows) {
  AxisRanges r = axis_ranges(block, out);
  Range& mine = r[static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(out.size())
                                                    : axis)];
  mine = rows(mine);
  return view_box(r, in);
}

Box same_block(const Box& block, const Dims4& in, const Dims4& out) {
  Box b;
  for (int a = 0; a < 4; ++a) {
    if (in[a] == out[a]) b.r[a] = block.r[a];
    else if (in[a] == 1) b.r[a] = {0, 1};
    else b.r[a] = {0, in[a]};
  }
  return b;
}

/// The block's elements of an operand of shape `in` broadcast to the output's `out` (or of an
/// output gradient summed into a smaller gradient). Of the same rank, the views' axes hold the
/// same tensor axes: same_block. Of different ranks they do not (a [6, 2, 4] operand of a
/// [2, 3, 6, 2, 4] output has its 6 on N, the output its 6 windows), so the axes are matched
/// on the right, as broadcasting matches them, each the block's rows, row 0 or all.
Box broadcast_block(const Box& block, const Shape& in, const Shape& out) {
  if (in.size() == out.size()) return same_block(block, view4(in), view4(out));
  const AxisRanges mine = axis_ranges(block, out);
  const std::size_t rank = std::max(in.size(), out.size());
  const std::size_t in_skip = rank - in.size(), out_skip = rank - out.size();
  AxisRanges r(in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::size_t at = k + in_skip;  // the aligned axis; the output lacks those before out_skip
    const bool shared = at >= out_skip;
    if (in[k] == 1) r[k] = {0, 1};
    else if (shared && in[k] == out[at - out_skip]) r[k] = mine[at - out_skip];
    else r[k] = {0, in[k]};  // summed over (a gradient's broadcast axis)
  }
  return view_box(r, in);
}

Box batch_slice(const Box& block, const Dims4& in, const Dims4& out) {
  Box b = full_box(in);
  if (in[kN] == out[kN]) b.r[kN] = block.r[kN];
  return b;
}

Box conv_region(const OpView& op, const Box& block, Range red, const Dims4& in) {
  const OpAttrs& a = op.attrs;
  const Dims4 out = view4(op.output.shape);
  Box b;
  b.r[kN] = block.r[kN];
  const std::int64_t groups = std::max<std::int64_t>(1, a.groups);
  if (groups == 1) {
    b.r[kC] = red;
  } else {
    const std::int64_t out_per_group = out[kC] / groups, in_per_group = in[kC] / groups;
    const std::int64_t g0 = block.r[kC].lo / out_per_group, g1 = (block.r[kC].hi - 1) / out_per_group;
    b.r[kC] = {g0 * in_per_group, (g1 + 1) * in_per_group};
    if (g0 == g1 && red.size() < in_per_group)
      b.r[kC] = {g0 * in_per_group + red.lo, g0 * in_per_group + red.hi};
  }
  b.r[kH] = window(block.r[kH], a.stride[0], a.kernel[0], a.dilation[0], a.pads[0], in[kH]);
  b.r[kW] = window(block.r[kW], a.stride[1], a.kernel[1], a.dilation[1], a.pads[1], in[kW]);
  return b;
}

// A batched product [.., S, D] · [.., D, E]: the block's batch rows (all of an axis the operand
// broadcasts: it has 1 there), its rows S of the first operand, its columns E of the second,
// the reduction slice `red` of D.
Box matmul_region(const OpView& op, int input, const Box& block, Range red, const Dims4& in) {
  const Shape& out = op.output.shape;
  const Shape& s = op.inputs[static_cast<std::size_t>(input)]->shape;
  if (s.size() != out.size()) return full_box(in);
  AxisRanges r = axis_ranges(block, out);
  for (std::size_t k = 0; k + 2 < s.size(); ++k)
    if (s[k] != out[k]) r[k] = {0, s[k]};
  r[s.size() - (input == 0 ? 1 : 2)] = red;
  Box b = view_box(r, s);
  // Beyond rank 4 the leading axes' bounding ranges may hold more of N than the block: an
  // operand with the output's leading axes reads its very rows.
  if (s.size() > 4 && std::equal(s.begin(), s.end() - 3, out.begin())) b.r[kN] = block.r[kN];
  return b;
}

Box concat_region(const OpView& op, int input, const Box& block) {
  const Shape& out = op.output.shape;
  const std::int64_t rank = static_cast<std::int64_t>(out.size());
  const auto axis =
      static_cast<std::size_t>(op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis);
  std::int64_t offset = 0;
  for (int i = 0; i < input; ++i) offset += op.inputs[static_cast<std::size_t>(i)]->shape[axis];
  const Shape& in = op.inputs[static_cast<std::size_t>(input)]->shape;
  return along_axis(block, out, in, op.attrs.axis, [&](Range r) {
    const Range mine = intersect(r, {offset, offset + in[axis]});
    return mine.empty() ? Range{0, 0} : Range{mine.lo - offset, mine.hi - offset};
  });
}

// A Gather along `axis` (a table's rows looked up): the output's axes are the data's before the
// axis, the indices' axes, then the data's after it. The indices: the block's ranges on theirs;
// the data: the block's on its own axes and every row along the axis (which rows the indices
// pick is known only when they run).
Box gather_region(const OpView& op, int input, const Box& block) {
  const Shape& data = op.inputs[0]->shape;
  const Shape& idx = op.inputs[1]->shape;
  const std::size_t axis = shape_rules::norm_axis(op.attrs.axis, data.size());
  const AxisRanges out = axis_ranges(block, op.output.shape);
  const auto first = out.begin() + static_cast<std::ptrdiff_t>(axis);
  const auto after = first + static_cast<std::ptrdiff_t>(idx.size());
  if (input == 1) return view_box(AxisRanges(first, after), idx);
  AxisRanges r(out.begin(), first);
  r.push_back({0, data[axis]});
  r.insert(r.end(), after, out.end());
  return view_box(r, data);
}

// Gradient of a convolution's input (X view) from dY: the output rows whose windows touch the
// block, the dY channels of the block's groups (INPP: a slice of K per group). The same for a
// ConvTranspose's output from its input (whose channels its INPP slices).
Box conv_grad_input_region(const OpView& op, const Box& block, Range red, const Dims4& dy) {
  const OpAttrs& a = op.attrs;
  const Dims4 x = view4(op.output.shape);
  const std::int64_t groups = std::max<std::int64_t>(1, a.groups);
  Box b;
  b.r[kN] = block.r[kN];
  b.r[kC] = group_channels(block.r[kC], x[kC] / groups, dy[kC] / groups, red);
  b.r[kH] =
      transposed_window(block.r[kH], a.stride[0], a.kernel[0], a.dilation[0], a.pads[0], dy[kH]);
  b.r[kW] =
      transposed_window(block.r[kW], a.stride[1], a.kernel[1], a.dilation[1], a.pads[1], dy[kW]);
  return b;
}

// Gradient of a convolution's weights (K × C/g × kh × kw) from X (input 0) and dY (input 1):
// the batch slice `red` of both, X's channels of the block's groups and rows under whole
// kernels (OFMP is not legal on kernel axes), dY's channels K of the block.
Box conv_grad_weight_region(const OpView& op, int input, const Box& block, Range red,
                            const Dims4& in) {
  const OpAttrs& a = op.attrs;
  const Dims4 w = view4(op.output.shape);
  Box b = full_box(in);
  b.r[kN] = red;
  if (input == 1) {
    b.r[kC] = block.r[kN];
    return b;
  }
  const Dims4 dy = view4(op.inputs[1]->shape);
  const std::int64_t groups = std::max<std::int64_t>(1, a.groups);
  b.r[kC] = group_channels(block.r[kN], w[kN] / groups, w[kC], block.r[kC]);
  b.r[kH] = window({0, dy[kH]}, a.stride[0], a.kernel[0], a.dilation[0], a.pads[0], in[kH]);
  b.r[kW] = window({0, dy[kW]}, a.stride[1], a.kernel[1], a.dilation[1], a.pads[1], in[kW]);
  return b;
}

/// A Resize's input (`to_input`) or its gradient's output gradient: along H and W, the indices
/// the block reads, or those that read the block. `x`, `y`: the forward input and output.
Box resize_region(const OpAttrs& a, const Box& block, const Shape& x, const Shape& y,
                  bool to_input) {
  Box b = block;
  for (int i = 0; i < 2; ++i) {
    Range& r = b.r[kH + i];
    const ResizeAxis axis = resize_axis(a, x, y, i);
    const IndexRange got =
        to_input ? resize_inputs(a, axis, {r.lo, r.hi}) : resize_outputs(a, axis, {r.lo, r.hi});
    r = got.second > got.first ? Range{got.first, got.second} : Range{0, 0};
  }
  return b;
}

Box op_region(const OpView& op, int input, const Box& block, Range red) {
  const Shape& operand = op.inputs[static_cast<std::size_t>(input)]->shape;
  const Dims4 in = view4(operand);
  const Dims4 out = view4(op.output.shape);
  const OpAttrs& a = op.attrs;
  switch (op.kind) {
    case OpKind::ConvGradInput:
    case OpKind::ConvTranspose:
      return conv_grad_input_region(op, block, red, in);
    case OpKind::ConvGradWeight:
      return conv_grad_weight_region(op, input, block, red, in);
    case OpKind::GemmGradWeight: {  // out × in from the batch slice of X [.., in] and dY [.., out]
      // The reduction slices axis 0 (reduction_size), every position between
      // whole; beyond rank 4 the view's N holds the axes after it too.
      AxisRanges r(operand.size());
      for (std::size_t k = 0; k < operand.size(); ++k) r[k] = {0, operand[k]};
      r.front() = red;
      r.back() = input == 0 ? block.r[kC] : block.r[kN];
      return view_box(r, operand);
    }
    case OpKind::PoolGrad: {
      if (op.attrs.grad_of != OpKind::MaxPool && op.attrs.grad_of != OpKind::AvgPool)
        return same_block(block, in, out);  // global pooling: dY broadcast over the block
      Box b = block;  // dY: the windows touching the block; X (max): those windows' inputs
      const Dims4 dy = view4(op.inputs[0]->shape);
      b.r[kH] = transposed_window(block.r[kH], a.stride[0], a.kernel[0], 1, a.pads[0], dy[kH]);
      b.r[kW] = transposed_window(block.r[kW], a.stride[1], a.kernel[1], 1, a.pads[1], dy[kW]);
      if (input == 1) {
        b.r[kH] = window(b.r[kH], a.stride[0], a.kernel[0], 1, a.pads[0], in[kH]);
        b.r[kW] = window(b.r[kW], a.stride[1], a.kernel[1], 1, a.pads[1], in[kW]);
      }
      return b;
    }
    case OpKind::Slice: {
      // An ONNX Slice's starts and ends, before folding.
      if (input != 0) return full_box(in);
      // Rows offset + i·step for the block's rows i.
      return along_axis(block, op.output.shape, op.inputs[0]->shape, a.axis, [&](Range r) {
        return r.empty() ? Range{a.offset, a.offset}
                         : strided(a.offset + r.lo * a.step, a.offset + (r.hi - 1) * a.step,
                                   a.step * r.step);
      });
    }
    case OpKind::Grad:
      if (a.grad_of == OpKind::Slice) {  // dY row i sits at offset + i·step along the axis
        const Shape& dy = op.inputs[0]->shape;
        const std::int64_t rank = static_cast<std::int64_t>(dy.size());
        const std::int64_t rows = dy[static_cast<std::size_t>(a.axis < 0 ? a.axis + rank : a.axis)];
        auto first_at_or_after = [&](std::int64_t row) {  // the first dY row at or after `row`
          const std::int64_t d = row - a.offset;          // ≥ 0: rows start at the offset
          return std::clamp<std::int64_t>(d / a.step + (d % a.step != 0), 0, rows);
        };
        return along_axis(block, op.output.shape, dy, a.axis, [&](Range x) {
          const Range r{first_at_or_after(std::max(x.lo, a.offset)),
                        first_at_or_after(std::max(x.hi, a.offset))};
          return r.empty() ? Range{0, 0} : r;
        });
      }
      if (a.grad_of == OpKind::Gather) {  // a table's rows: from any token's dy, any index
        if (input != 0) return full_box(in);
        const Shape& table = op.output.shape;
        const std::size_t axis = shape_rules::norm_axis(a.axis, table.size());
        const AxisRanges t = axis_ranges(block, table);
        const Shape& dy = op.inputs[0]->shape;
        const std::size_t idx_rank = dy.size() + 1 - table.size();
        AxisRanges r(t.begin(), t.begin() + static_cast<std::ptrdiff_t>(axis));
        for (std::size_t k = 0; k < idx_rank; ++k) r.push_back({0, dy[axis + k]});
        r.insert(r.end(), t.begin() + static_cast<std::ptrdiff_t>(axis) + 1, t.end());
        return view_box(r, dy);
      }
      if (a.grad_of == OpKind::Resize)  // dX's block from dY's values that read it
        return resize_region(a, block, op.output.shape, op.inputs[0]->shape, false);
      return broadcast_block(block, operand, op.output.shape);
    case OpKind::LossGrad:
    case OpKind::WeightUpdate:
      return broadcast_block(block, operand, op.output.shape);
    case OpKind::Conv:
    case OpKind::ConvTransposeGradInput:  // dX reads dY as a convolution reads its input
      return input == 0 ? conv_region(op, block, red, in) : full_box(in);
    case OpKind::MaxPool:
    case OpKind::AvgPool: {
      Box b = block;
      b.r[kH] = window(block.r[kH], a.stride[0], a.kernel[0], 1, a.pads[0], in[kH]);
      b.r[kW] = window(block.r[kW], a.stride[1], a.kernel[1], 1, a.pads[1], in[kW]);
      return b;
    }
    case OpKind::Resize:
      if (input != 0) return full_box(in);  // ONNX's sizes, before folding
      return resize_region(a, block, op.inputs[0]->shape, op.output.shape, true);
    case OpKind::GlobalAvgPool: {
      Box b = full_box(in);
      b.r[kN] = block.r[kN];
      b.r[kC] = block.r[kC];
      return b;
    }
    case OpKind::Gemm:  // per position over the last (feature) axis
    case OpKind::GemmGradInput: {
      if (input != 0) return full_box(in);
      const std::size_t rank = op.output.shape.size();
      Box b = block;  // the same samples, tokens (N×S×D: H) or positions (N×C×H×W: C, H)
      b.r[view_axis(-1, rank)] = red;
      return b;
    }
    case OpKind::MatMul: return matmul_region(op, input, block, red, in);
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Transpose:
      if (input != 0) return full_box(in);  // a Reshape's shape operand
      return relayout_region(op.kind, a, op.inputs[0]->shape, op.output.shape, block);
    case OpKind::Concat: return concat_region(op, input, block);
    case OpKind::Gather: return gather_region(op, input, block);
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow:
    case OpKind::Mod: case OpKind::PRelu:
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Tanh:
    case OpKind::Gelu: case OpKind::Erf: case OpKind::Sqrt: case OpKind::Exp:
    case OpKind::HardSigmoid: case OpKind::HardSwish: case OpKind::LeakyRelu:
    case OpKind::BatchNorm: case OpKind::LayerNorm: case OpKind::Softmax:
    case OpKind::Identity: case OpKind::Dropout: case OpKind::Cast:
    case OpKind::Equal: case OpKind::Where:  // a mask's block, broadcast as an Add's operand
      return broadcast_block(block, operand, op.output.shape);
    case OpKind::ReduceMean:  // the block's rows on the kept axes, whole reduced axes
      return a.keepdims ? same_block(block, in, out) : batch_slice(block, in, out);
    default: return batch_slice(block, in, out);
  }
}

struct FusedSlot {
  std::size_t part;
  int position;
};

/// Which part and position of Fused node `n` read its input `input`.
FusedSlot fused_slot(const Node& n, int input) {
  const auto& parts = n.attrs.parts;
  int slot = 0;
  for (std::size_t p = 0; p < parts.size(); ++p) {
    const int total = parts[p].num_inputs + (p == 0 ? 0 : 1);
    for (int i = 0; i < total; ++i)
      if ((p == 0 || i != parts[p].chain_input) && slot++ == input) return {p, i};
  }
  throw CheckError(n.name + ": fused node has no input " + std::to_string(input));
}

Box fused_region(const Node& n, int input, const Box& block, Range red) {
  const auto& parts = n.attrs.parts;
  // The output block each part must produce, from the last part back to the one reading it.
  // INPP slices the head's reduction only: every later part reduces over all of its own.
  const FusedSlot s = fused_slot(n, input);
  auto region = [&](std::size_t p, int position, const Box& out) {
    const FusedPart& part = parts[p];
    std::vector<const Tensor*> pin;
    for (const Tensor& t : part.inputs) pin.push_back(&t);
    const Range r = p == 0 ? red : Range{0, reduction_size(part.kind, part.attrs, pin)};
    return op_region({part.kind, part.attrs, pin, part.output}, position, out, r);
  };
  Box need = block;
  for (std::size_t p = parts.size(); p-- > s.part + 1;)
    need = region(p, parts[p].chain_input, need);
  return region(s.part, s.position, need);
}

}  // namespace

std::int64_t reduction_size(OpKind kind, const OpAttrs& a, const std::vector<const Tensor*>& in) {
  if (in.empty()) return 1;
  const Shape& s = in[0]->shape;
  if (kind == OpKind::Conv || kind == OpKind::ConvGradInput || kind == OpKind::ConvTranspose ||
      kind == OpKind::ConvTransposeGradInput)  // C or K per group
    return (s.size() > 1 ? s[1] : 1) / std::max<std::int64_t>(1, a.groups);
  if (kind == OpKind::Gemm || kind == OpKind::MatMul || kind == OpKind::GemmGradInput)
    return s.empty() ? 1 : s.back();
  if (kind == OpKind::ConvGradWeight || kind == OpKind::GemmGradWeight) return s[0];  // batch
  return 1;
}

std::size_t fused_part_of_input(const Node& n, int input) {
  return fused_slot(n, input).part;
}

Box input_region(const Graph& g, NodeId consumer, int input, const Box& out_block, Range red) {
  const Node& n = g.node(consumer);
  std::vector<const Tensor*> in;
  for (NodeId src : g.inputs(consumer)) in.push_back(&g.node(src).output);
  const Box need = n.kind == OpKind::Fused
                       ? fused_region(n, input, out_block, red)
                       : op_region({n.kind, n.attrs, in, n.output}, input, out_block, red);
  // A rule reading outside its input would index producer blocks that do not exist.
  const Dims4 dims = view4(in.at(static_cast<std::size_t>(input))->shape);
  for (int a = 0; a < 4; ++a)
    if (!need.r[a].empty() && (need.r[a].lo < 0 || need.r[a].hi > dims[a]))
      throw CheckError(
          n.name + " (" + std::string(op_name(n.kind)) + "): input " + std::to_string(input) +
          " region leaves its " + shape_str(in[static_cast<std::size_t>(input)]->shape) +
          " tensor on view axis " + std::to_string(a) + " ([" + std::to_string(need.r[a].lo) +
          ", " + std::to_string(need.r[a].hi) + ") of " + std::to_string(dims[a]) + ")");
  return need;
}

}  // namespace nocflow::optimizer
