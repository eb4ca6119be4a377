// SPDX-License-Identifier: MIT
#pragma once
// A tensor element's place in its N×C×H×W view (optimizer/partition/box.h, view4) and back,
// written out element by element for the brute-force region tests.
#include <array>
#include <cstdint>
#include <vector>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer {

using Index = std::vector<std::int64_t>;
using ViewIndex = std::array<std::int64_t, 4>;

/// Element `i` of a tensor of shape `s` in its view4: rank 3 N×S×D as (N, D, S, 1), rank 2 as
/// (N, F, 1, 1), rank ≥ 5 the leading axes' row-major index, then the last three axes.
inline ViewIndex view_index(const Index& i, const Shape& s) {
  switch (s.size()) {
    case 0:
      return {0, 0, 0, 0};
    case 1:
      return {i[0], 0, 0, 0};
    case 2:
      return {i[0], i[1], 0, 0};
    case 3:
      return {i[0], i[2], i[1], 0};
    case 4:
      return {i[0], i[1], i[2], i[3]};
    default: {
      const std::size_t lead = s.size() - 3;
      std::int64_t n = 0;
      for (std::size_t k = 0; k < lead; ++k) n = n * s[k] + i[k];
      return {n, i[lead], i[lead + 1], i[lead + 2]};
    }
  }
}

/// The tensor index of view element `v` of a tensor of shape `s` (view_index's inverse).
inline Index tensor_index(const ViewIndex& v, const Shape& s) {
  Index i(s.size());
  switch (s.size()) {
    case 0:
      break;
    case 1:
      i[0] = v[0];
      break;
    case 2:
      i[0] = v[0], i[1] = v[1];
      break;
    case 3:
      i[0] = v[0], i[1] = v[2], i[2] = v[1];
      break;
    case 4:
      i = {v[0], v[1], v[2], v[3]};
      break;
    default: {
      const std::size_t lead = s.size() - 3;
      std::int64_t n = v[0];
      for (std::size_t k = lead; k-- > 0;) {
        i[k] = n % s[k];
        n /= s[k];
      }
      i[lead] = v[1], i[lead + 1] = v[2], i[lead + 2] = v[3];
    }
  }
  return i;
}

}  // namespace nocflow::optimizer
