// SPDX-License-Identifier: MIT
// ONNX import: one rule per ONNX operator (onnx_importer.h); the operators imported as several
// nodes are in onnx_import_rewrites.cpp.

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <unordered_set>

#include "noc/base/error.h"
#include "optimizer/frontend/onnx_importer.h"
#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer::onnx_import_detail {

namespace {
/// Where an unsupported operator's refusal sends the user.
constexpr const char* kSupportedList = " (supported operators: configs/networks/README.md)";
}  // namespace

std::vector<std::int64_t> Importer::window_ints(const onnx::NodeProto& n, const char* name,
                                                std::size_t size, std::int64_t min) const {
  auto v = attr_ints(n, name);
  if (v.empty() && !attr(n, name)) return v;
  if (v.size() != size)
    fail(n, std::string(name) + " " + shape_str(v) + " must have " + std::to_string(size) +
                " values for a 2-D window");
  for (auto x : v)
    if (x < min)
      fail(n, std::string(name) + " " + shape_str(v) + " must be at least " + std::to_string(min));
  return v;
}

void Importer::window_attrs(const onnx::NodeProto& n, OpAttrs& a, const Shape& kernel) const {
  const auto ap = attr(n, "auto_pad");
  if (ap && ap->s() != "NOTSET" && ap->s() != "VALID")
    fail(n, "auto_pad '" + ap->s() + "' is not supported (export with explicit pads)");
  if (ap && ap->s() == "VALID" && attr(n, "pads"))
    fail(n, "auto_pad VALID with explicit pads: ONNX allows one or the other");
  if (kernel.size() != 2) fail(n, "only 2-D windows are supported, kernel " + shape_str(kernel));
  if (kernel[0] < 1 || kernel[1] < 1)
    fail(n, "kernel " + shape_str(kernel) + " must be at least 1");
  a.kernel = {kernel[0], kernel[1]};
  if (auto s = window_ints(n, "strides", 2, 1); !s.empty()) a.stride = {s[0], s[1]};
  if (auto d = window_ints(n, "dilations", 2, 1); !d.empty()) a.dilation = {d[0], d[1]};
  if (auto p = window_ints(n, "pads", 4, 0); !p.empty()) a.pads = {p[0], p[1], p[2], p[3]};
  a.ceil_mode = attr_flag(n, "ceil_mode", false);
}

std::string Importer::weight_names(const onnx::NodeProto& n, int first) {
  std::string out;
  for (int i = first; i < n.input_size(); ++i) out += (i > first ? "|" : "") + n.input(i);
  return out;
}

void Importer::import_pad(const onnx::NodeProto& n) {
  if (n.input_size() == 0 || n.input(0).empty()) fail(n, "input 0 is missing");
  const auto* mode = attr(n, "mode");
  if (mode && mode->s() != "constant")
    fail(n, "mode '" + mode->s() + "' is not supported (only constant)");
  std::vector<std::int64_t> p = attr_ints(n, "pads");  // before opset 11
  if (n.input_size() > 1 && !n.input(1).empty()) p = need_constant(n, 1, "pads").ints;
  bool zeros = attr_float(n, "value", 0) == 0;  // before opset 11
  if (n.input_size() > 2 && !n.input(2).empty()) {
    const ConstInfo& v = need_constant(n, 2, "constant_value");
    zeros = (v.floats.size() == 1 && v.floats[0] == 0) || (v.ints.size() == 1 && v.ints[0] == 0);
  }
  if (!zeros) fail(n, "only padding with zeros is supported");
  if (n.input_size() > 3 && !n.input(3).empty()) fail(n, "axes (input 3) are not supported");
  if (p.size() % 2)
    fail(n, "pads " + shape_str(p) + ": an odd number of values (ONNX gives each axis a begin "
                                     "and an end)");
  if (const std::optional<Shape> in = known_shape(n.input(0)); in && p.size() != 2 * in->size())
    fail(n, "pads " + shape_str(p) + ": " + std::to_string(p.size()) + " values for a " +
                shape_str(*in) + " tensor (ONNX gives each of its " + std::to_string(in->size()) +
                " axes a begin and an end)");
  for (auto x : p)
    if (x < 0) fail(n, "pads " + shape_str(p) + ": negative pads (cropping) are not supported");
  if (std::all_of(p.begin(), p.end(), [](std::int64_t x) { return x == 0; })) {  // of any rank
    if (const ConstInfo* c = constant(n, 0))
      alias(n, *c);
    else
      values_[n.output(0)] = value(n.input(0), "node '" + label(n) + "'");
    return;
  }
  if (p.size() != 8 || p[0] || p[1] || p[4] || p[5]) refuse_pad_axes(n, p);
  if (pads_.count(n.input(0))) fail(n, "pads the output of another Pad");
  pads_[n.output(0)] = Pad{n.input(0), label(n), {p[2], p[3], p[6], p[7]}};
}

void Importer::refuse_pad_axes(const onnx::NodeProto& n, const std::vector<std::int64_t>& p) {
  const std::size_t rank = p.size() / 2;
  std::vector<std::string> axes;
  for (std::size_t i = 0; i < rank; ++i)
    if (p[i] || p[i + rank]) axes.push_back(std::to_string(i));
  std::string padded = axes.size() == 1 ? "axis " : "axes ";
  for (std::size_t i = 0; i < axes.size(); ++i)
    padded += (i == 0 ? "" : i + 1 == axes.size() ? " and " : ", ") + axes[i];
  const std::optional<Shape> shape = known_shape(n.input(0));
  padded += shape && shape->size() == rank ? " of a " + shape_str(*shape) + " tensor"
                                           : " of a rank-" + std::to_string(rank) + " tensor";
  // What reads it: the nodes after it, and the graph's outputs.
  std::vector<std::string> readers;
  const auto& graph = model_.graph();
  for (const auto& user : graph.node())
    if (std::find(user.input().begin(), user.input().end(), n.output(0)) != user.input().end())
      readers.push_back(user.op_type() + " '" + label(user) + "'");
  for (const auto& out : graph.output())
    if (out.name() == n.output(0)) readers.push_back("the graph's output");
  std::string feeds;
  for (std::size_t i = 0; i < readers.size() && i < 3; ++i)
    feeds += (i == 0 ? " and feeds " : i + 1 == readers.size() ? " and " : ", ") + readers[i];
  if (readers.size() > 3) feeds += " and " + std::to_string(readers.size() - 3) + " more";
  fail(n, "pads " + shape_str(p) + ": it pads " + padded + feeds +
              "; only a Pad of H and W (axes 2 and 3 of N, C, H, W) with zeros that feeds a Conv, "
              "MaxPool or AveragePool is supported");
}

void Importer::fold_pad(const onnx::NodeProto& n, OpAttrs& a) const {
  if (n.input_size() == 0) return;  // emit says it is missing (this read was a CHECK failure)
  const auto pad = pads_.find(n.input(0));
  if (pad == pads_.end()) return;
  const auto& p = pad->second.pads;
  // A ceil-mode window may start in explicit end padding, never in implicit padding.
  if (a.ceil_mode && (p[2] || p[3]))
    fail(n, "ceil_mode with the bottom or right padding of Pad '" + pad->second.node +
                "' is not supported");
  if (n.op_type() == "AveragePool" && !a.count_include_pad) {
    if (a.pads != std::array<std::int64_t, 4>{0, 0, 0, 0})
      fail(n, "leaves its own pads out of the average but must count the zeros of Pad '" +
                  pad->second.node + "' in: not supported");
    a.count_include_pad = true;
  }
  for (std::size_t i = 0; i < 4; ++i) a.pads[i] += pad->second.pads[i];
}

void Importer::import_resize(const onnx::NodeProto& n) {
  if (opset_ < 11)
    fail(n, "Resize before opset 11 (no coordinate_transformation_mode) is not supported");
  OpAttrs a;
  auto text = [&](const char* name, std::string& to) {
    if (const auto* v = attr(n, name)) to = v->s();
  };
  text("mode", a.mode);
  text("coordinate_transformation_mode", a.coordinate_transformation_mode);
  text("nearest_mode", a.nearest_mode);  // checked by the shape rule, which names the node
  if (attr_flag(n, "antialias", false) && a.mode != "nearest") fail(n, "antialias=1 is not supported");
  // opset 18's axes: only H and W, which the scales or sizes then give alone
  std::vector<std::int64_t> axes = attr_ints(n, "axes");
  for (auto& x : axes) x = x < 0 ? x + 4 : x;
  if (!axes.empty() && axes != std::vector<std::int64_t>{2, 3})
    fail(n, "axes " + shape_str(attr_ints(n, "axes")) + " are not supported (only H and W: 2, 3)");
  const std::size_t given = axes.empty() ? 4 : 2;
  // Before opset 13 scales and sizes may be empty tensors, standing for absent ones.
  auto present = [&](int i) {
    if (i >= n.input_size() || n.input(i).empty()) return false;
    const ConstInfo* c = constant(n, i);
    return !c || c->dims.empty() || std::find(c->dims.begin(), c->dims.end(), 0) == c->dims.end();
  };
  const ConstInfo* scales = present(2) ? constant(n, 2) : nullptr;
  if (present(2) && !scales) fail(n, "scales (input 2) must be a constant");
  if (scales && present(3)) fail(n, "gives both scales and sizes");
  if (const auto* p = attr(n, "keep_aspect_ratio_policy"); p && p->s() != "stretch" && present(3))
    fail(n, "keep_aspect_ratio_policy '" + p->s() + "' is not supported (only stretch)");
  if (scales) {
    if (!scales->ints.empty()) fail(n, "scales must be floats, not integers");
    if (scales->floats.size() != given)
      fail(n,
           "scales must be " + std::to_string(given) + " floats, got " + shape_str(scales->dims));
    if (given == 4 && (scales->floats[0] != 1 || scales->floats[1] != 1))
      fail(n, "scales resize N or C; only H and W may be resized");
    a.scales = {scales->floats[given - 2], scales->floats[given - 1]};
    emit(n, OpKind::Resize, a, {0});
  } else if (!present(3)) {
    fail(n, "needs scales or sizes");
  } else if (given == 2) {
    const ConstInfo& sizes = need_constant(n, 3, "sizes");
    if (sizes.ints.size() != 2) fail(n, "sizes must be 2 integers, got " + shape_str(sizes.dims));
    a.shape = sizes.ints;
    emit(n, OpKind::Resize, a, {0});
  } else {
    emit(n, OpKind::Resize, a, {0, 3});  // N, C, H, W: checked and taken by shape inference
  }
}

void Importer::import_constant_of_shape(const onnx::NodeProto& n) {
  const ConstInfo& shape = need_constant(n, 0, "shape");
  if (shape.dims.size() != 1 || shape.ints.size() != static_cast<std::size_t>(shape.dims[0]))
    fail(n, "shape (input 0) must be a 1-D integer tensor, got " + shape_str(shape.dims));
  ConstInfo c;  // a float zero unless `value` says otherwise
  c.dims = shape.ints;
  bool small = true;  // at most kMaxFoldElements elements, so filled (counted without overflow)
  std::int64_t count = 1;
  for (auto d : c.dims) {
    if (d < 0) fail(n, "shape " + shape_str(c.dims) + " has a negative dimension");
    small = small && (d == 0 || count <= kMaxFoldElements / d);
    if (small) count *= d;
  }
  ConstInfo fill;
  fill.floats = {0.0};
  if (const auto* v = attr(n, "value")) {
    if (v->type() != onnx::AttributeProto::TENSOR) fail(n, "attribute 'value' must be a tensor");
    fill = const_from(v->t(), false);
    if (fill.dims.size() > 1 || (fill.dims.size() == 1 && fill.dims[0] != 1))
      fail(n,
           "attribute 'value' must be a one-element tensor of shape [1] (the ONNX spec; "
           "onnxruntime refuses others too), got shape " +
               shape_str(fill.dims));
  }
  c.dtype = fill.dtype;
  if (small) {  // values of the types const_from reads (a float16 fill stays unread)
    const auto size = static_cast<std::size_t>(count);
    if (!fill.ints.empty()) c.ints.assign(size, fill.ints[0]);
    if (!fill.floats.empty()) c.floats.assign(size, fill.floats[0]);
  }
  alias(n, c);
}

void Importer::import_node(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail(n, "unsupported ONNX operator '" + n.domain() + "." + n.op_type() + "'" + kSupportedList);
  if (n.output_size() == 0) fail(n, "has no output");
  // ONNX graphs are in single-assignment form; a second producer would silently win.
  std::unordered_set<std::string> outputs;
  for (const auto& out : n.output())
    if (!out.empty() && (produced_.count(out) || values_.count(out) || consts_.count(out) ||
                         !outputs.insert(out).second))
      fail(n, "output tensor '" + out +
                  "' is already produced by an earlier node, an initializer "
                  "or this node");
  const std::string& op = n.op_type();
  check_opset(n);
  OpAttrs a;
  if (op == "Constant") {
    const auto* v = attr(n, "value");
    if (!v || v->type() != onnx::AttributeProto::TENSOR)
      fail(n, "only 'value' tensor constants are supported");
    consts_[n.output(0)] = const_from(v->t(), false);
  } else if (fold_constant(n)) {
    // computed from compile-time tensors: its output is a constant
  } else if (op == "Identity" && constant(n, 0)) {
    alias(n, *constant(n, 0));
  } else if (op == "Transpose" && constant(n, 0) && constant(n, 0)->dims.size() == 2 &&
             !constant(n, 0)->node) {
    // A transposed weight matrix (unfolded PyTorch export): still a weight, dims swapped.
    ConstInfo t = *constant(n, 0);
    std::swap(t.dims[0], t.dims[1]);
    t.ints.clear();
    t.floats.clear();
    consts_[n.output(0)] = t;
  } else if (op == "Conv" || op == "ConvTranspose") {
    const bool transposed = op == "ConvTranspose";
    // Conv: K × C/groups × kh × kw; ConvTranspose: C × K/groups × kh × kw
    const ConstInfo& w = need_constant(n, 1, "weight");
    if (w.dims.size() != 4)
      fail(n, std::string("only 2-D ") + (transposed ? "transposed " : "") +
                  "convolutions are supported, weight " + shape_str(w.dims));
    if (transposed && attr(n, "output_shape"))
      fail(n, "output_shape is not supported (export with pads and output_padding)");
    a.groups = attr_int(n, "group", 1);
    if (a.groups < 1) fail(n, "group " + std::to_string(a.groups) + " must be at least 1");
    a.out_channels = transposed ? w.dims[1] * a.groups : w.dims[0];
    a.in_channels = transposed ? w.dims[0] : w.dims[1] * a.groups;
    a.bias = n.input_size() > 2 && !n.input(2).empty();
    if (a.bias && need_constant(n, 2, "bias").dims != Shape{a.out_channels})
      fail(n, "bias " + shape_str(constant(n, 2)->dims) + " does not match the weight's " +
                  std::to_string(a.out_channels) + " output channels");
    const Shape weight_kernel{w.dims[2], w.dims[3]};
    if (auto k = attr_ints(n, "kernel_shape"); !k.empty() && k != weight_kernel)
      fail(n, "kernel_shape " + shape_str(k) + " contradicts the weight " + shape_str(w.dims));
    window_attrs(n, a, weight_kernel);
    if (!transposed)
      fold_pad(n, a);
    else if (auto p = window_ints(n, "output_padding", 2, 0); !p.empty())
      a.output_padding = {p[0], p[1]};
    a.weights = weight_names(n, 1);
    emit(n, transposed ? OpKind::ConvTranspose : OpKind::Conv, a, {0});
  } else if (op == "Gemm" ||
             (op == "MatMul" && constant(n, 1) && constant(n, 1)->dims.size() == 2)) {
    if (attr_flag(n, "transA", false)) fail(n, "transA=1 is not supported");
    // ONNX's Gemm takes a matrix A (onnxruntime refuses any other); a batched product is a
    // MatMul, which the branch above takes with a 2-D weight.
    if (n.input_size() == 0) fail(n, "input 0 is missing");  // read below (a CHECK failure)
    if (const auto x = known_shape(n.input(0)); op == "Gemm" && x && x->size() != 2)
      fail(n, "A must be 2-D (ONNX's Gemm), got " + shape_str(*x) +
                  ": export the product as a MatMul");
    const ConstInfo& w = need_constant(n, 1, "weight");
    if (w.dims.size() != 2) fail(n, "weight must be 2-D, got " + shape_str(w.dims));
    const bool trans_b = attr_flag(n, "transB", false);
    a.out_channels = trans_b ? w.dims[0] : w.dims[1];
    a.in_channels = trans_b ? w.dims[1] : w.dims[0];
    // C, a bias of one value per output column (what torch's Linear exports); beta = 0
    // ignores it. Another C (a scalar, a column, a whole matrix, a computed one) is an Add of its
    // own, which the exporter writes as one when it is not folded into Gemm.
    a.bias = op == "Gemm" && n.input_size() > 2 && !n.input(2).empty() &&
             attr_float(n, "beta", 1.0) != 0.0;
    if (a.bias) {
      const Shape& c = need_constant(n, 2, "C").dims;
      if (const std::string n_out = std::to_string(a.out_channels);
          c != Shape{a.out_channels} && c != Shape{1, a.out_channels})
        fail(n, "C " + shape_str(c) + " is not supported: only a bias of one value per output " +
                    "column, [" + n_out + "] or [1," + n_out + "] (export the addition as an Add)");
    }
    a.weights = weight_names(n, 1);
    emit(n, OpKind::Gemm, a, {0});
  } else if (op == "MatMul") {
    emit(n, OpKind::MatMul, a, {0, 1});
  } else if (op == "Einsum") {
    import_einsum(n);
  } else if (op == "MaxPool" || op == "AveragePool") {
    if (n.output_size() > 1 && !n.output(1).empty()) fail(n, "the indices output is not supported");
    window_attrs(n, a, attr_ints(n, "kernel_shape"));
    if (a.dilation != std::array<std::int64_t, 2>{1, 1})
      fail(n, "dilated pooling is not supported");
    a.count_include_pad = attr_flag(n, "count_include_pad", false);
    if (const std::string why = pool_pad_problem(a); !why.empty()) fail(n, why);
    fold_pad(n, a);
    emit(n, op == "MaxPool" ? OpKind::MaxPool : OpKind::AvgPool, a, {0});
  } else if (op == "GlobalAveragePool") {
    emit(n, OpKind::GlobalAvgPool, a, {0});
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
             op == "PRelu") {
    emit(n, *op_kind_from_key(op), a, {0, 1});
  } else if (op == "Mod") {
    a.fmod = attr_flag(n, "fmod", false);
    emit(n, OpKind::Mod, a, {0, 1});
  } else if (op == "Relu" || op == "Sigmoid" || op == "Tanh" || op == "Erf" || op == "Sqrt" ||
             op == "Exp" || op == "Gelu") {
    emit(n, *op_kind_from_key(op), a, {0});
  } else if (op == "HardSigmoid" || op == "LeakyRelu") {
    a.alpha = attr_float(n, "alpha", op == "HardSigmoid" ? 0.2 : 0.01);
    a.beta = op == "HardSigmoid" ? attr_float(n, "beta", 0.5) : 0.0;
    emit(n, *op_kind_from_key(op), a, {0});
  } else if (op == "HardSwish") {
    emit(n, OpKind::HardSwish, a, {0});
  } else if (op == "Clip") {
    a.min = attr_float(n, "min", a.min);
    a.max = attr_float(n, "max", a.max);
    for (int i = 1; i <= 2; ++i)
      if (const ConstInfo* c = constant(n, i); c && c->floats.size() == 1)
        (i == 1 ? a.min : a.max) = c->floats[0];
      else if (i < n.input_size() && !n.input(i).empty())
        fail(n, "min/max must be constant scalars");
    emit(n, OpKind::Clip, a, {0});
  } else if (op == "BatchNormalization") {
    // An export in training mode (PyTorch's TrainingMode.TRAINING, scripts/export_onnx.py
    // --batchnorm) adds the running mean and variance as outputs: nothing reads them, and a
    // reader is refused, as every output of a node that is not imported (value()). The
    // normalisation is priced alike either way.
    a.epsilon = attr_float(n, "epsilon", 1e-5);
    const ConstInfo& scale = need_constant(n, 1, "scale");
    if (scale.dims.size() != 1)
      fail(n, "scale must be 1-D (one value per channel), got " + shape_str(scale.dims));
    a.in_channels = scale.dims[0];
    a.weights = weight_names(n, 1);
    emit(n, OpKind::BatchNorm, a, {0});
  } else if (op == "LayerNormalization") {
    a.axis = attr_int(n, "axis", -1);
    a.epsilon = attr_float(n, "epsilon", 1e-5);
    a.shift = n.input_size() > 2 && !n.input(2).empty();  // B is optional
    a.weights = weight_names(n, 1);
    emit(n, OpKind::LayerNorm, a, {0});
  } else if (op == "Softmax") {
    a.axis = attr_int(n, "axis", opset_ >= 13 ? -1 : 1);
    if (opset_ < 13)
      import_coerced_softmax(n, a);
    else
      emit(n, OpKind::Softmax, a, {0});
  } else if (op == "ReduceMean") {
    a.axes = attr_ints(n, "axes");
    if (n.input_size() > 1 && !n.input(1).empty()) {  // opset 18: the axes are an input
      const ConstInfo* c = constant(n, 1);
      if (!c) fail(n, "axes (input 2) must be a constant");
      a.axes = c->ints;
    }
    if (a.axes.empty() && attr_flag(n, "noop_with_empty_axes", false))
      fail(n, "noop_with_empty_axes=1 without axes is not supported");
    a.keepdims = attr_flag(n, "keepdims", true);
    emit(n, OpKind::ReduceMean, a, {0});
  } else if (op == "Concat") {
    a.axis = attr_int(n, "axis", 1);
    std::vector<int> all;
    for (int i = 0; i < n.input_size(); ++i) all.push_back(i);
    emit(n, OpKind::Concat, a, all);
  } else if (op == "Reshape") {
    if (attr_flag(n, "allowzero", false)) fail(n, "allowzero=1 is not supported");
    if (const ConstInfo* c = constant(n, 1); c && !c->ints.empty()) {
      a.shape = c->ints;
      emit(n, OpKind::Reshape, a, {0});
    } else {
      emit(n, OpKind::Reshape, a, {0, 1});
    }
  } else if (op == "Flatten") {
    a.axis = attr_int(n, "axis", 1);
    emit(n, OpKind::Flatten, a, {0});
  } else if (op == "Transpose") {
    a.perm = attr_ints(n, "perm");
    emit(n, OpKind::Transpose, a, {0});
  } else if (op == "Identity" || op == "Dropout") {
    // A Dropout's mask output (PyTorch's F.dropout(training=True) exports one) is refused to
    // any reader, as every output of a node that is not imported (value()).
    emit(n, op == "Identity" ? OpKind::Identity : OpKind::Dropout, a, {0});
  } else if (op == "Pad") {
    import_pad(n);
  } else if (op == "Split") {
    import_split(n);
  } else if (op == "Resize") {
    import_resize(n);
  } else if (op == "Slice") {
    if (opset_ < 10)
      fail(n, "Slice before opset 10 (starts and ends as attributes) is not supported");
    std::vector<int> operands;
    for (int i = 0; i < std::min(n.input_size(), 5); ++i)
      if (!n.input(i).empty())
        operands.push_back(i);
      else if (i < 3)
        fail(n, "input " + std::to_string(i) + " is missing");
      else if (i == 3 && n.input_size() > 4)
        fail(n, "steps without axes are not supported");
    emit(n, OpKind::Slice, a, operands);
  } else if (op == "Shape") {
    emit(n, OpKind::Shape, a, {0});
  } else if (op == "Expand") {
    import_expand(n);
  } else if (op == "Equal") {
    emit(n, OpKind::Equal, a, {0, 1});
  } else if (op == "Where") {
    emit(n, OpKind::Where, a, {0, 1, 2});
  } else if (op == "ConstantOfShape") {
    import_constant_of_shape(n);
  } else if (op == "Range" || op == "ScatterND" || op == "Not") {
    // fold_constant took them on compile-time tensors of known values
    fail(n, "is supported only on compile-time tensors whose values are known (shape "
            "arithmetic, masks) of at most " + std::to_string(kMaxFoldElements) +
            " elements, not on tensors computed at run time or weights");
  } else if (op == "Gather") {
    a.axis = attr_int(n, "axis", 0);
    emit(n, OpKind::Gather, a, {0, 1});
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    a.axes = attr_ints(n, "axes");
    const OpKind k = op == "Unsqueeze" ? OpKind::Unsqueeze : OpKind::Squeeze;
    if (n.input_size() > 1 && !n.input(1).empty())
      emit(n, k, a, {0, 1});
    else
      emit(n, k, a, {0});
  } else if (op == "Cast") {
    const auto to = attr_int(n, "to", onnx::TensorProto::FLOAT);
    a.elem_bytes = elem_bytes(static_cast<int>(to));
    if (a.elem_bytes == 0)
      fail(n, "to=" + std::to_string(to) + " is not a data type of fixed size");
    emit(n, OpKind::Cast, a, {0});
  } else {
    fail(n, "unsupported ONNX operator '" + op + "'" + kSupportedList);
  }
  for (const auto& out : n.output())
    if (!out.empty()) produced_[out] = label(n);
}

}  // namespace nocflow::optimizer::onnx_import_detail
