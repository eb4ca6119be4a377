// SPDX-License-Identifier: MIT
#pragma once
// ONNX import: reads a model's graph (never its weight data: initializers stored as external
// data need not exist), runs ONNX shape inference, maps operators onto the IR and runs
// nocflow's own shape inference, checking it against ONNX's. Conv/Gemm weights and biases
// become attributes (their shapes); MatMul by a 2-D initializer becomes Gemm; other
// initializers used as operands become Constant nodes (trainable when floating point).
#include <string>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// Throws InputError naming the file for an unreadable model, an unsupported operator (type and
/// node), a dynamic input shape, or a tensor that is used but never produced.
Graph import_onnx(const std::string& path);

}  // namespace nocflow::optimizer
