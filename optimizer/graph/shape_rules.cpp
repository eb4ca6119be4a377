// SPDX-License-Identifier: MIT
// One shape rule per operator kind (see shape_inference.h for the contract).
#include "optimizer/graph/shape_rules.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <numeric>

#include "noc/base/error.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer::shape_rules {

[[noreturn]] void fail(const std::string& msg) { throw InputError(msg); }

std::string count_str(double x) {
  if (x <= kMaxCount) return std::to_string(static_cast<std::int64_t>(x));
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", x);
  return buf;
}

namespace {

/// Product of the dimensions, in double: it cannot wrap, however large the dimensions.
double count(const Shape& s) {
  double p = 1;
  for (auto d : s) p *= static_cast<double>(d);
  return p;
}

std::int64_t product(const Shape& s, std::size_t from, std::size_t to) {
  std::int64_t p = 1;
  for (std::size_t i = from; i < to; ++i) p *= s[i];
  return p;
}

}  // namespace

/// Axis in [-rank, rank) to [0, rank).
std::size_t norm_axis(std::int64_t axis, std::size_t rank, const char* what) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r)
    fail(std::string(what) + " " + std::to_string(axis) + " out of range for rank " +
         std::to_string(rank));
  return static_cast<std::size_t>(axis < 0 ? axis + r : axis);
}

void need_rank(const Tensor& t, std::size_t rank, const char* what) {
  if (t.shape.size() != rank)
    fail(std::string(what) + " needs a rank-" + std::to_string(rank) + " input, got " +
         shape_str(t.shape));
}

void need_positive(const Shape& s, const char* what) {
  for (auto d : s)
    if (d <= 0) fail(std::string(what) + " has a non-positive dimension: " + shape_str(s));
}

Shape broadcast(const Shape& a, const Shape& b) {
  const std::size_t r = std::max(a.size(), b.size());
  Shape out(r);
  for (std::size_t i = 0; i < r; ++i) {
    const std::int64_t da = i < r - a.size() ? 1 : a[i - (r - a.size())];
    const std::int64_t db = i < r - b.size() ? 1 : b[i - (r - b.size())];
    if (da != db && da != 1 && db != 1)
      fail("input shapes " + shape_str(a) + " and " + shape_str(b) + " do not broadcast");
    out[i] = da == 1 ? db : da;
  }
  return out;
}

namespace {

/// Output size of a sliding window (conv or pool) along one axis. Ceil mode follows PyTorch:
/// the last window must start inside the input or the leading padding.
std::int64_t window_out(std::int64_t in, std::int64_t k, std::int64_t s, std::int64_t p0,
                        std::int64_t p1, std::int64_t d, bool ceil_mode) {
  if (k <= 0 || s <= 0 || d <= 0 || p0 < 0 || p1 < 0)
    fail("kernel, stride and dilation must be positive, pads non-negative");
  // Checked in double first, so that huge pads, kernels or dilations cannot wrap the int64s.
  const double padded = static_cast<double>(in) + static_cast<double>(p0) + static_cast<double>(p1);
  const double span_d = static_cast<double>(d) * static_cast<double>(k - 1) + 1;
  if (padded > kMaxCount) fail("padded input size " + count_str(padded) + " is more than 2^53");
  if (span_d > padded)
    fail("window " + count_str(span_d) + " larger than padded input " + count_str(padded));
  const std::int64_t span = d * (k - 1) + 1;
  const std::int64_t room = in + p0 + p1 - span;
  std::int64_t out = (ceil_mode ? (room + s - 1) / s : room / s) + 1;
  if (ceil_mode && (out - 1) * s >= in + p0) --out;
  return out;
}

}  // namespace

Tensor window_op(const Tensor& x, const OpAttrs& a, std::int64_t channels, const char* what) {
  need_rank(x, 4, what);
  Tensor t;
  t.elem_bytes = x.elem_bytes;
  const bool is_conv = std::string(what) == "Conv";
  t.shape = {x.shape[0], channels,
             window_out(x.shape[2], a.kernel[0], a.stride[0], a.pads[0], a.pads[2],
                        is_conv ? a.dilation[0] : 1, a.ceil_mode),
             window_out(x.shape[3], a.kernel[1], a.stride[1], a.pads[1], a.pads[3],
                        is_conv ? a.dilation[1] : 1, a.ceil_mode)};
  return t;
}

void check_channels(const Tensor& x, const OpAttrs& a) {
  const std::int64_t c = x.shape[1];
  if (a.out_channels <= 0) fail("needs out_channels > 0");
  if (a.groups <= 0 || c % a.groups || a.out_channels % a.groups)
    fail("groups " + std::to_string(a.groups) + " must divide input channels " +
         std::to_string(c) + " and output channels " + std::to_string(a.out_channels));
  if (a.in_channels && a.in_channels != c)
    fail("weight expects " + std::to_string(a.in_channels) + " input channels, input has shape " +
         shape_str(x.shape));
}

Tensor conv(const Tensor& x, const OpAttrs& a) {
  need_rank(x, 4, "Conv");
  check_channels(x, a);
  return window_op(x, a, a.out_channels, "Conv");
}

Tensor gemm(const Tensor& x, const OpAttrs& a) {
  if (x.shape.size() < 2) fail("Gemm needs an input of rank >= 2, got " + shape_str(x.shape));
  if (a.out_channels <= 0) fail("needs out_channels (output features) > 0");
  if (a.in_channels && a.in_channels != x.shape.back())
    fail("weight expects " + std::to_string(a.in_channels) + " input features, input has shape " +
         shape_str(x.shape));
  Tensor t{x.shape, x.elem_bytes, std::nullopt};
  t.shape.back() = a.out_channels;
  return t;
}

}  // namespace nocflow::optimizer::shape_rules

namespace nocflow::optimizer {
namespace {

using namespace shape_rules;

Tensor matmul(const Tensor& x, const Tensor& y) {
  if (x.shape.size() < 2 || y.shape.size() < 2)
    fail("MatMul needs inputs of rank >= 2, got " + shape_str(x.shape) + " and " +
         shape_str(y.shape));
  const auto& a = x.shape;
  const auto& b = y.shape;
  if (a.back() != b[b.size() - 2])
    fail("inner dimensions differ: " + shape_str(a) + " x " + shape_str(b));
  Shape batch = broadcast(Shape(a.begin(), a.end() - 2), Shape(b.begin(), b.end() - 2));
  batch.push_back(a[a.size() - 2]);
  batch.push_back(b.back());
  return Tensor{batch, std::max(x.elem_bytes, y.elem_bytes), std::nullopt};
}

Tensor concat(const std::vector<const Tensor*>& in, const OpAttrs& a) {
  const Shape& first = in[0]->shape;
  const std::size_t axis = norm_axis(a.axis, first.size());
  Tensor t{first, in[0]->elem_bytes, std::nullopt};
  t.shape[axis] = 0;
  bool all_values = first.size() == 1;
  std::vector<std::int64_t> value;
  for (const Tensor* x : in) {
    bool ok = x->shape.size() == first.size();
    for (std::size_t i = 0; ok && i < first.size(); ++i)
      ok = i == axis || x->shape[i] == first[i];
    if (!ok)
      fail("inputs differ outside axis " + std::to_string(axis) + ": " + shape_str(first) +
           " and " + shape_str(x->shape));
    t.shape[axis] += x->shape[axis];
    all_values = all_values && x->value.has_value();
    if (all_values) value.insert(value.end(), x->value->begin(), x->value->end());
  }
  if (all_values) t.value = value;
  return t;
}

Tensor reshape(const std::vector<const Tensor*>& in, const OpAttrs& a) {
  const Tensor& x = *in[0];
  Shape target = a.shape;
  if (in.size() == 2) {
    if (!in[1]->value) fail("target shape is not known at compile time");
    target = *in[1]->value;
  }
  Tensor t{{}, x.elem_bytes, x.value};
  int infer_at = -1;
  std::int64_t known = 1;
  for (std::size_t i = 0; i < target.size(); ++i) {
    std::int64_t d = target[i];
    if (d == 0) {
      if (i >= x.shape.size()) fail("0 in target " + shape_str(target) + " past input rank");
      d = x.shape[i];
    }
    if (d == -1) {
      if (infer_at >= 0) fail("two -1 in target shape " + shape_str(target));
      infer_at = static_cast<int>(i);
    } else if (d <= 0) {
      fail("bad target shape " + shape_str(target));
    } else {
      known *= d;
    }
    t.shape.push_back(d);
  }
  if (infer_at >= 0) {
    if (known == 0 || x.numel() % known) fail("cannot reshape " + shape_str(x.shape) + " to " + shape_str(target));
    t.shape[static_cast<std::size_t>(infer_at)] = x.numel() / known;
  }
  if (t.numel() != x.numel())
    fail("cannot reshape " + shape_str(x.shape) + " (" + std::to_string(x.numel()) +
         " elements) to " + shape_str(t.shape) + " (" + std::to_string(t.numel()) + " elements)");
  return t;
}

Tensor transpose(const Tensor& x, const OpAttrs& a) {
  std::vector<std::int64_t> perm = a.perm;
  const std::size_t r = x.shape.size();
  if (perm.empty())
    for (std::size_t i = r; i-- > 0;) perm.push_back(static_cast<std::int64_t>(i));
  std::vector<std::int64_t> sorted = perm;
  std::sort(sorted.begin(), sorted.end());
  std::vector<std::int64_t> iota(r);
  std::iota(iota.begin(), iota.end(), 0);
  if (sorted != iota)
    fail("perm " + shape_str(perm) + " is not a permutation for input " + shape_str(x.shape));
  Tensor t{Shape(r), x.elem_bytes, std::nullopt};
  for (std::size_t i = 0; i < r; ++i) t.shape[i] = x.shape[static_cast<std::size_t>(perm[i])];
  return t;
}

Tensor reduce_mean(const Tensor& x, const OpAttrs& a) {
  const std::size_t r = x.shape.size();
  std::vector<bool> reduce(r, a.axes.empty());
  for (auto ax : a.axes) {
    const std::size_t axis = norm_axis(ax, r, "reduce axis");
    if (reduce[axis] && !a.axes.empty())
      fail("reduce axis " + std::to_string(ax) + " given twice (axes " + shape_str(a.axes) + ")");
    reduce[axis] = true;
  }
  Tensor t{{}, x.elem_bytes, std::nullopt};
  for (std::size_t i = 0; i < r; ++i)
    if (!reduce[i]) t.shape.push_back(x.shape[i]);
    else if (a.keepdims) t.shape.push_back(1);
  return t;
}

std::vector<std::int64_t> axes_of(const std::vector<const Tensor*>& in, const OpAttrs& a) {
  if (in.size() < 2) return a.axes;
  if (!in[1]->value) fail("axes input is not known at compile time");
  return *in[1]->value;
}

Tensor unsqueeze(const std::vector<const Tensor*>& in, const OpAttrs& a) {
  const Tensor& x = *in[0];
  const auto axes = axes_of(in, a);
  const std::size_t r = x.shape.size() + axes.size();
  std::vector<bool> inserted(r, false);
  for (auto ax : axes) {
    const std::size_t i = norm_axis(ax, r, "unsqueeze axis");
    if (inserted[i]) fail("axis " + std::to_string(ax) + " given twice");
    inserted[i] = true;
  }
  Tensor t{{}, x.elem_bytes, x.value};
  std::size_t j = 0;
  for (std::size_t i = 0; i < r; ++i) t.shape.push_back(inserted[i] ? 1 : x.shape[j++]);
  return t;
}

Tensor squeeze(const std::vector<const Tensor*>& in, const OpAttrs& a) {
  const Tensor& x = *in[0];
  const auto axes = axes_of(in, a);
  std::vector<bool> drop(x.shape.size(), false);
  for (std::size_t i = 0; i < x.shape.size(); ++i) drop[i] = axes.empty() && x.shape[i] == 1;
  for (auto ax : axes) {
    const std::size_t i = norm_axis(ax, x.shape.size(), "squeeze axis");
    if (x.shape[i] != 1) fail("cannot squeeze axis " + std::to_string(ax) + " of " + shape_str(x.shape));
    drop[i] = true;
  }
  Tensor t{{}, x.elem_bytes, x.value};
  for (std::size_t i = 0; i < x.shape.size(); ++i)
    if (!drop[i]) t.shape.push_back(x.shape[i]);
  return t;
}

Tensor fused(OpAttrs& a, const std::vector<const Tensor*>& in) {
  if (a.parts.empty()) fail("fused node has no parts");
  std::size_t next = 0;
  Tensor prev;
  for (std::size_t p = 0; p < a.parts.size(); ++p) {
    FusedPart& part = a.parts[p];
    std::vector<const Tensor*> part_in;
    const int total = part.num_inputs + (p == 0 ? 0 : 1);
    // The rules index their inputs unchecked: a part must have as many as its operator takes.
    const OpInfo& info = op_info(part.kind);
    const std::string part_label =
        "fused part '" + part.name + "' (" + std::string(info.name) + ")";
    if (part.kind == OpKind::Fused) fail(part_label + ": a part cannot itself be fused");
    if (total < info.min_inputs || (info.max_inputs >= 0 && total > info.max_inputs))
      fail(part_label + ": takes " + input_count_text(info.min_inputs, info.max_inputs) +
           " inputs, has " + std::to_string(total));
    if (p > 0 && (part.chain_input < 0 || part.chain_input >= total))
      fail(part_label + ": chain_input " + std::to_string(part.chain_input) +
           " is not one of its " + std::to_string(total) + " inputs");
    for (int i = 0; i < total; ++i) {
      if (p > 0 && i == part.chain_input) {
        part_in.push_back(&prev);
      } else {
        if (next >= in.size()) fail("fused part '" + part.name + "' lacks inputs");
        part_in.push_back(in[next++]);
      }
    }
    part.inputs.clear();
    for (const Tensor* t : part_in) part.inputs.push_back(*t);
    try {
      part.output = infer_output(part.kind, part.attrs, part_in);
    } catch (const InputError& e) {
      fail("fused part '" + part.name + "' (" + std::string(op_name(part.kind)) + "): " + e.what());
    }
    prev = part.output;
  }
  if (next != in.size()) fail("fused node has " + std::to_string(in.size() - next) + " unused inputs");
  return prev;
}

Tensor infer_unchecked(OpKind kind, OpAttrs& a, const std::vector<const Tensor*>& in) {
  switch (kind) {
    case OpKind::Input:
    case OpKind::RandomUniform: {
      need_positive(a.shape, "shape");
      return Tensor{a.shape, a.elem_bytes, std::nullopt};
    }
    case OpKind::Constant: {
      need_positive(a.shape, "shape");
      Tensor t{a.shape, a.elem_bytes, std::nullopt};
      if (!a.int_data.empty()) {
        if (static_cast<std::int64_t>(a.int_data.size()) != t.numel())
          fail("has " + std::to_string(a.int_data.size()) + " values for shape " + shape_str(a.shape));
        t.value = a.int_data;
      }
      return t;
    }
    case OpKind::Conv: return conv(*in[0], a);
    case OpKind::ConvTranspose: return conv_transpose(*in[0], a);
    case OpKind::Gemm: return gemm(*in[0], a);
    case OpKind::MatMul: return matmul(*in[0], *in[1]);
    case OpKind::MaxPool:
    case OpKind::AvgPool: {
      need_rank(*in[0], 4, op_name(kind).data());
      return window_op(*in[0], a, in[0]->shape[1], op_name(kind).data());
    }
    case OpKind::Resize: return resize(in, a);
    case OpKind::GlobalAvgPool: {
      if (in[0]->shape.size() < 3) fail("needs rank >= 3, got " + shape_str(in[0]->shape));
      Tensor t{in[0]->shape, in[0]->elem_bytes, std::nullopt};
      std::fill(t.shape.begin() + 2, t.shape.end(), 1);
      return t;
    }
    case OpKind::Add:
    case OpKind::Sub:
    case OpKind::Mul:
    case OpKind::Div:
    case OpKind::Pow:
    case OpKind::Mod:
      return Tensor{broadcast(in[0]->shape, in[1]->shape),
                    std::max(in[0]->elem_bytes, in[1]->elem_bytes),
                    binary_value(kind, a, *in[0], *in[1])};
    case OpKind::PRelu:  // the slopes broadcast to x (one way, as ONNX says)
      if (broadcast(in[0]->shape, in[1]->shape) != in[0]->shape)
        fail("slopes " + shape_str(in[1]->shape) + " do not broadcast to the input's " +
             shape_str(in[0]->shape));
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
    case OpKind::Gelu:
    case OpKind::Erf:
    case OpKind::Sqrt:
    case OpKind::Exp:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::LeakyRelu:
    case OpKind::Dropout:
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::Identity: return *in[0];
    case OpKind::Cast: return Tensor{in[0]->shape, a.elem_bytes, in[0]->value};
    case OpKind::BatchNorm:
      if (in[0]->shape.size() < 2) fail("needs rank >= 2, got " + shape_str(in[0]->shape));
      if (a.in_channels && a.in_channels != in[0]->shape[1])
        fail("parameters for " + std::to_string(a.in_channels) + " channels, input has shape " +
             shape_str(in[0]->shape));
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::LayerNorm:
    case OpKind::Softmax:
      norm_axis(a.axis, in[0]->shape.size());
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::ReduceMean: return reduce_mean(*in[0], a);
    case OpKind::Concat: return concat(in, a);
    case OpKind::Reshape: return reshape(in, a);
    case OpKind::Flatten: {
      const Shape& s = in[0]->shape;
      const std::size_t axis = a.axis == static_cast<std::int64_t>(s.size())
                                   ? s.size()
                                   : norm_axis(a.axis, s.size());
      return Tensor{{product(s, 0, axis), product(s, axis, s.size())}, in[0]->elem_bytes,
                    in[0]->value};
    }
    case OpKind::Transpose: return transpose(*in[0], a);
    case OpKind::Shape:
      return Tensor{{static_cast<std::int64_t>(in[0]->shape.size())}, 8, in[0]->shape};
    case OpKind::Gather: return gather(*in[0], *in[1], a);
    case OpKind::Unsqueeze: return unsqueeze(in, a);
    case OpKind::Squeeze: return squeeze(in, a);
    case OpKind::Equal: return equal(in);
    case OpKind::Where: return where(in);
    case OpKind::Expand: return expand(*in[0], *in[1]);
    case OpKind::ConvGradInput:
      return conv_grad_input(*in[0], a);
    case OpKind::ConvGradWeight:
      return conv_grad_weight(*in[0], *in[1], a);
    case OpKind::ConvTransposeGradInput:
      return conv_transpose_grad_input(*in[0], a);
    case OpKind::GemmGradInput:
      return gemm_grad_input(*in[0], a);
    case OpKind::GemmGradWeight:
      return gemm_grad_weight(*in[0], *in[1], a);
    case OpKind::PoolGrad:
      return pool_grad(*in[0], a);
    case OpKind::Grad:
      return grad(*in[0], a);
    case OpKind::Slice:
      return in.size() > 1 ? onnx_slice(in, a) : slice(*in[0], a);
    case OpKind::WeightUpdate:  // an edited graph file gave -10^6: negative cycles and energy
      if (a.params < 1)
        fail("params " + std::to_string(a.params) + ": an update updates at least 1");
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::LossGrad:
      return Tensor{in[0]->shape, in[0]->elem_bytes, std::nullopt};
    case OpKind::Fused: return fused(a, in);
  }
  fail("no shape rule");
}

}  // namespace

Tensor infer_output(OpKind kind, OpAttrs& a, const std::vector<const Tensor*>& in) {
  Tensor t = infer_unchecked(kind, a, in);
  // Sizes are int64 everywhere downstream: refuse here what would wrap there.
  const double elements = count(t.shape);
  if (elements > kMaxCount)
    fail("output " + shape_str(t.shape) + " has " + count_str(elements) +
         " elements, more than 2^53");
  if (t.elem_bytes < 1) fail("output has " + std::to_string(t.elem_bytes) + " bytes per element");
  if (elements * t.elem_bytes > kMaxCount)
    fail("output " + shape_str(t.shape) + " is " + count_str(elements * t.elem_bytes) +
         " bytes, more than 2^53");
  const OpCost cost = op_cost(kind, a, in, t);
  // op_cost's counts saturate at int64's maximum: a count there is only known to be at least it
  // (it printed 9.22e+18 for 1.6e+20).
  if (const std::int64_t ops = std::max(cost.macs, cost.vector_ops);
      static_cast<double>(ops) > kMaxCount)
    fail("needs " +
         (ops == std::numeric_limits<std::int64_t>::max()
              ? std::string("more than 2^63 operations (multiply-accumulates or element-wise)")
              : count_str(static_cast<double>(ops)) +
                    " operations (multiply-accumulates or element-wise), more than 2^53"));
  return t;
}

std::string pool_pad_problem(const OpAttrs& a) {
  static const char* const side[] = {"top", "left", "bottom", "right"};
  for (int i = 0; i < 4; ++i)
    if (a.pads[i] >= a.kernel[i % 2])
      return std::string(side[i]) + " pad " + std::to_string(a.pads[i]) +
             " is not smaller than the window's " + std::to_string(a.kernel[i % 2]) +
             ": a window could hold only padding";
  return "";
}

}  // namespace nocflow::optimizer
