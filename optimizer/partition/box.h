// SPDX-License-Identifier: MIT
#pragma once
// Half-open index ranges and 4-D boxes over a tensor seen as N×C×H×W (view4): the currency of
// region arithmetic between producer blocks and consumer needs.
#include <algorithm>
#include <array>
#include <cstdint>
#include <numeric>
#include <vector>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer {

/// The indices lo, lo + step, lo + 2·step, ... below hi; empty when hi <= lo. A strided range
/// (step > 1) is kept normalised: hi is one past its last index, so hi − 1 is an index of it.
/// Strided ranges are what a convolution or Slice with gaps between its windows reads (a 1×1
/// stride-2 convolution reads every other row); everything else is contiguous (step 1).
struct Range {
  std::int64_t lo = 0;
  std::int64_t hi = 0;
  std::int64_t step = 1;
  std::int64_t size() const { return hi > lo ? (hi - lo + step - 1) / step : 0; }
  bool empty() const { return hi <= lo; }
  bool contains(std::int64_t i) const { return i >= lo && i < hi && (i - lo) % step == 0; }
  bool operator==(const Range& o) const { return lo == o.lo && hi == o.hi && step == o.step; }
};

/// first, first + step, ... up to last (inclusive), normalised; empty when last < first.
inline Range strided(std::int64_t first, std::int64_t last, std::int64_t step) {
  if (last < first) return {0, 0};
  if (step <= 1) return {first, last + 1};
  return {first, first + (last - first) / step * step + 1, step};
}

/// The indices of `a` in [lo, hi).
inline Range clip(Range a, std::int64_t lo, std::int64_t hi) {
  if (a.step == 1) return {std::max(a.lo, lo), std::min(a.hi, hi)};
  const std::int64_t first = lo <= a.lo ? a.lo : a.lo + (lo - a.lo + a.step - 1) / a.step * a.step;
  return strided(first, std::min(a.hi, hi) - 1, a.step);
}

/// The indices in both. Two strided ranges meet on a lattice of step lcm(a.step, b.step):
/// its first index is found among the first lcm / a.step indices of `a` at or after b.lo.
inline Range intersect(Range a, Range b) {
  if (b.step == 1) return clip(a, b.lo, b.hi);
  if (a.step == 1) return clip(b, a.lo, a.hi);
  const Range both = clip(a, b.lo, b.hi);  // a's indices within b's bounds
  const std::int64_t lcm = a.step / std::gcd(a.step, b.step) * b.step;
  for (std::int64_t i = both.lo; i < both.hi && i < both.lo + lcm; i += a.step)
    if (b.contains(i)) return strided(i, both.hi - 1, lcm);
  return {0, 0};
}

/// Axes of the 4-D view, in order.
enum Axis4 : int { kN = 0, kC = 1, kH = 2, kW = 3 };

struct Box {
  std::array<Range, 4> r;
  std::int64_t volume() const {
    std::int64_t v = 1;
    for (const Range& x : r) v *= x.size();
    return v;
  }
  bool empty() const { return volume() == 0; }
};

inline Box intersect(const Box& a, const Box& b) {
  Box o;
  for (int i = 0; i < 4; ++i) o.r[i] = intersect(a.r[i], b.r[i]);
  return o;
}

inline bool operator==(const Box& a, const Box& b) {
  return a.r == b.r;
}

/// The elements in any of `boxes`, each counted once: inclusion–exclusion, |A ∪ rest| = |A| +
/// |rest| − |(A ∩ each of rest) united|, after dropping empty boxes and repeats. Exponential in
/// the boxes that overlap one another: for the handful a PE holds of one tensor.
inline std::int64_t union_volume(std::vector<Box> boxes) {
  std::vector<Box> kept;
  for (const Box& b : boxes)
    if (!b.empty() && std::find(kept.begin(), kept.end(), b) == kept.end()) kept.push_back(b);
  if (kept.empty()) return 0;
  const Box first = kept.back();
  kept.pop_back();
  std::vector<Box> overlaps;
  for (const Box& b : kept) overlaps.push_back(intersect(first, b));
  return first.volume() + union_volume(std::move(kept)) - union_volume(std::move(overlaps));
}

using Dims4 = std::array<std::int64_t, 4>;

/// A tensor shape seen as N×C×H×W, following part_dim.h: rank 4 as is; rank 3 N×S×D → N, D, S, 1;
/// rank 2 N×F → N, F, 1, 1; rank 1 → N, 1, 1, 1; rank r ≥ 5 → the leading r − 3 axes flattened
/// into N (row-major), then the last three as C, H, W (a Swin window tensor [3, 64, 3, 49, 32]:
/// N = 192 windows of q, k and v, C = 3 heads, H = 49 tokens, W = 32 features).
inline Dims4 view4(const Shape& s) {
  switch (s.size()) {
    case 0: return {1, 1, 1, 1};
    case 1: return {s[0], 1, 1, 1};
    case 2: return {s[0], s[1], 1, 1};
    case 3: return {s[0], s[2], s[1], 1};
    case 4: return {s[0], s[1], s[2], s[3]};
    default: {
      const std::size_t lead = s.size() - 3;
      std::int64_t n = 1;
      for (std::size_t i = 0; i < lead; ++i) n *= s[i];
      return {n, s[lead], s[lead + 1], s[lead + 2]};
    }
  }
}

/// The view axis of tensor axis `axis` (negative counts from the end) for a tensor of `rank`.
inline int view_axis(std::int64_t axis, std::size_t rank) {
  const auto a = static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis);
  if (a == 0) return kN;
  if (rank <= 2) return kC;
  if (rank == 3) return a == 1 ? kH : kC;
  if (rank >= 4 && a + 3 >= rank) return static_cast<int>(a + 4 - rank);  // the last three
  return kN;  // rank ≥ 5: an axis of the flattened lead
}

inline Box full_box(const Dims4& d) { return {{Range{0, d[0]}, Range{0, d[1]}, Range{0, d[2]}, Range{0, d[3]}}}; }

}  // namespace nocflow::optimizer
