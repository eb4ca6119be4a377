// SPDX-License-Identifier: MIT
// The shape rules of the training kinds, of Slice (which autodiff makes of a Concat's gradient
// and ONNX import of a Slice node) and of ConvTranspose (a convolution's input gradient's
// arithmetic); the other forward operators' are in shape_rules.cpp.
#include <algorithm>

#include "optimizer/graph/shape_rules.h"

namespace nocflow::optimizer::shape_rules {
namespace {

void same_shape(const Shape& got, const Shape& want, const char* what) {
  if (got != want)
    fail(std::string(what) + " " + shape_str(got) + " does not match " + shape_str(want));
}

Tensor gradient_tensor(const Tensor& dy, const OpAttrs& a) {
  need_positive(a.shape, "gradient shape");
  return Tensor{a.shape, dy.elem_bytes, std::nullopt};
}

}  // namespace

// The gradient of a forward tensor has that tensor's shape (attrs.shape), checked against what
// the forward operator would have made of it.

Tensor conv_grad_input(const Tensor& dy, const OpAttrs& a) {
  const Tensor x = gradient_tensor(dy, a);
  OpAttrs fwd = a;
  fwd.out_channels = dy.shape.size() == 4 ? dy.shape[1] : 0;
  same_shape(dy.shape, conv(x, fwd).shape, "output gradient");
  return x;
}

Tensor conv_transpose(const Tensor& x, const OpAttrs& a) {
  need_rank(x, 4, "ConvTranspose");
  check_channels(x, a);
  Tensor t{{x.shape[0], a.out_channels, 0, 0}, x.elem_bytes, std::nullopt};
  for (std::size_t i = 0; i < 2; ++i) {
    if (a.kernel[i] < 1 || a.stride[i] < 1 || a.dilation[i] < 1)
      fail("kernel, strides and dilations must be at least 1");
    if (a.output_padding[i] < 0 || a.output_padding[i] >= std::max(a.stride[i], a.dilation[i]))
      fail("output_padding " + std::to_string(a.output_padding[i]) +
           " must be below the stride or the dilation");
    // Each input row i reaches output rows i·stride − pad + r·dilation (r < kernel); checked
    // in double first, so that a huge stride or kernel cannot wrap the int64s.
    const double reach = (static_cast<double>(x.shape[2 + i]) - 1) * static_cast<double>(a.stride[i]) +
                         static_cast<double>(a.dilation[i]) * static_cast<double>(a.kernel[i] - 1);
    if (reach > kMaxCount) fail("output size " + count_str(reach) + " is more than 2^53");
    t.shape[2 + i] = (x.shape[2 + i] - 1) * a.stride[i] - a.pads[i] - a.pads[i + 2] +
                     a.dilation[i] * (a.kernel[i] - 1) + a.output_padding[i] + 1;
  }
  need_positive(t.shape, "ConvTranspose output");
  return t;
}

Tensor conv_transpose_grad_input(const Tensor& dy, const OpAttrs& a) {
  const Tensor x = gradient_tensor(dy, a);
  same_shape(dy.shape, conv_transpose(x, a).shape, "output gradient");
  return x;
}

Tensor conv_grad_weight(const Tensor& x, const Tensor& dy, const OpAttrs& a) {
  same_shape(dy.shape, conv(x, a).shape, "output gradient");
  return Tensor{{a.out_channels, x.shape[1] / a.groups, a.kernel[0], a.kernel[1]},
                dy.elem_bytes,
                std::nullopt};
}

Tensor gemm_grad_input(const Tensor& dy, const OpAttrs& a) {
  if (a.in_channels <= 0) fail("needs in_channels (input features) > 0");
  if (dy.shape.size() < 2 || dy.shape.back() != a.out_channels)
    fail("output gradient " + shape_str(dy.shape) + " does not end in " +
         std::to_string(a.out_channels) + " features");
  Tensor t{dy.shape, dy.elem_bytes, std::nullopt};
  t.shape.back() = a.in_channels;
  return t;
}

Tensor gemm_grad_weight(const Tensor& x, const Tensor& dy, const OpAttrs& a) {
  same_shape(dy.shape, gemm(x, a).shape, "output gradient");
  return Tensor{{a.out_channels, x.shape.back()}, dy.elem_bytes, std::nullopt};
}

Tensor grad(const Tensor& dy, const OpAttrs& a) {
  if (a.grad_of == OpKind::Slice) {  // dY in its place along the axis, zeros around it
    OpAttrs fwd = a;
    fwd.shape = dy.shape;
    const Tensor x = gradient_tensor(dy, a);
    slice(x, fwd);  // dY must be that slice of the forward input
    return x;
  }
  if (a.grad_of == OpKind::Resize) {  // dY added back onto the inputs each value was read from
    const Tensor x = gradient_tensor(dy, a);
    OpAttrs fwd = a;
    fwd.shape = dy.shape.size() == 4 ? Shape{dy.shape[2], dy.shape[3]} : Shape{};
    same_shape(dy.shape, resize({&x}, fwd).shape, "output gradient");
    return x;
  }
  if (a.grad_of == OpKind::Gather) {  // the table: dY's rows added onto the rows picked
    const Tensor x = gradient_tensor(dy, a);
    const std::size_t axis = norm_axis(a.axis, x.shape.size());
    const Shape& t = x.shape;
    const auto before = static_cast<std::ptrdiff_t>(axis);
    const auto after = static_cast<std::ptrdiff_t>(t.size() - axis - 1);  // dY ends with them
    const bool ok = dy.shape.size() + 1 >= t.size() &&
                    std::equal(t.begin(), t.begin() + before, dy.shape.begin()) &&
                    std::equal(t.end() - after, t.end(), dy.shape.end() - after);
    if (!ok)
      fail("output gradient " + shape_str(dy.shape) + " is not a lookup of rows of " +
           shape_str(t));
    return x;
  }
  // A norm's parameter gradients: the scale's and the shift's side by side on the leading
  // axis, each dY summed to the parameters' shape.
  if ((a.grad_of == OpKind::BatchNorm || a.grad_of == OpKind::LayerNorm) && a.grad_input == 1 &&
      a.shape.size() > 1 && a.shape[0] == 2) {
    Shape each = a.shape;
    each[0] = 1;
    if (broadcast(dy.shape, each) != dy.shape)
      fail("parameter gradient shape " + shape_str(a.shape) + " (two of " + shape_str(each) +
           ") does not broadcast to the output gradient " + shape_str(dy.shape));
    return gradient_tensor(dy, a);
  }
  // The gradient of a broadcast operand is the output gradient summed over the broadcast axes.
  if (broadcast(dy.shape, a.shape) != dy.shape)
    fail("gradient shape " + shape_str(a.shape) + " does not broadcast to the output gradient " +
         shape_str(dy.shape));
  return gradient_tensor(dy, a);
}

Tensor pool_grad(const Tensor& dy, const OpAttrs& a) {
  const Tensor x = gradient_tensor(dy, a);
  if (a.grad_of == OpKind::MaxPool || a.grad_of == OpKind::AvgPool) {
    need_rank(x, 4, "PoolGrad");
    same_shape(dy.shape, window_op(x, a, x.shape[1], "PoolGrad").shape, "output gradient");
  } else if (broadcast(dy.shape, x.shape) != x.shape) {  // global pooling, kept dimensions
    fail("output gradient " + shape_str(dy.shape) + " does not broadcast to " + shape_str(x.shape));
  }
  return x;
}

Tensor slice(const Tensor& x, const OpAttrs& a) {
  const Tensor t = gradient_tensor(x, a);
  const std::size_t axis = norm_axis(a.axis, x.shape.size());
  if (a.step < 1) fail("step " + std::to_string(a.step) + " must be at least 1");
  bool ok = t.shape.size() == x.shape.size() && a.offset >= 0;
  for (std::size_t i = 0; ok && i < t.shape.size(); ++i)  // the last index taken is inside
    ok = i == axis ? t.shape[i] > 0 && a.offset < x.shape[i] &&
                         t.shape[i] - 1 <= (x.shape[i] - 1 - a.offset) / a.step  // no overflow
                   : t.shape[i] == x.shape[i];
  if (!ok)
    fail("slice " + shape_str(t.shape) + " at " + std::to_string(a.offset) +
         (a.step > 1 ? " step " + std::to_string(a.step) : std::string()) + " along axis " +
         std::to_string(a.axis) + " leaves " + shape_str(x.shape));
  return t;
}

Tensor onnx_slice(const std::vector<const Tensor*>& in, OpAttrs& a) {
  const Tensor& x = *in[0];
  const char* names[] = {"", "starts", "ends", "axes", "steps"};
  std::vector<std::int64_t> v[5];
  for (std::size_t i = 1; i < in.size(); ++i) {
    if (!in[i]->value)
      fail(std::string(names[i]) + " (input " + std::to_string(i) +
           ") is not known at compile time");
    v[i] = *in[i]->value;
  }
  if (v[3].empty())
    for (std::size_t i = 0; i < v[1].size(); ++i) v[3].push_back(static_cast<std::int64_t>(i));
  if (v[2].size() != v[1].size() || v[3].size() != v[1].size() ||
      (in.size() > 4 && v[4].size() != v[1].size()))
    fail("starts " + shape_str(v[1]) + ", ends " + shape_str(v[2]) + " and axes " +
         shape_str(v[3]) + " differ in length");
  Tensor t{x.shape, x.elem_bytes, std::nullopt};
  int sliced = 0;
  a.axis = 0;
  a.offset = 0;
  a.step = 1;
  for (std::size_t i = 0; i < v[1].size(); ++i) {
    const std::int64_t step = in.size() > 4 ? v[4][i] : 1;
    if (step < 1)
      fail("step " + std::to_string(step) + " is not supported (only positive ones)");
    const std::size_t axis = norm_axis(v[3][i], x.shape.size(), "slice axis");
    const std::int64_t dim = x.shape[axis];
    auto clamp = [dim](std::int64_t p) {
      return std::clamp(p < 0 ? p + dim : p, std::int64_t{0}, dim);
    };
    const std::int64_t lo = clamp(v[1][i]), hi = clamp(v[2][i]);
    if (hi <= lo)
      fail("slice [" + std::to_string(v[1][i]) + ", " + std::to_string(v[2][i]) + ") of axis " +
           std::to_string(axis) + " (" + std::to_string(dim) + ") is empty");
    if (hi - lo == dim && step == 1) continue;
    if (++sliced > 1) fail("slices more than one axis; only one is supported");
    a.axis = static_cast<std::int64_t>(axis);
    a.offset = lo;
    a.step = step;
    t.shape[axis] = 1 + (hi - lo - 1) / step;  // ⌈(hi − lo) / step⌉ without overflow
  }
  a.shape = t.shape;
  if (x.value && x.shape.size() == 1) {
    t.value.emplace();
    for (std::int64_t i = 0; i < t.shape[0]; ++i)
      t.value->push_back((*x.value)[static_cast<std::size_t>(a.offset + i * a.step)]);
  }
  return t;
}

}  // namespace nocflow::optimizer::shape_rules
