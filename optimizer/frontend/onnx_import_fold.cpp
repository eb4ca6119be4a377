// SPDX-License-Identifier: MIT
// Integer constants folded while importing (Importer::fold_int_constant): the small index
// arithmetic exporters leave behind (PyTorch's F.pad: ConstantOfShape, Concat, Reshape, a
// reversing Slice, Transpose, Reshape, Cast), which operators that take such inputs as
// attributes (Pad's pads) need as values.
#include <algorithm>
#include <cstdint>
#include <numeric>

#include "optimizer/frontend/onnx_importer.h"

namespace nocflow::optimizer::onnx_import_detail {
namespace {

using Ints = std::vector<std::int64_t>;

std::int64_t count(const Shape& dims) {
  return std::accumulate(dims.begin(), dims.end(), std::int64_t{1}, std::multiplies<>());
}

bool is_int(int dtype) {
  return dtype == onnx::TensorProto::INT64 || dtype == onnx::TensorProto::INT32;
}

/// Row-major strides of a tensor of shape `dims`.
Shape strides_of(const Shape& dims) {
  Shape strides(dims.size(), 1);
  for (std::size_t a = dims.size(); a-- > 1;) strides[a - 1] = strides[a] * dims[a];
  return strides;
}

/// The elements of `data` at flat index Σ_a offset[a][i_a], for every output index (i_0, i_1, ...)
/// in row-major order, the output's axis a being offset[a].size() long: a gather along each axis
/// (offset = picked index × stride), a transpose (output axis a walks input axis perm[a]'s
/// stride) or a broadcast (a stride of 0 along an axis of length 1).
Ints walk(const Ints& data, const std::vector<Ints>& offset) {
  const std::size_t rank = offset.size();
  std::int64_t total = 1;
  for (const Ints& o : offset) total *= static_cast<std::int64_t>(o.size());
  Ints out;
  out.reserve(static_cast<std::size_t>(total));
  Ints at(rank, 0);
  for (std::int64_t i = 0; i < total; ++i) {
    std::int64_t flat = 0;
    for (std::size_t a = 0; a < rank; ++a) flat += offset[a][static_cast<std::size_t>(at[a])];
    out.push_back(data[static_cast<std::size_t>(flat)]);
    for (std::size_t a = rank; a-- > 0;)
      if (++at[a] < static_cast<std::int64_t>(offset[a].size())) break;
      else at[a] = 0;
  }
  return out;
}

/// Offsets along an axis of `length` whose elements lie `stride` apart.
Ints strided(std::int64_t length, std::int64_t stride) {
  Ints o(static_cast<std::size_t>(length));
  for (std::int64_t i = 0; i < length; ++i) o[static_cast<std::size_t>(i)] = i * stride;
  return o;
}

/// `axis` in [-rank, rank) as [0, rank), or -1 when outside.
std::int64_t normalised(std::int64_t axis, std::size_t rank) {
  const auto r = static_cast<std::int64_t>(rank);
  if (axis < -r || axis >= r) return -1;
  return axis < 0 ? axis + r : axis;
}

}  // namespace

bool Importer::fold_int_constant(const onnx::NodeProto& n) {
  const std::string& op = n.op_type();
  static const char* const foldable[] = {"Concat", "Reshape", "Slice", "Transpose", "Cast",
                                         "Squeeze", "Unsqueeze", "Add", "Sub", "Mul"};
  if (std::none_of(std::begin(foldable), std::end(foldable), [&](const char* f) { return op == f; }) ||
      n.output_size() != 1 || n.input_size() == 0 || n.input(0).empty())
    return false;
  std::vector<const ConstInfo*> in;  // null: an absent optional input
  for (int i = 0; i < n.input_size(); ++i) {
    if (n.input(i).empty()) {
      in.push_back(nullptr);
      continue;
    }
    const ConstInfo* c = constant(n, i);
    if (!c || !is_int(c->dtype) || static_cast<std::int64_t>(c->ints.size()) != count(c->dims))
      return false;
    in.push_back(c);
  }
  const ConstInfo& x = *in[0];
  auto input = [&](std::size_t i) { return i < in.size() ? in[i] : nullptr; };
  ConstInfo out;
  out.dtype = onnx::TensorProto::INT64;
  if (op == "Concat") {
    if (!attr(n, "axis")) return false;  // required: the import refuses it
    const std::int64_t axis = normalised(attr_int(n, "axis", 0), x.dims.size());
    if (axis < 0) return false;
    out.dims = x.dims;
    out.dims[axis] = 0;
    for (const ConstInfo* c : in) {
      if (!c || c->dims.size() != x.dims.size()) return false;
      for (std::size_t a = 0; a < x.dims.size(); ++a)
        if (static_cast<std::int64_t>(a) != axis && c->dims[a] != x.dims[a]) return false;
      out.dims[axis] += c->dims[axis];
    }
    const std::int64_t outer = count(Shape(x.dims.begin(), x.dims.begin() + axis));
    for (std::int64_t o = 0; o < outer; ++o)
      for (const ConstInfo* c : in) {
        const std::int64_t chunk = count(Shape(c->dims.begin() + axis, c->dims.end()));
        out.ints.insert(out.ints.end(), c->ints.begin() + o * chunk, c->ints.begin() + (o + 1) * chunk);
      }
  } else if (op == "Reshape") {
    if (!input(1) || attr_int(n, "allowzero", 0) != 0) return false;
    out.dims = input(1)->ints;
    std::int64_t known = 1, unknown = -1;
    for (std::size_t a = 0; a < out.dims.size(); ++a) {
      if (out.dims[a] == 0) {
        if (a >= x.dims.size()) return false;
        out.dims[a] = x.dims[a];
      }
      if (out.dims[a] == -1) {
        if (unknown >= 0) return false;
        unknown = static_cast<std::int64_t>(a);
      } else if (out.dims[a] < 0) {
        return false;
      } else {
        known *= out.dims[a];
      }
    }
    const std::int64_t total = count(x.dims);
    if (unknown >= 0) {
      if (known == 0 || total % known != 0) return false;
      out.dims[unknown] = total / known;
    }
    if (count(out.dims) != total) return false;
    out.ints = x.ints;
  } else if (op == "Slice") {
    if (!input(1) || !input(2)) return false;
    const Ints& starts = input(1)->ints;
    const Ints& ends = input(2)->ints;
    Ints axes(starts.size()), steps(starts.size(), 1);
    std::iota(axes.begin(), axes.end(), 0);
    if (input(3)) axes = input(3)->ints;
    if (input(4)) steps = input(4)->ints;
    if (ends.size() != starts.size() || axes.size() != starts.size() || steps.size() != starts.size())
      return false;
    std::vector<Ints> pick(x.dims.size());
    for (std::size_t a = 0; a < x.dims.size(); ++a) {
      pick[a].resize(static_cast<std::size_t>(x.dims[a]));
      std::iota(pick[a].begin(), pick[a].end(), 0);
    }
    std::vector<bool> seen(x.dims.size(), false);
    for (std::size_t i = 0; i < starts.size(); ++i) {
      const std::int64_t axis = normalised(axes[i], x.dims.size());
      if (axis < 0 || seen[axis] || steps[i] == 0) return false;
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
    out.ints = walk(x.ints, pick);
  } else if (op == "Transpose") {
    Ints perm = attr_ints(n, "perm");
    if (perm.empty())
      for (std::size_t a = x.dims.size(); a-- > 0;) perm.push_back(static_cast<std::int64_t>(a));
    Ints sorted = perm;
    std::sort(sorted.begin(), sorted.end());
    Ints identity(x.dims.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (sorted != identity) return false;
    const Shape strides = strides_of(x.dims);
    std::vector<Ints> offset;
    for (std::int64_t p : perm) {
      out.dims.push_back(x.dims[p]);
      offset.push_back(strided(x.dims[p], strides[p]));
    }
    out.ints = walk(x.ints, offset);
  } else if (op == "Cast") {
    const std::int64_t to = attr_int(n, "to", 0);
    if (!is_int(static_cast<int>(to))) return false;  // to floats: left to the graph
    out = ConstInfo{x.dims, static_cast<int>(to), false, x.ints, {}, std::nullopt};
    if (to == onnx::TensorProto::INT32)  // wraps as a 32-bit integer does
      for (auto& v : out.ints)
        v = static_cast<std::int32_t>(static_cast<std::uint32_t>(static_cast<std::uint64_t>(v)));
  } else if (op == "Squeeze" || op == "Unsqueeze") {
    Ints axes = input(1) ? input(1)->ints : attr_ints(n, "axes");
    const bool un = op == "Unsqueeze";
    const std::size_t rank = x.dims.size() + (un ? axes.size() : 0);
    for (auto& a : axes)
      if ((a = normalised(a, rank)) < 0) return false;
    std::sort(axes.begin(), axes.end());
    if (std::adjacent_find(axes.begin(), axes.end()) != axes.end()) return false;
    if (un) {
      out.dims = x.dims;
      for (std::int64_t a : axes) out.dims.insert(out.dims.begin() + a, 1);
    } else {
      for (std::size_t a = 0; a < x.dims.size(); ++a) {
        const bool listed = std::binary_search(axes.begin(), axes.end(), static_cast<std::int64_t>(a));
        if (listed && x.dims[a] != 1) return false;
        if (!(listed || (axes.empty() && x.dims[a] == 1))) out.dims.push_back(x.dims[a]);
      }
    }
    out.ints = x.ints;
  } else {  // Add, Sub, Mul, broadcast as NumPy does
    if (!input(1)) return false;
    const ConstInfo& y = *input(1);
    const std::size_t rank = std::max(x.dims.size(), y.dims.size());
    auto aligned = [&](const Shape& dims) {  // right-aligned, 1s in front
      Shape a(rank - dims.size(), 1);
      a.insert(a.end(), dims.begin(), dims.end());
      return a;
    };
    const Shape dx = aligned(x.dims), dy = aligned(y.dims), sx = strides_of(dx), sy = strides_of(dy);
    std::vector<Ints> ox, oy;  // each side walked over the output's shape, a length-1 axis repeated
    for (std::size_t a = 0; a < rank; ++a) {
      if (dx[a] != dy[a] && dx[a] != 1 && dy[a] != 1) return false;
      out.dims.push_back(dx[a] == 1 ? dy[a] : dx[a]);
      ox.push_back(strided(out.dims[a], dx[a] == 1 ? 0 : sx[a]));
      oy.push_back(strided(out.dims[a], dy[a] == 1 ? 0 : sy[a]));
    }
    const Ints u = walk(x.ints, ox), v = walk(y.ints, oy);
    for (std::size_t i = 0; i < u.size(); ++i)
      out.ints.push_back(op == "Add" ? u[i] + v[i] : op == "Sub" ? u[i] - v[i] : u[i] * v[i]);
  }
  alias(n, out);
  return true;
}

}  // namespace nocflow::optimizer::onnx_import_detail
