// SPDX-License-Identifier: MIT
#pragma once
// Walking a row-major tensor's values by per-axis offsets: a gather, a transpose or a NumPy
// broadcast of known values (the ONNX importer's compile-time tensors, constant folding's).
#include <cstdint>
#include <vector>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer {

/// Row-major strides of a tensor of shape `dims`.
inline Shape strides_of(const Shape& dims) {
  Shape strides(dims.size(), 1);
  for (std::size_t a = dims.size(); a-- > 1;) strides[a - 1] = strides[a] * dims[a];
  return strides;
}

/// Offsets along an axis of `length` whose elements lie `stride` apart.
inline std::vector<std::int64_t> strided(std::int64_t length, std::int64_t stride) {
  std::vector<std::int64_t> o(static_cast<std::size_t>(length));
  for (std::int64_t i = 0; i < length; ++i) o[static_cast<std::size_t>(i)] = i * stride;
  return o;
}

/// The per-axis offsets (walk's) that read a tensor of shape `in` broadcast NumPy-style to
/// `dims`: its axes aligned on the right, an axis of length 1 (or absent) repeated.
inline std::vector<std::vector<std::int64_t>> broadcast_offsets(const Shape& in,
                                                                const Shape& dims) {
  Shape aligned(dims.size() - in.size(), 1);
  aligned.insert(aligned.end(), in.begin(), in.end());
  const Shape strides = strides_of(aligned);
  std::vector<std::vector<std::int64_t>> o;
  for (std::size_t a = 0; a < dims.size(); ++a)
    o.push_back(strided(dims[a], aligned[a] == 1 ? 0 : strides[a]));
  return o;
}

/// The elements of `data` at flat index Σ_a offset[a][i_a], for every output index (i_0, i_1, ...)
/// in row-major order, the output's axis a being offset[a].size() long: a gather along each axis
/// (offset = picked index × stride), a transpose (output axis a walks input axis perm[a]'s
/// stride) or a broadcast (a stride of 0 along an axis of length 1).
template <typename V>
std::vector<V> walk(const std::vector<V>& data,
                    const std::vector<std::vector<std::int64_t>>& offset) {
  const std::size_t rank = offset.size();
  std::int64_t total = 1;
  for (const auto& o : offset) total *= static_cast<std::int64_t>(o.size());
  std::vector<V> out;
  out.reserve(static_cast<std::size_t>(total));
  std::vector<std::int64_t> at(rank, 0);
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

}  // namespace nocflow::optimizer
