// SPDX-License-Identifier: MIT
#pragma once
// Relayouts: Reshape and Flatten (the row-major order kept, the axes regrouped) and Transpose
// (the axes permuted). Each output element is one input element, so a block of the output reads
// the input elements it is a copy of; the box that holds them is what a PE computing the block
// needs.
//
// Reshape: the two shapes fall into groups of axes whose element counts agree (running products
// from the left meet); inside a group the row-major index is the same on both sides. A block's
// indices in a group span [lo, hi) (exact when only the group's most significant split axis is
// partial, else its hull); the input box is that span's bounding ranges on the group's input
// axes. Transpose: the output axis ranges, permuted back.
//
// A dimension splits a relayout (relayout_factors) by the factors whose blocks each read exactly
// their own elements: every factor of a Transpose axis; for a Reshape axis that leads its group,
// blocks that nest in the input's axes (merging 12 heads of 64 into 768 features: blocks of 64
// and its multiples, or of a divisor of 64, not of 96); other axes, none but 1.
#include <array>
#include <vector>

#include "optimizer/graph/node.h"
#include "optimizer/partition/box.h"
#include "optimizer/partition/part_dim.h"

namespace nocflow::optimizer {

/// One range per tensor axis.
using AxisRanges = std::vector<Range>;

/// The tensor-axis ranges of a box over `s`'s view4 (ranks ≥ 5: N's linear range, bounded).
AxisRanges axis_ranges(const Box& view, const Shape& s);

/// The view4 box of tensor-axis ranges over `s` (ranks ≥ 5: N is the leading axes' linear hull).
Box view_box(const AxisRanges& r, const Shape& s);

/// The box of the input (shape `in`, view4) that the output block `block` (view4 of `out`) of a
/// relayout reads.
Box relayout_region(OpKind kind, const OpAttrs& a, const Shape& in, const Shape& out,
                    const Box& block);

/// Per partition dimension (indexed by PartDim), the factors f of its output axis whose blocks
/// (size / f along the axis) each read exactly as many input elements as they hold, ascending
/// ({1} for INPP and absent axes), up to kMaxPes: each is checked block by block, and an axis
/// of 2^28 took hours.
std::array<std::vector<std::int64_t>, 5> relayout_factors(OpKind kind, const OpAttrs& a,
                                                          const Shape& in, const Shape& out);

/// The dimensions with a factor above 1 in relayout_factors' answer.
PartDimSet factor_dims(const std::array<std::vector<std::int64_t>, 5>& factors);

/// The dimensions that split a relayout: factor_dims of its relayout_factors.
PartDimSet relayout_dims(OpKind kind, const OpAttrs& a, const Shape& in, const Shape& out);

}  // namespace nocflow::optimizer
