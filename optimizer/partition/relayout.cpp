// SPDX-License-Identifier: MIT
#include "optimizer/partition/relayout.h"

#include <cstddef>

#include "noc/base/limits.h"
#include "optimizer/partition/choice.h"

namespace nocflow::optimizer {
namespace {

/// The row-major linear indices over axes [first, last) of `s` that `r` spans: exact when every
/// axis after the first partial one is whole, else the hull.
Range linear_span(const AxisRanges& r, const Shape& s, std::size_t first, std::size_t last) {
  std::int64_t lo = 0, hi = 0, stride = 1;
  for (std::size_t i = last; i-- > first;) {
    if (r[i].empty()) return {0, 0};
    lo += r[i].lo * stride;
    hi += (r[i].hi - 1) * stride;
    stride *= s[i];
  }
  return {lo, hi + 1};
}

/// The bounding ranges, on axes [first, last) of `s`, of the linear indices `span`.
void unflatten(Range span, const Shape& s, std::size_t first, std::size_t last, AxisRanges& out) {
  std::int64_t stride = 1;
  for (std::size_t i = last; i-- > first;) {
    const std::int64_t n = s[i], period = stride * n;
    if (span.empty())
      out[i] = {0, 0};
    else if (span.lo / period == (span.hi - 1) / period)  // inside one turn of this axis
      out[i] = {(span.lo / stride) % n, (span.hi - 1) / stride % n + 1};
    else
      out[i] = {0, n};
    stride = period;
  }
}

/// Reshape: the input ranges an output box reads, group by group (relayout.h).
AxisRanges reshape_source(const AxisRanges& out_r, const Shape& in, const Shape& out) {
  AxisRanges in_r(in.size());
  std::size_t i = 0, j = 0;
  while (i < in.size() || j < out.size()) {
    const std::size_t i0 = i, j0 = j;
    std::int64_t pi = 1, po = 1;
    if (i < in.size())
      pi *= in[i++];
    else
      po *= out[j++];
    while (pi != po && (i < in.size() || j < out.size())) {
      if ((pi < po && i < in.size()) || j == out.size())
        pi *= in[i++];
      else
        po *= out[j++];
    }
    unflatten(linear_span(out_r, out, j0, j), in, i0, i, in_r);
  }
  return in_r;
}

Box full_view(const Shape& s) {
  return full_box(view4(s));
}

}  // namespace

AxisRanges axis_ranges(const Box& view, const Shape& s) {
  switch (s.size()) {
    case 0:
      return {};
    case 1:
      return {view.r[kN]};
    case 2:
      return {view.r[kN], view.r[kC]};
    case 3:
      return {view.r[kN], view.r[kH], view.r[kC]};
    case 4:
      return {view.r[kN], view.r[kC], view.r[kH], view.r[kW]};
    default: {
      const std::size_t lead = s.size() - 3;
      AxisRanges r(s.size());
      unflatten(view.r[kN], s, 0, lead, r);
      r[lead] = view.r[kC], r[lead + 1] = view.r[kH], r[lead + 2] = view.r[kW];
      return r;
    }
  }
}

Box view_box(const AxisRanges& r, const Shape& s) {
  Box b = full_view(s);
  switch (s.size()) {
    case 0:
      break;
    case 1:
      b.r[kN] = r[0];
      break;
    case 2:
      b.r[kN] = r[0], b.r[kC] = r[1];
      break;
    case 3:
      b.r[kN] = r[0], b.r[kH] = r[1], b.r[kC] = r[2];
      break;
    case 4:
      b.r[kN] = r[0], b.r[kC] = r[1], b.r[kH] = r[2], b.r[kW] = r[3];
      break;
    default: {
      const std::size_t lead = s.size() - 3;
      b.r[kN] = linear_span(r, s, 0, lead);
      b.r[kC] = r[lead], b.r[kH] = r[lead + 1], b.r[kW] = r[lead + 2];
    }
  }
  return b;
}

Box relayout_region(OpKind kind, const OpAttrs& a, const Shape& in, const Shape& out,
                    const Box& block) {
  const AxisRanges out_r = axis_ranges(block, out);
  if (kind != OpKind::Transpose) return view_box(reshape_source(out_r, in, out), in);
  AxisRanges in_r(in.size());
  for (std::size_t k = 0; k < out.size(); ++k) {
    const std::size_t from =
        a.perm.empty() ? out.size() - 1 - k : static_cast<std::size_t>(a.perm[k]);
    in_r[from] = out_r[k];
  }
  return view_box(in_r, in);
}

std::array<std::vector<std::int64_t>, 5> relayout_factors(OpKind kind, const OpAttrs& a,
                                                          const Shape& in, const Shape& out) {
  std::array<std::vector<std::int64_t>, 5> factors;
  const Dims4 o = view4(out);
  for (PartDim d : kAllPartDims) {
    std::vector<std::int64_t>& list = factors[static_cast<std::size_t>(d)];
    const auto axis = output_axis(d, out.size());
    const int v = axis ? view_axis(*axis, out.size()) : kN;
    const std::int64_t n = axis ? o[v] : 1;
    auto exact = [&](std::int64_t size) {
      for (std::int64_t lo = 0; lo < n; lo += size) {
        Box block = full_box(o);
        block.r[v] = {lo, lo + size};
        if (relayout_region(kind, a, in, out, block).volume() != block.volume()) return false;
      }
      return true;
    };
    for (std::int64_t f : divisors(n)) {
      if (f > kMaxPes) break;  // ascending
      if (f == 1 || exact(n / f)) list.push_back(f);
    }
  }
  return factors;
}

PartDimSet factor_dims(const std::array<std::vector<std::int64_t>, 5>& factors) {
  PartDimSet set;
  for (PartDim d : kAllPartDims)
    if (factors[static_cast<std::size_t>(d)].size() > 1) set.insert(d);
  return set;
}

PartDimSet relayout_dims(OpKind kind, const OpAttrs& a, const Shape& in, const Shape& out) {
  return factor_dims(relayout_factors(kind, a, in, out));
}

}  // namespace nocflow::optimizer
