// SPDX-License-Identifier: MIT
#include "optimizer/graph/resize.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <string_view>

#include "noc/base/error.h"
#include "optimizer/graph/shape_rules.h"

namespace nocflow::optimizer {
namespace {

constexpr std::array<std::string_view, 3> kModes = {"nearest", "linear", "cubic"};
constexpr std::array<std::string_view, 6> kCoordinateModes = {
    "half_pixel",    "half_pixel_symmetric", "pytorch_half_pixel",
    "align_corners", "asymmetric",           "tf_half_pixel_for_nn"};
constexpr std::array<std::string_view, 4> kNearestModes = {"round_prefer_floor",
                                                           "round_prefer_ceil", "floor", "ceil"};

template <std::size_t N>
void check_one_of(const std::string& value, const std::array<std::string_view, N>& known,
                  const char* what) {
  if (std::find(known.begin(), known.end(), value) != known.end()) return;
  std::string list;
  for (std::string_view k : known) list += (list.empty() ? "" : ", ") + std::string(k);
  throw InputError(std::string("Resize ") + what + " '" + value + "' is not supported (" + list +
                   ")");
}

/// An axis the Resize leaves alone: every output reads its own input (not so under
/// tf_half_pixel_for_nn, which maps x to x + 0.5 at scale 1).
bool identity(const OpAttrs& a, const ResizeAxis& axis) {
  return axis.in == axis.out && axis.scale == 1 &&
         a.coordinate_transformation_mode != "tf_half_pixel_for_nn";
}

/// The input coordinate output index x maps to (ONNX's coordinate_transformation_mode).
double source(const OpAttrs& a, const ResizeAxis& axis, std::int64_t x) {
  const double xr = static_cast<double>(x), s = axis.scale;
  const std::string& m = a.coordinate_transformation_mode;
  if (m == "half_pixel") return (xr + 0.5) / s - 0.5;
  if (m == "pytorch_half_pixel") return axis.out > 1 ? (xr + 0.5) / s - 0.5 : 0.0;
  if (m == "align_corners")  // over the output's integer length, as PyTorch and onnxruntime
    return axis.out == 1
               ? 0.0
               : xr * static_cast<double>(axis.in - 1) / static_cast<double>(axis.out - 1);
  if (m == "asymmetric") return xr / s;
  if (m == "tf_half_pixel_for_nn") return (xr + 0.5) / s;
  // half_pixel_symmetric: half_pixel about the centre when the output is rounded down
  const double adjustment = static_cast<double>(axis.out) / (s * static_cast<double>(axis.in));
  return static_cast<double>(axis.in) / 2 * (1 - adjustment) + (xr + 0.5) / s - 0.5;
}

double nearest(const std::string& rounding, double v) {
  const double f = std::floor(v);
  if (rounding == "floor") return f;
  if (rounding == "ceil") return std::ceil(v);
  if (v - f == 0.5) return rounding == "round_prefer_ceil" ? f + 1 : f;
  return std::round(v);
}

}  // namespace

ResizeAxis resize_axis(const OpAttrs& a, const Shape& in, const Shape& out, int i) {
  const auto d = static_cast<std::size_t>(2 + i);
  ResizeAxis axis{in[d], out[d], 1};
  axis.scale = a.scales.size() == 2 ? a.scales[static_cast<std::size_t>(i)]
                                    : static_cast<double>(axis.out) / static_cast<double>(axis.in);
  return axis;
}

void check_resize_modes(const OpAttrs& a) {
  if (a.coordinate_transformation_mode == "tf_crop_and_resize")
    throw InputError(
        "Resize coordinate_transformation_mode 'tf_crop_and_resize' (a region of interest) is "
        "not supported");
  check_one_of(a.mode, kModes, "mode");
  check_one_of(a.coordinate_transformation_mode, kCoordinateModes,
               "coordinate_transformation_mode");
  check_one_of(a.nearest_mode, kNearestModes, "nearest_mode");
}

IndexRange resize_taps(const OpAttrs& a, const ResizeAxis& axis, std::int64_t x) {
  if (identity(a, axis)) return {x, x + 1};
  const double v = source(a, axis, x);
  auto clamp = [&](double i) {
    return static_cast<std::int64_t>(std::clamp(i, 0.0, static_cast<double>(axis.in - 1)));
  };
  if (a.mode == "nearest") {
    const std::int64_t i = clamp(nearest(a.nearest_mode, v));
    return {i, i + 1};
  }
  // Every tap inside the input, also one that weighs nothing (on an input index), as the
  // kernels load them (below 0 they may also load index 1, which weighs nothing there).
  const double f = std::floor(v);
  if (a.mode == "linear") return {clamp(f), clamp(f + 1) + 1};
  return {clamp(f - 1), clamp(f + 2) + 1};  // cubic
}

IndexRange resize_inputs(const OpAttrs& a, const ResizeAxis& axis, IndexRange outputs) {
  if (outputs.second <= outputs.first) return {0, 0};
  // Both ends of the taps grow with the output index.
  return {resize_taps(a, axis, outputs.first).first,
          resize_taps(a, axis, outputs.second - 1).second};
}

IndexRange resize_outputs(const OpAttrs& a, const ResizeAxis& axis, IndexRange inputs) {
  if (inputs.second <= inputs.first) return {0, 0};
  // The first output whose taps end after inputs.first, the first whose taps start at or
  // after inputs.second (both ends of the taps grow with the output index).
  auto first_where = [&](auto&& pred) {
    std::int64_t lo = 0, hi = axis.out;
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (pred(resize_taps(a, axis, mid)))
        hi = mid;
      else
        lo = mid + 1;
    }
    return lo;
  };
  const std::int64_t lo = first_where([&](IndexRange t) { return t.second > inputs.first; });
  const std::int64_t hi = first_where([&](IndexRange t) { return t.first >= inputs.second; });
  return lo < hi ? IndexRange{lo, hi} : IndexRange{0, 0};
}

std::int64_t resize_taps_per_output(const OpAttrs& a, const ResizeAxis& axis) {
  if (identity(a, axis) || a.mode == "nearest") return 1;
  return a.mode == "linear" ? 2 : 4;
}

namespace shape_rules {

Tensor resize(const std::vector<const Tensor*>& in, OpAttrs& a) {
  const Tensor& x = *in[0];
  need_rank(x, 4, "Resize");
  if (in.size() > 1) {  // ONNX's sizes
    if (!in[1]->value) fail("sizes must be integers known at compile time");
    const std::vector<std::int64_t>& v = *in[1]->value;
    if (v.size() != 4) fail("sizes " + shape_str(v) + " must give N, C, H and W");
    if (v[0] != x.shape[0] || v[1] != x.shape[1])
      fail("sizes " + shape_str(v) + " resize N or C of " + shape_str(x.shape) +
           "; only H and W may be resized");
    a.shape = {v[2], v[3]};
    a.scales.clear();
  }
  check_resize_modes(a);
  if (!a.scales.empty() && a.scales.size() != 2)
    fail("scales must give H and W, got " + std::to_string(a.scales.size()) + " values");
  for (double s : a.scales)
    if (!(s > 0) || !std::isfinite(s)) fail("scales must be positive and finite");
  if (a.shape.empty()) {
    if (a.scales.empty()) fail("needs sizes or scales");
    for (std::size_t i = 0; i < 2; ++i) {
      // In single precision, as ONNX's shape inference and onnxruntime (10 x 0.7: 7, not 6)
      const double size = std::floor(static_cast<double>(static_cast<float>(x.shape[2 + i]) *
                                                         static_cast<float>(a.scales[i])));
      if (!(size <= 0x1p53)) fail("scales make an output dimension over 2^53");
      a.shape.push_back(static_cast<std::int64_t>(size));
    }
  } else if (a.shape.size() != 2) {
    fail("sizes " + shape_str(a.shape) + " must give H and W");
  }
  need_positive(a.shape, "Resize output size");
  Tensor t{{x.shape[0], x.shape[1], a.shape[0], a.shape[1]}, x.elem_bytes, std::nullopt};
  if (a.scales.empty())
    for (int i = 0; i < 2; ++i) a.scales.push_back(resize_axis(a, x.shape, t.shape, i).scale);
  // Sizes and scales filled in from each other agree; given both (a graph file, or sizes
  // recorded for another input), they must.
  for (std::size_t i = 0; i < 2; ++i) {
    const double scaled = static_cast<double>(x.shape[2 + i]) * a.scales[i];
    if (!(std::abs(scaled - static_cast<double>(a.shape[i])) < 1))
      fail("sizes " + shape_str(a.shape) + " and scales disagree on input " + shape_str(x.shape) +
           " (axis " + std::to_string(2 + i) + ": " + std::to_string(x.shape[2 + i]) + " x " +
           std::to_string(a.scales[i]) + ")");
  }
  return t;
}

}  // namespace shape_rules

}  // namespace nocflow::optimizer
