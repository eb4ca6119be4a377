// SPDX-License-Identifier: MIT
#pragma once
// Shared by the shape rules (shape_rules.cpp: forward operators; shape_rules_training.cpp:
// training kinds and Slice; shape_rules_values.cpp: shape arithmetic; resize.cpp: Resize).
// Everyone else calls infer_output (shape_inference.h).
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer::shape_rules {

/// Element, byte and operation counts stop at 2^53: costs multiply them with cycles and bytes
/// later, and up to there every integer is exact in a double as well as an int64.
inline constexpr double kMaxCount = 9007199254740992.0;
/// A count as text: exact up to 2^53, "1e+20" above.
std::string count_str(double x);

/// Throws InputError(msg).
[[noreturn]] void fail(const std::string& msg);
/// Axis in [-rank, rank) to [0, rank); `what` names it in the error.
std::size_t norm_axis(std::int64_t axis, std::size_t rank, const char* what = "axis");
void need_rank(const Tensor& t, std::size_t rank, const char* what);
void need_positive(const Shape& s, const char* what);
/// The NumPy broadcast of two shapes.
Shape broadcast(const Shape& a, const Shape& b);
/// A sliding window's output (conv or pool: `what`) with `channels` channels.
Tensor window_op(const Tensor& x, const OpAttrs& a, std::int64_t channels, const char* what);
/// A convolution's (or transposed one's) out_channels, groups and weight against input `x`.
void check_channels(const Tensor& x, const OpAttrs& a);
Tensor conv(const Tensor& x, const OpAttrs& a);
Tensor gemm(const Tensor& x, const OpAttrs& a);

// shape_rules_training.cpp
Tensor conv_grad_input(const Tensor& dy, const OpAttrs& a);
/// A transposed convolution (ONNX ConvTranspose): weights C × K/groups × kh × kw.
Tensor conv_transpose(const Tensor& x, const OpAttrs& a);
/// A ConvTranspose's input gradient (a convolution of dY with its weights), `a` its attributes.
Tensor conv_transpose_grad_input(const Tensor& dy, const OpAttrs& a);
Tensor conv_grad_weight(const Tensor& x, const Tensor& dy, const OpAttrs& a);
Tensor gemm_grad_input(const Tensor& dy, const OpAttrs& a);
Tensor gemm_grad_weight(const Tensor& x, const Tensor& dy, const OpAttrs& a);
Tensor grad(const Tensor& dy, const OpAttrs& a);
Tensor pool_grad(const Tensor& dy, const OpAttrs& a);
/// Slice with its axis, offset and shape in `a` (autodiff's, or an ONNX Slice once folded).
Tensor slice(const Tensor& x, const OpAttrs& a);
/// An ONNX Slice: data, starts, ends[, axes[, steps]], all known at compile time. Takes the one
/// axis whose range is not whole into `a` (axis, offset, shape), so constant folding can drop
/// the operands; slices a compile-time value (shape arithmetic) along.
Tensor onnx_slice(const std::vector<const Tensor*>& in, OpAttrs& a);

// shape_rules_values.cpp
/// The value of an element-wise Add, Sub, Mul, Div or Mod (`a.fmod`) of two 1-D compile-time values
/// (numpy broadcasting of a single value); none when either has none or for another operator.
std::optional<std::vector<std::int64_t>> binary_value(OpKind k, const OpAttrs& a, const Tensor& x,
                                                      const Tensor& y);
/// ONNX Gather (indices checked against the axis; the value of a 1-D value's elements).
Tensor gather(const Tensor& data, const Tensor& idx, const OpAttrs& a);
/// ONNX Equal and Where: folded when shape arithmetic (values known at compile time, 1-D), else
/// element-wise layers (broadcast shape, values unknown).
Tensor equal(const std::vector<const Tensor*>& in);
Tensor where(const std::vector<const Tensor*>& in);
/// ONNX Expand: the input broadcast with the target shape (both ways); a tensor of run time or
/// a weight only to its own shape (an identity, which the identity pass removes).
Tensor expand(const Tensor& x, const Tensor& target);

// resize.cpp
/// A Resize of an NCHW tensor: to the sizes in `a.shape` (H, W), or an ONNX sizes operand
/// (input 1, known at compile time; taken into `a.shape`), else to ⌊input × `a.scales`⌋. Fills
/// in what was not given, so that the transformation's scales are ONNX's.
Tensor resize(const std::vector<const Tensor*>& in, OpAttrs& a);

}  // namespace nocflow::optimizer::shape_rules
