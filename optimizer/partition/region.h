// SPDX-License-Identifier: MIT
#pragma once
// What a consumer node needs of one input: given the output block it computes (and its INPP
// slice of the reduction), the box of the input tensor it reads, in the input's N×C×H×W view.
//
// Rules by operator: convolution and pooling read their window (kernel, stride, dilation,
// padding, clipped to the tensor: the halo); convolution reads its INPP slice of the input
// channels (all of them without INPP; grouped convolutions read the groups their output
// channels belong to); a ConvTranspose reads the input rows whose taps land in its block (and
// its INPP slice of the input channels); Gemm and MatMul read their slice of the inner dimension
// (Gemm at the samples, tokens or positions of their block: it works per position); element-wise
// operators, normalisations and softmax read the same block (broadcast axes whole); concat
// reads the part of its block that falls in that input; global pooling and reductions read
// whole spatial extents; reshapes and transposes read the elements their block is a copy of
// (relayout.h); everything else reads its batch slice whole (or the whole tensor when the batch
// does not survive). Fused nodes compose their parts' rules.
#include "optimizer/graph/graph.h"
#include "optimizer/partition/box.h"

namespace nocflow::optimizer {

/// The box of input `input` of node `consumer` that the block `out_block` with reduction slice
/// `reduction` needs. Empty box: that input is not needed (a concat input outside the block).
Box input_region(const Graph& graph, NodeId consumer, int input, const Box& out_block,
                 Range reduction);

/// The extent of the reduction an operator's INPP splits (a convolution's input channels per
/// group, a product's inner dimension, a weight gradient's batch), 1 where it has none.
std::int64_t reduction_size(OpKind kind, const OpAttrs& attrs,
                            const std::vector<const Tensor*>& inputs);

/// The part of Fused node `n` that reads its input `input` (0: the head).
std::size_t fused_part_of_input(const Node& n, int input);

}  // namespace nocflow::optimizer
