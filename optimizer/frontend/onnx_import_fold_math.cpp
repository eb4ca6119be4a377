// SPDX-License-Identifier: MIT
// Arithmetic on compile-time tensors, folded while importing (Importer::fold_math): element-wise
// operators broadcast as NumPy does, Range and ScatterND. Swin's attention mask is one such
// tensor: zeros (ConstantOfShape) whose regions ScatterND fills with their numbers, at indices
// built by Range, then compared (Equal, Not) and turned into 0 or -100 (Where).
#include <cmath>
#include <cstdint>

#include "optimizer/frontend/onnx_import_fold.h"

namespace nocflow::optimizer::onnx_import_detail {

using namespace fold;

namespace {

using T = onnx::TensorProto;

/// p op q for integers; null where ONNX leaves it undefined (a zero divisor, an overflowing
/// quotient). Add, Sub and Mul wrap as two's complement.
std::optional<std::int64_t> int_op(const std::string& op, std::int64_t p, std::int64_t q,
                                   bool fmod) {
  const auto u = static_cast<std::uint64_t>(p), v = static_cast<std::uint64_t>(q);
  if (op == "Add") return static_cast<std::int64_t>(u + v);
  if (op == "Sub") return static_cast<std::int64_t>(u - v);
  if (op == "Mul") return static_cast<std::int64_t>(u * v);
  if (op == "Equal") return p == q;
  if (q == 0 || (p == INT64_MIN && q == -1)) return std::nullopt;
  if (op == "Div") return p / q;  // toward zero, as the graph's rule (and onnxruntime)
  std::int64_t r = p % q;         // Mod: fmod the dividend's sign (C), else the divisor's
  if (!fmod && r != 0 && (r < 0) != (q < 0)) r += q;
  return r;
}

double float_op(const std::string& op, double p, double q, bool fmod) {
  if (op == "Add") return p + q;
  if (op == "Sub") return p - q;
  if (op == "Mul") return p * q;
  if (op == "Div") return p / q;
  if (op == "Equal") return p == q;
  double r = std::fmod(p, q);
  if (!fmod && r != 0 && (r < 0) != (q < 0)) r += q;
  return r;
}

}  // namespace

std::optional<ConstInfo> Importer::fold_math(const onnx::NodeProto& n,
                                             const std::vector<const ConstInfo*>& in) const {
  const std::string& op = n.op_type();
  ConstInfo out;
  std::vector<std::vector<Ints>> offsets;
  auto all_present = [&](std::size_t size) {
    if (in.size() != size) return false;
    for (const ConstInfo* c : in)
      if (!c) return false;
    return true;
  };
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Mod" || op == "Equal") {
    if (!all_present(2) || in[0]->dtype != in[1]->dtype || !broadcast(in, out.dims, offsets))
      return std::nullopt;
    const bool fmod = attr_flag(n, "fmod", false);
    out.dtype = op == "Equal" ? static_cast<int>(T::BOOL) : in[0]->dtype;
    if (is_floating(in[0]->dtype)) {
      const auto u = walk(in[0]->floats, offsets[0]), v = walk(in[1]->floats, offsets[1]);
      for (std::size_t i = 0; i < u.size(); ++i) {
        const double r = float_op(op, u[i], v[i], fmod);
        if (op == "Equal")
          out.ints.push_back(r != 0);
        else
          out.floats.push_back(out.dtype == T::FLOAT ? static_cast<float>(r) : r);
      }
    } else {
      const auto u = walk(in[0]->ints, offsets[0]), v = walk(in[1]->ints, offsets[1]);
      for (std::size_t i = 0; i < u.size(); ++i) {
        const auto r = int_op(op, u[i], v[i], fmod);
        if (!r) return std::nullopt;  // the graph's rule leaves it unknown too
        // An INT32 result wraps at 32 bits, as Cast to INT32 does.
        out.ints.push_back(out.dtype == T::INT32
                               ? static_cast<std::int32_t>(static_cast<std::uint32_t>(*r))
                               : *r);
      }
    }
  } else if (op == "Not") {
    if (!all_present(1) || in[0]->dtype != T::BOOL) return std::nullopt;
    out.dims = in[0]->dims;
    out.dtype = T::BOOL;
    for (auto b : in[0]->ints) out.ints.push_back(!b);
  } else if (op == "Where") {
    if (!all_present(3) || in[0]->dtype != T::BOOL || in[1]->dtype != in[2]->dtype ||
        !broadcast(in, out.dims, offsets))
      return std::nullopt;
    out.dtype = in[1]->dtype;
    const Ints cond = walk(in[0]->ints, offsets[0]);
    ConstInfo x, y;
    take(*in[1], offsets[1], x);
    take(*in[2], offsets[2], y);
    for (std::size_t i = 0; i < cond.size(); ++i)
      if (is_floating(out.dtype))
        out.floats.push_back(cond[i] ? x.floats[i] : y.floats[i]);
      else
        out.ints.push_back(cond[i] ? x.ints[i] : y.ints[i]);
  } else if (op == "Range") {  // start, start + delta, ... before limit
    if (!all_present(3)) return std::nullopt;
    for (const ConstInfo* c : in)
      if (!c->dims.empty() || c->dtype != in[0]->dtype) return std::nullopt;  // scalars
    out.dtype = in[0]->dtype;
    if (is_floating(out.dtype)) {
      const double start = in[0]->floats[0], limit = in[1]->floats[0], delta = in[2]->floats[0];
      if (delta == 0) fail(n, "delta is 0");
      const double size = std::max(std::ceil((limit - start) / delta), 0.0);
      if (!(size <= static_cast<double>(kMaxFoldElements))) return std::nullopt;
      for (std::int64_t i = 0; i < static_cast<std::int64_t>(size); ++i) {
        const double v = start + static_cast<double>(i) * delta;
        out.floats.push_back(out.dtype == T::FLOAT ? static_cast<float>(v) : v);
      }
    } else {
      const std::int64_t start = in[0]->ints[0], limit = in[1]->ints[0], delta = in[2]->ints[0];
      if (delta == 0) fail(n, "delta is 0");
      // ⌈(limit − start) / delta⌉ in unsigned arithmetic (the span can pass INT64_MAX), and the
      // values as two's complement sums, each between start and limit.
      const bool up = delta > 0;
      const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
      const std::uint64_t span = up ? u(limit) - u(start) : u(start) - u(limit);
      const std::uint64_t step = up ? u(delta) : std::uint64_t{0} - u(delta);
      const std::uint64_t size = (up ? limit > start : limit < start) ? (span - 1) / step + 1 : 0;
      if (size > static_cast<std::uint64_t>(kMaxFoldElements)) return std::nullopt;
      for (std::uint64_t i = 0; i < size; ++i)
        out.ints.push_back(static_cast<std::int64_t>(u(start) + i * u(delta)));
    }
    out.dims = {static_cast<std::int64_t>(out.ints.size() + out.floats.size())};
  } else if (op == "ScatterND") {  // data with updates written at the index tuples
    if (!all_present(3)) return std::nullopt;
    const ConstInfo &data = *in[0], &indices = *in[1], &updates = *in[2];
    if (const auto* r = attr(n, "reduction"); r && r->s() != "none")
      fail(n, "reduction '" + r->s() + "' is not supported (only none)");
    if (is_floating(indices.dtype) || indices.dims.empty() || updates.dtype != data.dtype)
      return std::nullopt;
    const auto k = static_cast<std::size_t>(indices.dims.back());
    Shape expected(indices.dims.begin(), indices.dims.end() - 1);
    if (k > data.dims.size())
      fail(n, "indices of length " + std::to_string(k) + " for " + shape_str(data.dims));
    expected.insert(expected.end(), data.dims.begin() + static_cast<std::ptrdiff_t>(k),
                    data.dims.end());
    if (updates.dims != expected)
      fail(n, "updates " + shape_str(updates.dims) + " for indices " + shape_str(indices.dims) +
                  " into " + shape_str(data.dims) + " must have shape " + shape_str(expected));
    out = data;
    out.from_initializer = false;
    out.node.reset();
    const Shape strides = strides_of(data.dims);
    const std::int64_t tuples = count(Shape(indices.dims.begin(), indices.dims.end() - 1));
    const std::int64_t slice =
        count(Shape(data.dims.begin() + static_cast<std::ptrdiff_t>(k), data.dims.end()));
    for (std::int64_t t = 0; t < tuples; ++t) {
      std::int64_t at = 0;  // the slice's first element in data
      for (std::size_t a = 0; a < k; ++a) {
        const std::int64_t d = data.dims[a], i = indices.ints[static_cast<std::size_t>(t) * k + a];
        if (i < -d || i >= d)
          fail(n, "index " + std::to_string(i) + " out of range for axis " + std::to_string(a) +
                      " of " + shape_str(data.dims));
        at += (i < 0 ? i + d : i) * strides[a];
      }
      for (std::int64_t e = 0; e < slice; ++e) {
        const auto to = static_cast<std::size_t>(at + e);
        const auto from = static_cast<std::size_t>(t * slice + e);
        if (is_floating(data.dtype))
          out.floats[to] = updates.floats[from];
        else
          out.ints[to] = updates.ints[from];
      }
    }
  } else {
    return std::nullopt;
  }
  return out;
}

}  // namespace nocflow::optimizer::onnx_import_detail
