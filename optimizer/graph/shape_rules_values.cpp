// SPDX-License-Identifier: MIT
// Shape rules that compute values: shape arithmetic (integer element-wise operators, Mod, Gather,
// Equal, Where, Expand), whose small 1-D results constant folding turns into constants.
#include <algorithm>

#include "optimizer/graph/shape_rules.h"

namespace nocflow::optimizer::shape_rules {
namespace {

/// Shape arithmetic holds at most this many values (larger results are not folded).
constexpr std::int64_t kMaxValues = 4096;

/// Element i of a 1-D value broadcast against a longer one (its length 1, or theirs).
std::int64_t at(const std::vector<std::int64_t>& v, std::size_t i) {
  return v[v.size() == 1 ? 0 : i];
}
std::int64_t at(const Tensor& x, std::size_t i) {
  return at(*x.value, i);
}

/// Output `t` (its shape broadcast from `in`, of rank at most 1) gets value i = f(i): 1-D shape
/// arithmetic, every input's value known.
template <typename F>
void fold_values(Tensor& t, F f) {
  std::vector<std::int64_t> v(t.shape.empty() ? 1 : static_cast<std::size_t>(t.shape[0]));
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = f(i);
  t.value = v;
}

/// Equal and Where of values known at compile time (1-D shape arithmetic) are folded; else
/// they are element-wise layers (a mask compared, scores masked), their values unknown.
template <typename F>
void values_or_layer(Tensor& t, const std::vector<const Tensor*>& in, F f) {
  if (t.shape.size() <= 1 &&
      std::all_of(in.begin(), in.end(), [](const Tensor* x) { return x->value.has_value(); }))
    fold_values(t, f);
}

}  // namespace

std::optional<std::vector<std::int64_t>> binary_value(OpKind k, const OpAttrs& attrs,
                                                      const Tensor& x, const Tensor& y) {
  if (!x.value || !y.value) return std::nullopt;
  const auto& a = *x.value;
  const auto& b = *y.value;
  if (a.size() != b.size() && a.size() != 1 && b.size() != 1) return std::nullopt;
  std::vector<std::int64_t> out(std::max(a.size(), b.size()));
  for (std::size_t i = 0; i < out.size(); ++i) {
    const auto p = at(a, i);
    const auto q = at(b, i);
    switch (k) {
      case OpKind::Add:
        out[i] = p + q;
        break;
      case OpKind::Sub:
        out[i] = p - q;
        break;
      case OpKind::Mul:
        out[i] = p * q;
        break;
      case OpKind::Div:
        if (q == 0) return std::nullopt;
        out[i] = p / q;
        break;
      case OpKind::Mod:  // fmod: C's %; else the divisor's sign, as Python's %
        if (q == 0) return std::nullopt;
        out[i] = p % q;
        if (!attrs.fmod && out[i] != 0 && (out[i] < 0) != (q < 0)) out[i] += q;
        break;
      default:
        return std::nullopt;
    }
  }
  return out;
}

Tensor gather(const Tensor& data, const Tensor& idx, const OpAttrs& a) {
  const std::size_t axis = norm_axis(a.axis, data.shape.size());
  Tensor t{{}, data.elem_bytes, std::nullopt};
  t.shape.assign(data.shape.begin(), data.shape.begin() + static_cast<std::ptrdiff_t>(axis));
  t.shape.insert(t.shape.end(), idx.shape.begin(), idx.shape.end());
  t.shape.insert(t.shape.end(), data.shape.begin() + static_cast<std::ptrdiff_t>(axis) + 1,
                 data.shape.end());
  const std::int64_t n = data.shape[axis];
  if (idx.value)
    for (auto i : *idx.value)
      if (i < -n || i >= n)
        fail("index " + std::to_string(i) + " out of range for axis " + std::to_string(axis) +
             " of " + shape_str(data.shape));
  if (data.value && idx.value && data.shape.size() == 1) {
    std::vector<std::int64_t> v;
    for (auto i : *idx.value)
      v.push_back((*data.value)[static_cast<std::size_t>(i < 0 ? i + n : i)]);
    t.value = v;
  }
  return t;
}

Tensor equal(const std::vector<const Tensor*>& in) {
  Tensor t{broadcast(in[0]->shape, in[1]->shape), 1, std::nullopt};
  values_or_layer(t, in, [&](std::size_t i) { return at(*in[0], i) == at(*in[1], i); });
  return t;
}

Tensor where(const std::vector<const Tensor*>& in) {
  Tensor t{broadcast(broadcast(in[0]->shape, in[1]->shape), in[2]->shape),
           std::max(in[1]->elem_bytes, in[2]->elem_bytes), std::nullopt};
  values_or_layer(t, in,
              [&](std::size_t i) { return at(*in[0], i) ? at(*in[1], i) : at(*in[2], i); });
  return t;
}

/// ONNX Expand: the input broadcast with the target shape (both ways). Copying a tensor of run
/// time into a bigger one is not supported; to its own shape it is an identity (removed by the
/// identity pass).
Tensor expand(const Tensor& x, const Tensor& target) {
  if (!target.value) fail("target shape (input 1) is not known at compile time");
  for (auto d : *target.value)
    if (d < 0) fail("target shape " + shape_str(*target.value) + " has a negative dimension");
  Tensor t{broadcast(x.shape, *target.value), x.elem_bytes, std::nullopt};
  if (t.shape == x.shape) {
    t.value = x.value;
  } else if (x.value && t.shape.size() == 1 && t.shape[0] <= kMaxValues) {
    fold_values(t, [&](std::size_t i) { return at(x, i); });
  } else {
    fail("broadcasting " + shape_str(x.shape) + " to " + shape_str(t.shape) +
         " is not supported for a tensor computed at run time or a weight (only to its own "
         "shape, or of 1-D shape arithmetic up to " +
         std::to_string(kMaxValues) + " values)");
  }
  return t;
}

}  // namespace nocflow::optimizer::shape_rules
