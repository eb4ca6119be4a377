// SPDX-License-Identifier: MIT
// Compile-time tensors folded while importing (Importer::fold_constant): the shape arithmetic
// and index tensors exporters leave behind, which operators that take such inputs as attributes
// (Pad's pads, Reshape's shape, ConstantOfShape's shape) need as values. PyTorch's F.pad:
// ConstantOfShape, Concat, Reshape, a reversing Slice, Transpose, Cast; Swin's shifted windows:
// the Shape of activations, Mod, Range, and an attention mask built by ScatterND, Equal, Not and
// Where. Data movement is here, arithmetic in onnx_import_fold_math.cpp.
#include "optimizer/frontend/onnx_import_fold.h"

#include <algorithm>
#include <numeric>

namespace nocflow::optimizer::onnx_import_detail {
namespace fold {

std::int64_t count(const Shape& dims) {
  return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

bool fits(const Shape& dims) {
  std::int64_t n = 1;
  for (auto d : dims) {
    if (d < 0 || (d != 0 && n > kMaxFoldElements / d)) return false;
    n *= d;
  }
  return true;
}

std::int64_t normalised(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return -1;
  return axis < 0 ? axis + r : axis;
}

void take(const ConstInfo& x, const std::vector<Ints>& offset, ConstInfo& out) {
  if (is_floating(x.dtype))
    out.floats = walk(x.floats, offset);
  else
    out.ints = walk(x.ints, offset);
}

bool broadcast(const std::vector<const ConstInfo*>& in, Shape& dims,
               std::vector<std::vector<Ints>>& offsets) {
  std::size_t rank = 0;
  for (const ConstInfo* c : in) rank = std::max(rank, c->dims.size());
  dims.assign(rank, 1);
  for (const ConstInfo* c : in)
    for (std::size_t k = 0; k < c->dims.size(); ++k) {
      const std::int64_t d = c->dims[k];
      std::int64_t& to = dims[rank - c->dims.size() + k];
      if (d != 1 && to != 1 && d != to) return false;
      if (d != 1) to = d;
    }
  if (!fits(dims)) return false;
  offsets.clear();
  for (const ConstInfo* c : in) offsets.push_back(broadcast_offsets(c->dims, dims));
  return true;
}

}  // namespace fold

using namespace fold;

bool Importer::fold_constant(const onnx::NodeProto& n) {
  if (n.output_size() != 1 || n.input_size() == 0 || n.input(0).empty()) return false;
  if (n.op_type() == "Shape") {  // of any tensor whose shape is known by now
    const std::optional<Shape> dims = known_shape(n.input(0));
    if (!dims) return false;
    const auto rank = static_cast<std::int64_t>(dims->size());
    auto bound = [&](const char* name, std::int64_t def) {  // opset 15's start and end
      const std::int64_t b = attr_int(n, name, def);
      return std::clamp<std::int64_t>(b < 0 ? b + rank : b, 0, rank);
    };
    const std::int64_t start = bound("start", 0), end = std::max(start, bound("end", rank));
    ConstInfo out;
    out.dtype = onnx::TensorProto::INT64;
    out.dims = {end - start};
    out.ints.assign(dims->begin() + start, dims->begin() + end);
    alias(n, out);
    return true;
  }
  std::vector<const ConstInfo*> in;  // null: an absent optional input
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const ConstInfo* c = constant(n, i);
    if (!c || !foldable(*c)) return false;
    in.push_back(c);
  }
  std::optional<ConstInfo> out = fold_movement(n, in);
  if (!out) out = fold_math(n, in);
  if (!out) return false;
  alias(n, *out);
  return true;
}

std::optional<ConstInfo> Importer::fold_movement(const onnx::NodeProto& n,
                                                 const std::vector<const ConstInfo*>& in) const {
  const std::string& op = n.op_type();
  const ConstInfo& x = *in[0];
  auto input = [&](std::size_t i) { return i < in.size() ? in[i] : nullptr; };
  auto ints_at = [&](std::size_t i) {  // an integer operand (indices, shapes, axes)
    const ConstInfo* c = input(i);
    return c && !is_floating(c->dtype) ? c : nullptr;
  };
  ConstInfo out;
  out.dtype = x.dtype;
  if (op == "Concat") {
    if (!attr(n, "axis")) return std::nullopt;  // required: the import refuses it
    const std::int64_t axis = normalised(attr_int(n, "axis", 0), x.dims.size());
    if (axis < 0) return std::nullopt;
    out.dims = x.dims;
    out.dims[axis] = 0;
    for (const ConstInfo* c : in) {
      if (!c || c->dims.size() != x.dims.size() || c->dtype != x.dtype) return std::nullopt;
      for (std::size_t a = 0; a < x.dims.size(); ++a)
        if (static_cast<std::int64_t>(a) != axis && c->dims[a] != x.dims[a]) return std::nullopt;
      out.dims[axis] += c->dims[axis];
    }
    if (!fits(out.dims)) return std::nullopt;
    const std::int64_t outer = count(Shape(x.dims.begin(), x.dims.begin() + axis));
    auto append = [&](auto& to, const auto& from, std::int64_t first, std::int64_t size) {
      to.insert(to.end(), from.begin() + first, from.begin() + first + size);
    };
    for (std::int64_t o = 0; o < outer; ++o)
      for (const ConstInfo* c : in) {
        const std::int64_t chunk = count(Shape(c->dims.begin() + axis, c->dims.end()));
        if (is_floating(x.dtype))
          append(out.floats, c->floats, o * chunk, chunk);
        else
          append(out.ints, c->ints, o * chunk, chunk);
      }
  } else if (op == "Reshape") {
    if (!ints_at(1) || attr_int(n, "allowzero", 0) != 0) return std::nullopt;
    out.dims = input(1)->ints;
    std::int64_t known = 1, unknown = -1;
    for (std::size_t a = 0; a < out.dims.size(); ++a) {
      if (out.dims[a] == 0) {
        if (a >= x.dims.size()) return std::nullopt;
        out.dims[a] = x.dims[a];
      }
      if (out.dims[a] == -1) {
        if (unknown >= 0) return std::nullopt;
        unknown = static_cast<std::int64_t>(a);
      } else if (out.dims[a] < 0 ||
                 (out.dims[a] != 0 && known > kMaxFoldElements / out.dims[a])) {
        return std::nullopt;
      } else {
        known *= out.dims[a];
      }
    }
    const std::int64_t total = count(x.dims);
    if (unknown >= 0) {
      if (known == 0 || total % known != 0) return std::nullopt;
      out.dims[unknown] = total / known;
    }
    if (count(out.dims) != total) return std::nullopt;
    out.ints = x.ints;
    out.floats = x.floats;
  } else if (op == "Slice") {
    if (!ints_at(1) || !ints_at(2) || (input(3) && !ints_at(3)) || (input(4) && !ints_at(4)))
      return std::nullopt;
    const Ints& starts = input(1)->ints;
    const Ints& ends = input(2)->ints;
    Ints axes(starts.size()), steps(starts.size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (input(3)) axes = input(3)->ints;
    if (input(4)) steps = input(4)->ints;
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return std::nullopt;
    std::vector<Ints> pick(x.dims.size());
    for (std::size_t a = 0; a < x.dims.size(); ++a) {
      pick[a].resize(static_cast<std::size_t>(x.dims[a]));
      std::iota(pick[a].begin(), pick[a].end(), 0);
    }
    std::vector<bool> seen(x.dims.size(), false);
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const std::int64_t axis = normalised(axes[i], x.dims.size());
      if (axis < 0 || seen[axis] || steps[i] == 0) return std::nullopt;
      seen[axis] = true;
      const std::int64_t d = x.dims[axis], step = steps[i];
      pick[axis].clear();
      if (d == 0) continue;
      // Clamped as ONNX does (in [-d, d] first, so that no bound wraps).
      std::int64_t s = std::clamp<std::int64_t>(starts[i], -d, d);
      std::int64_t e = std::clamp<std::int64_t>(ends[i], -d - 1, d);
      s = s < 0 ? s + d : s;
      e = e < 0 ? e + d : e;
      if (step > 0) {
        s = std::min(s, d);
        e = std::max<std::int64_t>(e, 0);
      } else {
        s = std::min(s, d - 1);
        e = std::min(e, d - 1);  // -1: through index 0
      }
      // The count first, so that a step near the int64 limits cannot wrap the index.
      const std::int64_t span = step > 0 ? e - s : s - e;
      const std::int64_t stride = step > 0 ? step : (step == INT64_MIN ? INT64_MAX : -step);
      const std::int64_t taken = span > 0 ? 1 + (span - 1) / stride : 0;
      for (std::int64_t j = 0; j < taken; ++j) pick[axis].push_back(step > 0 ? s + j * step : s - j * stride);
    }
    const Shape strides = strides_of(x.dims);
    for (std::size_t a = 0; a < pick.size(); ++a) {
      out.dims.push_back(static_cast<std::int64_t>(pick[a].size()));
      for (auto& k : pick[a]) k *= strides[a];
    }
    take(x, pick, out);
  } else if (op == "Transpose") {
    Ints perm = attr_ints(n, "perm");
    if (perm.empty())
      for (std::size_t a = x.dims.size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
    Ints sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    Ints identity(x.dims.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity) return std::nullopt;
    const Shape strides = strides_of(x.dims);
    std::vector<Ints> offset;
    for (std::int64_t p : perm) {
      out.dims.push_back(x.dims[p]);
      offset.push_back(strided(x.dims[p], strides[p]));
    }
    take(x, offset, out);
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    if (input(1) && !ints_at(1)) return std::nullopt;
    Ints axes = input(1) ? input(1)->ints : attr_ints(n, "axes");
    const bool un = op == "Unsqueeze";
    const std::size_t rank = x.dims.size() + (un ? axes.size() : 0);
    for (auto& a : axes)
      if ((a = normalised(a, rank)) < 0) return std::nullopt;
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return std::nullopt;
    if (un) {
      out.dims = x.dims;
      for (std::int64_t a : axes) out.dims.insert(out.dims.begin() + a, 1);
    } else {
      for (std::size_t a = 0; a < x.dims.size(); ++a) {
        const bool listed = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(a));
        if (listed && x.dims[a] != 1) return std::nullopt;
        if (!(listed || (axes.empty() && x.dims[a] == 1))) out.dims.push_back(x.dims[a]);
      }
    }
    out.ints = x.ints;
    out.floats = x.floats;
  } else if (op == "Gather") {  // out[i.., j.., k..] = x[i.., idx[j..], k..]
    const ConstInfo* idx = ints_at(1);
    if (!idx) return std::nullopt;
    const std::int64_t axis = normalised(attr_int(n, "axis", 0), x.dims.size());
    if (axis < 0) return std::nullopt;
    const std::int64_t d = x.dims[axis];
    const Shape strides = strides_of(x.dims);
    std::vector<Ints> offset;
    for (std::int64_t a = 0; a < axis; ++a) offset.push_back(strided(x.dims[a], strides[a]));
    out.dims.assign(x.dims.begin(), x.dims.begin() + axis);
    Ints picked;  // the indices flattened: one output axis, reshaped to idx's shape below
    for (std::int64_t i : idx->ints) {
      if (i < -d || i >= d) return std::nullopt;  // the graph's Gather says which
      picked.push_back((i < 0 ? i + d : i) * strides[axis]);
    }
    offset.push_back(picked);
    for (std::size_t a = axis + 1; a < x.dims.size(); ++a)
      offset.push_back(strided(x.dims[a], strides[a]));
    out.dims.insert(out.dims.end(), idx->dims.begin(), idx->dims.end());
    out.dims.insert(out.dims.end(), x.dims.begin() + axis + 1, x.dims.end());
    if (!fits(out.dims)) return std::nullopt;
    take(x, offset, out);
  } else if (op == "Expand") {
    const ConstInfo* target = ints_at(1);
    if (!target || target->dims.size() != 1) return std::nullopt;
    for (auto d : target->ints)
      if (d < 0) return std::nullopt;
    ConstInfo shape;  // the target as a tensor of that shape, broadcast against x
    shape.dims = target->ints;
    std::vector<std::vector<Ints>> offsets;
    if (!broadcast({&x, &shape}, out.dims, offsets)) return std::nullopt;
    take(x, offsets[0], out);
  } else if (op == "Cast") {
    using T = onnx::TensorProto;
    const auto to = static_cast<int>(attr_int(n, "to", 0));
    if (to != T::INT64 && to != T::INT32 && to != T::BOOL && to != T::FLOAT && to != T::DOUBLE)
      return std::nullopt;  // left to the graph, which keeps the element size
    out.dims = x.dims;
    out.dtype = to;
    const bool from_floats = is_floating(x.dtype);
    for (std::int64_t i = 0; i < count(x.dims); ++i) {
      const double f = from_floats ? x.floats[i] : 0.0;
      const std::int64_t v = from_floats ? 0 : x.ints[i];
      if (is_floating(to)) {
        const double d = from_floats ? f : static_cast<double>(v);
        out.floats.push_back(to == T::FLOAT ? static_cast<float>(d) : d);
      } else if (to == T::BOOL) {
        out.ints.push_back(from_floats ? f != 0 : v != 0);
      } else if (from_floats && !(f > -9.2e18 && f < 9.2e18)) {
        return std::nullopt;  // no integer holds it (undefined in ONNX)
      } else {
        const std::int64_t w = from_floats ? static_cast<std::int64_t>(f) : v;  // toward zero
        // INT32 wraps as a 32-bit integer does
        out.ints.push_back(to == T::INT32 ? static_cast<std::int32_t>(static_cast<std::uint32_t>(
                                                static_cast<std::uint64_t>(w)))
                                          : w);
      }
    }
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace nocflow::optimizer::onnx_import_detail
