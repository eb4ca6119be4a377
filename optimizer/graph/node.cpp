// SPDX-License-Identifier: MIT
#include "optimizer/graph/node.h"

#include <cstring>
#include <functional>

namespace nocflow::optimizer {

std::int64_t Tensor::numel() const {
  std::int64_t n = 1;
  for (auto d : shape) n *= d;
  return n;
}

std::string shape_str(const Shape& s) {
  std::string out = "[";
  for (std::size_t i = 0; i < s.size(); ++i) out += (i ? "," : "") + std::to_string(s[i]);
  return out + "]";
}

namespace {

/// Bit for bit: 0.0 and -0.0 are different constants (x / 0.0 and x / -0.0 differ).
bool same_bits(const std::vector<double>& a, const std::vector<double>& b) {
  return a.size() == b.size() &&
         (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(double)) == 0);
}

}  // namespace

bool OpAttrs::operator==(const OpAttrs& o) const {
  return out_channels == o.out_channels && in_channels == o.in_channels && kernel == o.kernel &&
         stride == o.stride && dilation == o.dilation && pads == o.pads &&
         output_padding == o.output_padding && groups == o.groups && bias == o.bias &&
         shift == o.shift && ceil_mode == o.ceil_mode && count_include_pad == o.count_include_pad &&
         fmod == o.fmod && axis == o.axis && axes == o.axes && keepdims == o.keepdims &&
         shape == o.shape && perm == o.perm && min == o.min && max == o.max && alpha == o.alpha &&
         beta == o.beta && epsilon == o.epsilon && ratio == o.ratio && elem_bytes == o.elem_bytes &&
         int_data == o.int_data && same_bits(float_data, o.float_data) &&
         trainable == o.trainable && zeros == o.zeros && parts == o.parts && weights == o.weights &&
         grad_of == o.grad_of && grad_input == o.grad_input && offset == o.offset &&
         step == o.step && params == o.params && optimizer == o.optimizer && scales == o.scales &&
         mode == o.mode && coordinate_transformation_mode == o.coordinate_transformation_mode &&
         nearest_mode == o.nearest_mode;
}

namespace {

void mix(std::size_t& seed, std::size_t v) {
  seed ^= v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2);
}
template <class T>
void mix_all(std::size_t& seed, const T& range) {
  mix(seed, range.size());
  for (const auto& x : range) mix(seed, std::hash<std::decay_t<decltype(x)>>{}(x));
}

}  // namespace

std::size_t hash_attrs(const OpAttrs& a) {
  std::size_t h = 0;
  mix(h, std::hash<std::int64_t>{}(a.out_channels));
  mix(h, std::hash<std::int64_t>{}(a.in_channels));
  mix_all(h, a.kernel);
  mix_all(h, a.stride);
  mix_all(h, a.dilation);
  mix_all(h, a.pads);
  mix_all(h, a.output_padding);
  mix(h, std::hash<std::int64_t>{}(a.groups));
  mix(h, (a.bias ? 1u : 0u) | (a.ceil_mode ? 2u : 0u) | (a.count_include_pad ? 4u : 0u) |
             (a.keepdims ? 8u : 0u) | (a.trainable ? 16u : 0u) | (a.fmod ? 32u : 0u) |
             (a.zeros ? 64u : 0u) | (a.shift ? 128u : 0u));
  mix(h, std::hash<std::int64_t>{}(a.axis));
  mix_all(h, a.axes);
  mix_all(h, a.shape);
  mix_all(h, a.perm);
  mix(h, std::hash<double>{}(a.min));
  mix(h, std::hash<double>{}(a.max));
  mix(h, std::hash<double>{}(a.alpha));
  mix(h, std::hash<double>{}(a.beta));
  mix(h, std::hash<double>{}(a.epsilon));
  mix(h, std::hash<double>{}(a.ratio));
  mix(h, std::hash<int>{}(a.elem_bytes));
  mix_all(h, a.int_data);
  mix_all(h, a.float_data);
  mix(h, std::hash<std::string>{}(a.weights));
  mix(h, static_cast<std::size_t>(a.grad_of));
  mix(h, std::hash<int>{}(a.grad_input));
  mix(h, std::hash<std::int64_t>{}(a.offset));
  mix(h, std::hash<std::int64_t>{}(a.step));
  mix(h, std::hash<std::int64_t>{}(a.params));
  mix(h, std::hash<std::string>{}(a.optimizer));
  mix_all(h, a.scales);
  mix(h, std::hash<std::string>{}(a.mode));
  mix(h, std::hash<std::string>{}(a.coordinate_transformation_mode));
  mix(h, std::hash<std::string>{}(a.nearest_mode));
  for (const auto& p : a.parts) {
    mix(h, static_cast<std::size_t>(p.kind));
    mix(h, hash_attrs(p.attrs));
  }
  return h;
}

std::string Node::op_label() const {
  if (kind == OpKind::Grad || kind == OpKind::PoolGrad)
    return std::string(op_name(attrs.grad_of)) + "Grad";
  if (kind != OpKind::Fused) return std::string(op_name(kind));
  std::string out;
  for (const auto& p : attrs.parts) out += (out.empty() ? "" : "+") + std::string(op_name(p.kind));
  return out;
}

}  // namespace nocflow::optimizer
