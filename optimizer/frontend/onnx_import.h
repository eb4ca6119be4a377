// SPDX-License-Identifier: MIT
#pragma once
// ONNX import: reads a model's graph (never its weight data: initializers stored as external
// data need not exist), maps operators onto the IR and runs nocflow's own shape inference, then
// runs ONNX's and checks the two agree (ONNX's rules trust what nocflow checks first: they
// crash on zero strides or a weight of another rank than its input). Conv/Gemm weights and biases
// become attributes (their shapes); MatMul by a 2-D initializer becomes Gemm; other
// initializers used as operands become Constant nodes (trainable when floating point).
#include <cstdint>
#include <string>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// The newest opset of the default ONNX domain whose operator semantics the importer reads.
/// Its rules follow opset 18 (Split's num_outputs, ReduceMean's axes as an input, Resize's axes
/// and keep_aspect_ratio_policy, Pad's axes refused), 19 (Resize's half_pixel_symmetric) and
/// 20 (Gelu); opset 21 changed only the types the operators it imports take (int4, float8:
/// the changed GroupNormalization it does not import). A model of a newer opset imports as one
/// of this opset, with a note (Graph::notes); Debian's onnx 1.12 knows opsets up to 17, so its
/// shape inference, which the import checks against, reads newer operators as their opset-17
/// forms (or not at all).
inline constexpr std::int64_t kNewestOnnxOpset = 21;

/// Throws InputError naming the file for an unreadable model, an unsupported operator (type and
/// node), window attributes or parameter shapes that do not fit the operator (node), a dynamic or
/// non-positive input dimension, a tensor that is used but never produced or produced twice, or
/// a shape-inference error (node). `batch` > 0 sets a first input dimension exported as dynamic
/// (PyTorch's `dynamic_axes`); a static one is left to the caller to check. `float_bytes` > 0:
/// floating-point tensors (FLOAT, DOUBLE, FLOAT16, BFLOAT16) take this many bytes each instead
/// of their data type's (an fp32 export run as fp16: 2). A model whose default-domain opset is
/// newer than kNewestOnnxOpset gets a note saying so.
Graph import_onnx(const std::string& path, std::int64_t batch = 0, int float_bytes = 0);

}  // namespace nocflow::optimizer
