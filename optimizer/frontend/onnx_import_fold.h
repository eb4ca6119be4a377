// SPDX-License-Identifier: MIT
#pragma once
// Index helpers shared by the two halves of import-time folding (onnx_import_fold.cpp: data
// movement; onnx_import_fold_math.cpp: arithmetic).
#include <cstdint>
#include <vector>

#include "optimizer/frontend/onnx_importer.h"

namespace nocflow::optimizer::onnx_import_detail::fold {

using Ints = std::vector<std::int64_t>;

/// Elements of a tensor of shape `dims` (1 for a scalar).
std::int64_t count(const Shape& dims);

/// Whether a tensor of shape `dims` has at most kMaxFoldElements elements (and no negative
/// dimension), checked without overflow.
bool fits(const Shape& dims);

/// Row-major strides of a tensor of shape `dims`.
Shape strides_of(const Shape& dims);

/// Offsets along an axis of `length` whose elements lie `stride` apart.
Ints strided(std::int64_t length, std::int64_t stride);

/// `axis` in [-rank, rank) as [0, rank), or -1 when outside.
std::int64_t normalised(std::int64_t axis, std::size_t rank);

/// The elements of `data` at flat index Σ_a offset[a][i_a], for every output index (i_0, i_1, ...)
/// in row-major order, the output's axis a being offset[a].size() long: a gather along each axis
/// (offset = picked index × stride), a transpose (output axis a walks input axis perm[a]'s
/// stride) or a broadcast (a stride of 0 along an axis of length 1).
template <typename V>
std::vector<V> walk(const std::vector<V>& data, const std::vector<Ints>& offset) {
  const std::size_t rank = offset.size();
  std::int64_t total = 1;
  for (const Ints& o : offset) total *= static_cast<std::int64_t>(o.size());
  std::vector<V> out;
  out.reserve(static_cast<std::size_t>(total));
  Ints at(rank, 0);
  for (std::int64_t i = 0; i < total; ++i) {
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < rank; ++a) flat += offset[a][static_cast<std::size_t>(at[a])];
    out.push_back(data[static_cast<std::size_t>(flat)]);
    for (std::size_t a = rank; a-- > 0;)
      if (++at[a] < static_cast<std::int64_t>(offset[a].size()))
        break;
      else
        at[a] = 0;
  }
  return out;
}

/// `out`'s values: `x`'s walked by `offset` (of whichever kind `x` holds).
void take(const ConstInfo& x, const std::vector<Ints>& offset, ConstInfo& out);

/// The NumPy broadcast of `in`'s shapes into `dims`, and per input the offsets that walk it over
/// that shape (a length-1 axis repeated). False if they do not broadcast.
bool broadcast(const std::vector<const ConstInfo*>& in, Shape& dims,
               std::vector<std::vector<Ints>>& offsets);

}  // namespace nocflow::optimizer::onnx_import_detail::fold
