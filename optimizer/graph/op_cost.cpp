// SPDX-License-Identifier: MIT
#include "optimizer/graph/op_cost.h"

#include <algorithm>
#include <initializer_list>
#include <limits>
#include <string>
#include <unordered_set>

#include "noc/base/error.h"
#include "optimizer/graph/resize.h"
#include "optimizer/partition/relayout.h"

namespace nocflow::optimizer {
namespace {

std::vector<const Tensor*> input_tensors(const Graph& g, NodeId id) {
  std::vector<const Tensor*> out;
  for (NodeId in : g.inputs(id)) out.push_back(&g.node(in).output);
  return out;
}

std::int64_t dim(const Shape& s, std::size_t i) { return i < s.size() ? s[i] : 1; }

/// The product (or sum) held at INT64_MAX instead of wrapping: shape inference refuses a layer
/// whose count passes 2^53 (shape_inference.h), so it must see one too large for an int64 too.
std::int64_t times(std::initializer_list<std::int64_t> factors) {
  std::int64_t p = 1;
  for (std::int64_t f : factors)
    if (__builtin_mul_overflow(p, f, &p)) return std::numeric_limits<std::int64_t>::max();
  return p;
}
std::int64_t plus(std::int64_t a, std::int64_t b) {
  std::int64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? std::numeric_limits<std::int64_t>::max() : s;
}

/// Dimensions whose view axis (box.h, view4) exists and has size > 1, minus those whose view
/// axis holds one of `except_axes` (beyond rank 4, BATCH holds every leading axis). An axis the
/// output lacks excludes nothing: a weight gradient's kernel axes 2, 3 when it is [out, in], a
/// ReduceMean's dropped axes (view_axis would put them on C, with every axis after the first
/// of a rank-2 tensor).
PartDimSet output_dims(const Shape& out, std::vector<std::size_t> except_axes = {}) {
  PartDimSet set;
  const Dims4 view = view4(out);
  for (PartDim d : kAllPartDims) {
    auto axis = output_axis(d, out.size());
    if (!axis) continue;
    const int v = view_axis(*axis, out.size());
    if (view[static_cast<std::size_t>(v)] <= 1) continue;
    bool excluded = false;
    for (auto e : except_axes)
      excluded = excluded ||
                 (e < out.size() && view_axis(static_cast<std::int64_t>(e), out.size()) == v);
    if (!excluded) set.insert(d);
  }
  return set;
}

/// Taps per output element of a Resize from `x` to `y` (NCHW).
std::int64_t taps_per_output(const OpAttrs& a, const Shape& x, const Shape& y) {
  return resize_taps_per_output(a, resize_axis(a, x, y, 0)) *
         resize_taps_per_output(a, resize_axis(a, x, y, 1));
}

std::size_t axis_index(std::int64_t axis, std::size_t rank) {
  return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis);
}

/// Element operations per output-gradient element of a Grad node: the derivative's arithmetic
/// (relu: a select; sigmoid: dy·y·(1−y); softmax: y·(dy − Σ dy·y); normalisations: the
/// centred and scaled terms; their parameters: Σ dy and Σ dy·x̂).
std::int64_t grad_ops(OpKind of, int input, bool same_shape) {
  switch (of) {
    case OpKind::Add:  // a broadcast sum
    case OpKind::Sub:  // a negation
    case OpKind::Mul:
    case OpKind::Relu:
    case OpKind::Clip:
    case OpKind::Dropout:
    case OpKind::Exp:
    case OpKind::LeakyRelu:    // a select of dy or α·dy
    case OpKind::HardSigmoid:  // α·dy inside the ramp
    case OpKind::Where:        // a select of dy or 0
      return 1;
    case OpKind::HardSwish:  // dy·(2x/6 + 1/2) on the ramp, a select outside
      return 3;
    case OpKind::Div:
    case OpKind::Mod:  // da = dy; db = −dy·⌊a/b⌋
      return input == 0 ? 1 : 3;
    case OpKind::PRelu:  // dx a select of dy or slope·dy; the slope's Σ dy·x where x < 0
      return input == 0 ? 1 : 2;
    case OpKind::Sqrt:
      return 2;
    case OpKind::Pow:
    case OpKind::Sigmoid:
    case OpKind::Tanh:
      return 3;
    case OpKind::Erf:
      return 4;
    case OpKind::Gelu:
      return 8;
    case OpKind::Softmax:
      return 4;
    case OpKind::BatchNorm:
      return same_shape ? 2 : 3;
    case OpKind::LayerNorm:
      return same_shape ? 8 : 3;
    default:
      return 1;
  }
}

}  // namespace

const std::vector<OptimizerInfo>& optimizers() {
  // sgd w −= η·g; momentum v = μ·v + g first; adam two moment averages, their bias
  // corrections, a square root and a division.
  static const std::vector<OptimizerInfo> table{{"sgd", 2, 0}, {"momentum", 4, 1}, {"adam", 11, 2}};
  return table;
}

const OptimizerInfo* find_optimizer(std::string_view name) {
  for (const OptimizerInfo& o : optimizers())
    if (o.name == name) return &o;
  return nullptr;
}

OpCost op_cost(OpKind kind, const OpAttrs& a, const std::vector<const Tensor*>& in,
               const Tensor& out) {
  OpCost c;
  c.output_bytes = out.bytes();
  const std::int64_t n_out = out.numel();
  switch (kind) {
    case OpKind::Conv: {
      const std::int64_t cin = dim(in[0]->shape, 1) / a.groups;
      c.macs = times({n_out, cin, a.kernel[0], a.kernel[1]});
      c.params = a.out_channels * cin * a.kernel[0] * a.kernel[1] + (a.bias ? a.out_channels : 0);
      break;
    }
    case OpKind::ConvTranspose: {  // every input value meets K/groups × kh × kw weights
      const std::int64_t cin = dim(in[0]->shape, 1), kout = a.out_channels / a.groups;
      c.macs = times({in[0]->numel(), kout, a.kernel[0], a.kernel[1]});
      c.params = cin * kout * a.kernel[0] * a.kernel[1] + (a.bias ? a.out_channels : 0);
      break;
    }
    case OpKind::Gemm: {
      const std::int64_t fin = in[0]->shape.back();
      c.macs = times({n_out, fin});
      c.params = fin * a.out_channels + (a.bias ? a.out_channels : 0);
      break;
    }
    case OpKind::MatMul:
      c.macs = times({n_out, in[0]->shape.back()});
      break;
    case OpKind::MaxPool:
    case OpKind::AvgPool:
      c.vector_ops = times({n_out, a.kernel[0], a.kernel[1]});
      break;
    case OpKind::GlobalAvgPool: c.vector_ops = in[0]->numel(); break;
    case OpKind::Resize:  // a multiply-add per tap
      c.vector_ops = times({n_out, taps_per_output(a, in[0]->shape, out.shape)});
      break;
    case OpKind::BatchNorm:
      c.vector_ops = times({2, n_out});
      c.params = 2 * dim(in[0]->shape, 1);
      break;
    case OpKind::LayerNorm: {
      std::int64_t norm = 1;
      for (std::size_t i = axis_index(a.axis, out.shape.size()); i < out.shape.size(); ++i)
        norm *= out.shape[i];
      c.vector_ops = times({5, n_out});
      c.params = (a.shift ? 2 : 1) * norm;  // scale (and shift) per normalised element
      break;
    }
    case OpKind::Softmax:
      c.vector_ops = times({3, n_out});
      break;
    case OpKind::ReduceMean: c.vector_ops = in[0]->numel(); break;
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow:
    case OpKind::Mod: case OpKind::PRelu:
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Tanh:
    case OpKind::Gelu: case OpKind::Erf: case OpKind::Sqrt: case OpKind::Exp:
    case OpKind::HardSigmoid:
    case OpKind::HardSwish:
    case OpKind::LeakyRelu:
    case OpKind::Equal: case OpKind::Where:  // of run-time tensors (of constants they fold)
      c.vector_ops = n_out;
      break;
    case OpKind::Constant:
      if (a.trainable) c.params = n_out;
      break;
    // Training: each gradient of a Conv or Gemm costs the forward operator's MACs. The data
    // gradients read the weights; the updates hold them and the optimizer's state. Parameters
    // are counted once, at the forward operator.
    case OpKind::ConvGradInput: {
      const std::int64_t cin = dim(out.shape, 1) / a.groups;
      const std::int64_t window = times({cin, a.kernel[0], a.kernel[1]});
      c.macs = times({in[0]->numel(), window});
      c.weight_bytes = dim(in[0]->shape, 1) * window * out.elem_bytes;
      return c;
    }
    case OpKind::ConvTransposeGradInput: {  // the forward MACs; dX holds the weights
      const std::int64_t kout = a.out_channels / a.groups;
      c.macs = times({n_out, kout, a.kernel[0], a.kernel[1]});
      c.weight_bytes = dim(out.shape, 1) * kout * a.kernel[0] * a.kernel[1] * out.elem_bytes;
      return c;
    }
    case OpKind::ConvGradWeight:  // inputs X, dY; a ConvTranspose's dY, X (grad_of)
      c.macs = times({in[1]->numel(), dim(out.shape, 1), a.kernel[0], a.kernel[1]});
      if (a.bias)  // the bias gradient: dY summed per channel
        c.vector_ops = in[a.grad_of == OpKind::ConvTranspose ? 0 : 1]->numel();
      break;
    case OpKind::GemmGradInput:
      c.macs = times({n_out, in[0]->shape.back()});
      c.weight_bytes = a.in_channels * a.out_channels * out.elem_bytes;
      return c;
    case OpKind::GemmGradWeight:
      c.macs = times({in[1]->numel(), in[0]->shape.back()});
      if (a.bias) c.vector_ops = in[1]->numel();
      break;
    case OpKind::PoolGrad:
      c.vector_ops = a.grad_of == OpKind::MaxPool || a.grad_of == OpKind::AvgPool
                         ? times({in[0]->numel(), a.kernel[0], a.kernel[1]})
                         : n_out;
      break;
    case OpKind::Grad:
      c.vector_ops = times(
          {in[0]->numel(), a.grad_of == OpKind::Resize
                               ? taps_per_output(a, out.shape, in[0]->shape)
                               : grad_ops(a.grad_of, a.grad_input, out.shape == in[0]->shape)});
      break;
    case OpKind::LossGrad:
      c.vector_ops = times({3, n_out});
      break;  // softmax cross-entropy: p − label
    case OpKind::WeightUpdate: {
      const OptimizerInfo* o = find_optimizer(a.optimizer);
      if (!o) throw InputError("weight update with unknown optimizer '" + a.optimizer + "'");
      c.vector_ops = times({o->ops_per_param, a.params});
      c.weight_bytes = a.params * (1 + o->states) * out.elem_bytes;
      return c;
    }
    case OpKind::Fused: {
      for (const FusedPart& p : a.parts) {
        std::vector<const Tensor*> pin;
        for (const Tensor& t : p.inputs) pin.push_back(&t);
        const OpCost pc = op_cost(p.kind, p.attrs, pin, p.output);
        c.macs = plus(c.macs, pc.macs);
        c.vector_ops = plus(c.vector_ops, pc.vector_ops);
        c.params += pc.params;
      }
      break;
    }
    default: break;
  }
  c.weight_bytes = c.params * out.elem_bytes;
  return c;
}

OpCost own_cost(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  OpCost c = op_cost(n.kind, n.attrs, input_tensors(g, id), n.output);
  for (NodeId in : g.inputs(id))
    if (g.node(in).kind != OpKind::Constant) c.input_bytes += g.node(in).output.bytes();
  return c;
}

namespace {

/// What makes two layers hold the same parameters: their kind and the initializers they read
/// (a fused layer's parts'); "" for a node without named parameters of its own.
std::string parameter_key(const Node& n) {
  switch (n.kind) {
    case OpKind::Conv: case OpKind::ConvTranspose: case OpKind::Gemm: case OpKind::BatchNorm:
    case OpKind::LayerNorm:
      return n.attrs.weights.empty() ? "" : std::string(op_name(n.kind)) + ":" + n.attrs.weights;
    case OpKind::Fused: {  // its weighted parts', so that a fused Conv matches a plain one
      std::string key;
      for (const FusedPart& p : n.attrs.parts)
        if (!p.attrs.weights.empty())
          key += (key.empty() ? "" : ";") + std::string(op_name(p.kind)) + ":" + p.attrs.weights;
      return key;
    }
    default:
      return "";
  }
}

}  // namespace

ParameterOwners::ParameterOwners(const Graph& g) {
  // The first in topological order: node order is not, once a pass replaced a layer by a new
  // node (fusion's Gemm+Relu took the next id and handed the params to the later reader).
  std::unordered_map<std::string, NodeId> first;
  for (NodeId id : g.topological_order()) {
    const std::string key = parameter_key(g.node(id));
    if (key.empty()) continue;
    const auto [at, added] = first.emplace(key, id);
    if (!added) owner_.emplace(id, at->second);
  }
}

NodeId ParameterOwners::operator()(NodeId id) const {
  const auto found = owner_.find(id);
  return found == owner_.end() ? id : found->second;
}

OpCost op_cost(const Graph& g, NodeId id) {
  return is_layer(g.node(id)) ? op_cost(g, id, ParameterOwners(g)) : own_cost(g, id);
}

OpCost op_cost(const Graph& g, NodeId id, const ParameterOwners& owners) {
  OpCost c = own_cost(g, id);
  if (!is_layer(g.node(id))) return c;
  if (owners(id) != id) c.params = 0;  // counted at the owner; its copy still held
  for (NodeId in : g.inputs(id))
    if (const Node& k = g.node(in); k.kind == OpKind::Constant && k.attrs.trainable) {
      c.weight_bytes += k.output.bytes();
      // Counted once, at its first reader (the forward operator; gradients come later).
      for (const Use& u : g.uses(in))
        if (is_layer(g.node(u.node))) {
          if (u.node == id) c.params += k.output.numel();
          break;
        }
    }
  return c;
}

PartDimSet legal_part_dims(OpKind kind, const OpAttrs& a, const std::vector<const Tensor*>& in,
                           const Tensor& out) {
  const Shape& s = out.shape;
  switch (kind) {
    case OpKind::Input: case OpKind::Constant: case OpKind::RandomUniform: case OpKind::Shape:
    case OpKind::Unsqueeze: case OpKind::Squeeze: case OpKind::Expand:
      return {};
    case OpKind::Gather:  // rows of a table [rows, features] looked up (an embedding)
      // Split as its output, [ids.., features] of rank 2 or 3, whose features OUTP splits (the
      // C of the view) as it splits a product's weights. Other gathers do not split: with
      // more ids axes the features are W, which would not split the table.
      return in[0]->shape.size() == 2 && axis_index(a.axis, 2) == 0 &&
                     (s.size() == 2 || s.size() == 3)
                 ? output_dims(s)
                 : PartDimSet{};
    case OpKind::Conv:
    case OpKind::ConvTransposeGradInput: {  // a convolution of dY: a reduction over K per group
      PartDimSet set = output_dims(s);
      if (dim(in[0]->shape, 1) / a.groups * a.kernel[0] * a.kernel[1] > 1) set.insert(PartDim::Inpp);
      if (a.groups > 1 && a.groups == dim(in[0]->shape, 1)) set.erase(PartDim::Inpp);
      return set;
    }
    case OpKind::Gemm:
    case OpKind::MatMul: {
      PartDimSet set = output_dims(s);
      if (in[0]->shape.back() > 1) set.insert(PartDim::Inpp);
      return set;
    }
    case OpKind::GlobalAvgPool: return output_dims(s, {2, 3});
    case OpKind::Softmax: return output_dims(s, {axis_index(a.axis, s.size())});
    case OpKind::LayerNorm: {
      std::vector<std::size_t> normalised;
      for (std::size_t i = axis_index(a.axis, s.size()); i < s.size(); ++i) normalised.push_back(i);
      return output_dims(s, normalised);
    }
    case OpKind::ReduceMean: {
      std::vector<std::size_t> reduced;
      for (auto ax : a.axes) reduced.push_back(axis_index(ax, in[0]->shape.size()));
      if (a.axes.empty())
        for (std::size_t i = 0; i < s.size(); ++i) reduced.push_back(i);
      return output_dims(s, reduced);
    }
    case OpKind::Reshape:
    case OpKind::Flatten:
    case OpKind::Transpose:
      return relayout_dims(kind, a, in[0]->shape, s);
    case OpKind::ConvTranspose:    // a reduction over C per group,
    case OpKind::ConvGradInput: {  // over K per group: INPP slices the input's channels
      PartDimSet set = output_dims(s);
      if (dim(in[0]->shape, 1) / a.groups > 1) set.insert(PartDim::Inpp);
      return set;
    }
    case OpKind::ConvGradWeight:  // K × C/g × kh × kw: whole kernels, reduction over the batch
    case OpKind::GemmGradWeight: {
      PartDimSet set = output_dims(s, {2, 3});
      if (dim(in[0]->shape, 0) > 1) set.insert(PartDim::Inpp);
      return set;
    }
    case OpKind::GemmGradInput: {
      PartDimSet set = output_dims(s);
      if (in[0]->shape.back() > 1) set.insert(PartDim::Inpp);
      return set;
    }
    case OpKind::Grad:
      if ((a.grad_of == OpKind::Softmax || a.grad_of == OpKind::LayerNorm) && s == in[0]->shape)
        return legal_part_dims(a.grad_of, a, {in[0]}, out);
      return output_dims(s);
    case OpKind::LossGrad:  // softmax over the classes: C of an N×C×H×W output (per pixel)
      return output_dims(s, {s.size() == 4 ? 1 : s.empty() ? 0 : s.size() - 1});
    case OpKind::Fused: {
      // The head's dimensions that every part can split. INPP splits the head's reduction: the
      // members all-reduce the head's output and each applies the tail to the whole block, so
      // the tail must keep the head's shape (a broadcast to a bigger one would not).
      PartDimSet set;
      for (std::size_t i = 0; i < a.parts.size(); ++i) {
        const FusedPart& p = a.parts[i];
        std::vector<const Tensor*> pin;
        for (const Tensor& t : p.inputs) pin.push_back(&t);
        const PartDimSet part = legal_part_dims(p.kind, p.attrs, pin, p.output);
        if (i == 0) {
          set = part;
          continue;
        }
        for (PartDim d : kAllPartDims)
          if (d == PartDim::Inpp ? p.output.shape != a.parts[0].output.shape : !part.contains(d))
            set.erase(d);
      }
      return set;
    }
    default: return output_dims(s);
  }
}

PartDimSet legal_part_dims(const Graph& g, NodeId id) {
  const Node& n = g.node(id);
  return legal_part_dims(n.kind, n.attrs, input_tensors(g, id), n.output);
}

bool is_layer(const Node& n) { return n.kind != OpKind::Input && n.kind != OpKind::Constant; }

bool is_fixed_data(const Node& n) {
  return n.kind == OpKind::Constant && !n.attrs.trainable && !n.attrs.zeros && n.output.numel() > 1;
}

bool is_shape_operand(OpKind kind, int input) {
  switch (kind) {
    case OpKind::Reshape: case OpKind::Unsqueeze: case OpKind::Squeeze: case OpKind::Expand:
    case OpKind::Resize: case OpKind::Slice:
      return input > 0;
    default: return false;
  }
}

bool holds_fixed_data(const Graph& g, NodeId reader, int input) {
  return is_layer(g.node(reader)) && !is_shape_operand(g.node(reader).kind, input) &&
         is_fixed_data(g.node(g.input(reader, input)));
}

GraphTotals graph_totals(const Graph& g) {
  GraphTotals t;
  std::unordered_set<std::string> owners;  // parameter keys counted (ParameterOwners)
  const auto ids = g.node_ids();
  // A training graph's forward pass: what its loss gradients read, and so on up.
  std::vector<NodeId> read_by_loss;
  for (NodeId id : ids)
    if (g.node(id).kind == OpKind::LossGrad)
      for (NodeId in : g.inputs(id)) read_by_loss.push_back(in);
  const std::vector<bool> forward = upstream(g, read_by_loss);
  for (NodeId id : ids) {
    const OpCost c = own_cost(g, id);  // a trainable Constant counted once, not per reader
    t.macs += c.macs;
    t.vector_ops += c.vector_ops;
    const std::string key = parameter_key(g.node(id));  // counted once, whichever reader owns it
    if (key.empty() || owners.insert(key).second) {  // parameters shared by layers counted once
      t.params += c.params;
      t.weight_bytes += c.weight_bytes;
    }
    if (is_layer(g.node(id))) {
      ++t.layers;  // its output an activation, but a weight update's, written in place
      if (g.node(id).kind != OpKind::WeightUpdate) t.activation_bytes += c.output_bytes;
    } else {
      const auto uses = g.uses(id);
      if (std::any_of(uses.begin(), uses.end(),
                      [&](const Use& u) { return holds_fixed_data(g, u.node, u.index); }))
        t.fixed_bytes += g.node(id).output.bytes();
      // A trainable constant (a MatMul's weight): counted once above for the forward layers;
      // each backward one holds a copy too (dX's transpose of it), as Conv's and Gemm's dX do.
      if (!read_by_loss.empty() && g.node(id).kind == OpKind::Constant &&
          g.node(id).attrs.trainable) {
        std::unordered_set<NodeId> readers;
        for (const Use& u : uses)
          if (is_layer(g.node(u.node)) && !forward[u.node]) readers.insert(u.node);
        t.weight_bytes += static_cast<std::int64_t>(readers.size()) * g.node(id).output.bytes();
      }
    }
  }
  return t;
}

std::int64_t fixed_input_bytes(const Graph& g, NodeId id) {
  std::int64_t bytes = 0;
  const auto inputs = g.inputs(id);
  for (std::size_t i = 0; i < inputs.size(); ++i)
    if (holds_fixed_data(g, id, static_cast<int>(i))) bytes += g.node(inputs[i]).output.bytes();
  return bytes;
}

}  // namespace nocflow::optimizer
