// SPDX-License-Identifier: MIT
#pragma once
// ONNX Resize along one spatial axis: which input indices each output index reads (the
// coordinate transformation, then the interpolation's taps: both neighbours for linear, four
// for cubic, also where one weighs nothing, clamped to the input, as PyTorch's kernels load
// them). One place for the shape rule, the cost, the input block a PE needs
// (partition/region.cpp) and the output gradient block its gradient needs.
#include <cstdint>
#include <utility>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer {

/// One axis of a Resize: input and output lengths, and the scale its transformation uses
/// (as ONNX: the given scale, or output over input length when sizes were given; align_corners
/// uses the lengths, as PyTorch and onnxruntime do, where ONNX's reference uses input × scale).
struct ResizeAxis {
  std::int64_t in = 1;
  std::int64_t out = 1;
  double scale = 1;
};

/// Axis `i` (0: H, 1: W) of a Resize of NCHW tensor `in` to `out`.
ResizeAxis resize_axis(const OpAttrs& a, const Shape& in, const Shape& out, int i);

/// Half-open index range [first, end); empty when end <= first.
using IndexRange = std::pair<std::int64_t, std::int64_t>;

/// Throws InputError unless `a`'s mode, coordinate_transformation_mode and nearest_mode are
/// ones nocflow resizes with (every ONNX one but tf_crop_and_resize, which reads a region of
/// interest).
void check_resize_modes(const OpAttrs& a);

/// The input indices output index `x` reads: [first, end).
IndexRange resize_taps(const OpAttrs& a, const ResizeAxis& axis, std::int64_t x);
/// The input indices outputs [lo, hi) read.
IndexRange resize_inputs(const OpAttrs& a, const ResizeAxis& axis, IndexRange outputs);
/// The outputs that read any of inputs [lo, hi): the output gradient a block of the input
/// gradient needs.
IndexRange resize_outputs(const OpAttrs& a, const ResizeAxis& axis, IndexRange inputs);

/// Input values an output value of an axis combines: 1 (nearest, or an axis not resized), 2
/// (linear), 4 (cubic).
std::int64_t resize_taps_per_output(const OpAttrs& a, const ResizeAxis& axis);

}  // namespace nocflow::optimizer
