// SPDX-License-Identifier: MIT
#pragma once
// Shape inference: each node's output tensor from its inputs' tensors and its attributes, one
// rule per operator kind, visited in topological order. Small integer tensors (shapes and
// indices) also get their values, so that shape arithmetic resolves at compile time.
#include <string>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// Fills every node's output. Throws InputError naming the node (and both shapes for a
/// mismatch) when a rule fails, and naming a node on a cycle if the graph has one.
void infer_shapes(Graph& graph);

/// Fills node `id`'s output from its inputs' outputs (already filled), throwing as
/// infer_shapes does: the step infer_shapes takes per node.
void infer_node(Graph& graph, NodeId id);

/// The rule for one operator: output tensor of `kind` with `attrs` reading `inputs`.
/// Throws InputError with a message that does not name the node (the caller adds it).
/// For Fused, also fills the parts' input and output tensors. A tensor of more than 2^53
/// elements or bytes, or a layer of more than 2^53 MACs, is refused: sizes, costs and cycles
/// derived from it stay exact in int64 and double.
Tensor infer_output(OpKind kind, OpAttrs& attrs, const std::vector<const Tensor*>& inputs);

/// A pool's own padding must be smaller than its window: a window wholly in padding has nothing
/// to pool (PyTorch wants pad <= kernel / 2, ONNX Runtime pad < kernel). The reason when `a`'s
/// is not, else "". Zeros of an explicit Pad folded into the pads later are data, not this.
std::string pool_pad_problem(const OpAttrs& a);

}  // namespace nocflow::optimizer
