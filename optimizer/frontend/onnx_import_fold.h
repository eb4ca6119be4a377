// SPDX-License-Identifier: MIT
#pragma once
// Index helpers shared by the two halves of import-time folding (onnx_import_fold.cpp: data
// movement; onnx_import_fold_math.cpp: arithmetic); the walks themselves are graph/tensor_walk.h.
#include <cstdint>
#include <vector>

#include "optimizer/frontend/onnx_importer.h"
#include "optimizer/graph/tensor_walk.h"

namespace nocflow::optimizer::onnx_import_detail::fold {

using Ints = std::vector<std::int64_t>;

/// Elements of a tensor of shape `dims` (1 for a scalar).
std::int64_t count(const Shape& dims);

/// Whether a tensor of shape `dims` has at most kMaxFoldElements elements (and no negative
/// dimension), checked without overflow.
bool fits(const Shape& dims);

/// `axis` in [-rank, rank) as [0, rank), or -1 when outside.
std::int64_t normalised(std::int64_t axis, std::size_t rank);

/// `out`'s values: `x`'s walked by `offset` (of whichever kind `x` holds).
void take(const ConstInfo& x, const std::vector<Ints>& offset, ConstInfo& out);

/// The NumPy broadcast of `in`'s shapes into `dims`, and per input the offsets that walk it over
/// that shape (a length-1 axis repeated). False if they do not broadcast.
bool broadcast(const std::vector<const ConstInfo*>& in, Shape& dims,
               std::vector<std::vector<Ints>>& offsets);

}  // namespace nocflow::optimizer::onnx_import_detail::fold
