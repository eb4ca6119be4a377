// SPDX-License-Identifier: MIT
// ONNX import: one rule per ONNX operator (onnx_importer.h).
#include <algorithm>
#include <cctype>
#include <array>
#include <limits>
#include <optional>
#include <string>
#include <unordered_set>

#include "noc/base/error.h"
#include "optimizer/frontend/onnx_importer.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/graph/shape_rules.h"

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

NodeId Importer::int_constant(const std::string& name, std::int64_t v) {
  OpAttrs c;
  c.shape = {1};
  c.elem_bytes = 8;
  c.int_data = {v};
  return graph_.add_node(Node{graph_.unique_name(name), OpKind::Constant, c, {}});
}

void Importer::import_split(const onnx::NodeProto& n) {
  const std::int64_t axis = attr_int(n, "axis", 0);
  std::vector<std::int64_t> sizes = attr_ints(n, "split");  // before opset 13
  if (n.input_size() > 1 && !n.input(1).empty()) {
    const ConstInfo& c = need_constant(n, 1, "split");
    if (!c.floats.empty()) fail(n, "split (input 1) must be integers");
    sizes = c.ints;
  }
  if (sizes.empty()) {
    import_equal_split(n, axis);
    return;
  }
  if (attr(n, "num_outputs")) fail(n, "gives both split sizes and num_outputs (one or the other)");
  if (sizes.size() != static_cast<std::size_t>(n.output_size()))
    fail(n, "split " + shape_str(sizes) + " has " + std::to_string(sizes.size()) + " sizes for " +
                std::to_string(n.output_size()) + " outputs");
  std::int64_t total = 0;
  for (auto size : sizes) {
    if (size <= 0) fail(n, "split " + shape_str(sizes) + ": every part must be non-empty");
    if (size > std::numeric_limits<std::int64_t>::max() - total)
      fail(n, "split " + shape_str(sizes) + ": the sizes add up to more than 2^63");
    total += size;
  }
  // One Slice per output, its starts, ends and axes constants (folded into its attributes by
  // shape inference, then dropped by constant folding). The sizes' sum is checked against the
  // axis once the shapes are known (build).
  const NodeId x = value(n.input(0), "node '" + label(n) + "'");
  std::int64_t start = 0;
  for (int i = 0; i < n.output_size(); ++i) {
    const std::int64_t end = start + sizes[static_cast<std::size_t>(i)];
    if (!n.output(i).empty()) {
      const std::string name = label(n) + "_" + std::to_string(i);
      const std::vector<NodeId> ins{x, int_constant(name + "_start", start),
                                    int_constant(name + "_end", end),
                                    int_constant(name + "_axis", axis)};
      values_[n.output(i)] =
          graph_.add_node(Node{graph_.unique_name(name), OpKind::Slice, {}, {}}, ins);
    }
    start = end;
  }
  splits_.push_back(Split{label(n), x, axis, total});
}

void Importer::import_einsum(const onnx::NodeProto& n) {
  // A batched product spelled as an Einsum (MaxViT's attention: "BGHID,BGHJD->BGHIJ"): labels in
  // both operands and the output are batch axes, one label in both operands only is summed, one
  // in each operand and the output is its free axis. Each operand is transposed (if it must be)
  // to [batch..., free, summed] and [batch..., summed, free], the output's batch order, for a
  // MatMul, whose output is then [batch..., free A, free B], the equation's order; anything
  // else is refused.
  const auto* eq = attr(n, "equation");
  if (!eq) fail(n, "has no equation");
  std::string e;
  for (char c : eq->s())
    if (c != ' ') e += c;
  const std::size_t arrow = e.find("->"), comma = e.find(',');
  auto refuse = [&](const std::string& why) {
    fail(n, "equation '" + eq->s() + "': " + why +
                " (only a batched product is supported: batch labels in both operands and the "
                "output, one summed label, one free label in each operand, the output in the "
                "order batch, first free, second free)");
  };
  if (n.input_size() != 2 || arrow == std::string::npos || comma == std::string::npos ||
      comma > arrow)
    refuse("not two operands and an explicit output");
  const std::string ta = e.substr(0, comma), tb = e.substr(comma + 1, arrow - comma - 1),
                    out = e.substr(arrow + 2);
  for (const std::string* t : {&ta, &tb, &out})
    for (std::size_t i = 0; i < t->size(); ++i)
      if (!std::isalpha(static_cast<unsigned char>((*t)[i])) ||
          t->find((*t)[i], i + 1) != std::string::npos)
        refuse("a label that is not a letter, an ellipsis or a repeated label");
  std::string batch, sum, free_a, free_b;
  auto has = [](const std::string& t, char c) { return t.find(c) != std::string::npos; };
  for (char c : ta) {
    if (!has(tb, c) && !has(out, c))
      refuse("label '" + std::string(1, c) + "' summed in one operand");
    (has(tb, c) ? (has(out, c) ? batch : sum) : free_a) += c;
  }
  for (char c : tb) {
    if (!has(ta, c) && !has(out, c))
      refuse("label '" + std::string(1, c) + "' summed in one operand");
    if (!has(ta, c)) free_b += c;
  }
  for (char c : out)
    if (!has(ta, c) && !has(tb, c))
      refuse("output label '" + std::string(1, c) + "' in no operand");
  std::string batch_in_out;
  for (char c : out)
    if (batch.find(c) != std::string::npos) batch_in_out += c;
  if (sum.size() != 1 || free_a.size() != 1 || free_b.size() != 1 ||
      tb.size() != batch.size() + 2 || ta.size() != batch.size() + 2 ||
      out != batch_in_out + free_a + free_b)
    refuse("not of that form");
  // An operand has an axis per label (MatMul would take a 2-D or broadcast a 4-D operand), and
  // a label one size: a batch label of 1 in one operand broadcasts, as Einsum's does; a summed
  // one is refused (it sums the other operand alone: no MatMul). Unknown shapes fail in build()'s
  // inference.
  const std::optional<Shape> sa = known_shape(n.input(0)), sb = known_shape(n.input(1));
  int operand = 1;
  for (const auto& [s, t] : {std::pair{&sa, &ta}, std::pair{&sb, &tb}}) {
    if (*s && (*s)->size() != t->size())
      fail(n, "equation '" + eq->s() + "': operand " + std::to_string(operand) + " has " +
                  std::to_string(t->size()) + " labels, '" + *t + "', for a tensor of shape " +
                  shape_str(**s));
    ++operand;
  }
  if (sa && sb)
    for (char c : batch + sum) {
      const std::int64_t da = (*sa)[ta.find(c)], db = (*sb)[tb.find(c)];
      if (da != db && (c == sum[0] || (da != 1 && db != 1)))
        fail(n, "equation '" + eq->s() + "': label '" + std::string(1, c) + "' is " +
                    std::to_string(da) + " in operand 1 and " + std::to_string(db) +
                    " in operand 2" +
                    (da == 1 || db == 1 ? " (a summed label broadcast is not supported)" : ""));
    }
  // The operands' axes in MatMul's order, as Transposes of what they are.
  const std::string base = label(n);
  auto arranged = [&](int input, const std::string& labels, const std::string& want) {
    const NodeId x = value(n.input(input), "node '" + base + "'");
    if (labels == want) return x;
    OpAttrs t;
    for (char c : want) t.perm.push_back(static_cast<std::int64_t>(labels.find(c)));
    return graph_.add_node(Node{graph_.unique_name(base + (input == 0 ? ".a" : ".b")),
                                OpKind::Transpose, t, {}},
                           {x});
  };
  const NodeId a = arranged(0, ta, batch_in_out + free_a + sum);
  const NodeId b = arranged(1, tb, batch_in_out + sum + free_b);
  values_[n.output(0)] =
      graph_.add_node(Node{graph_.unique_name(base), OpKind::MatMul, {}, {}}, {a, b});
}

void Importer::import_expand(const onnx::NodeProto& n) {
  // A weight or a tensor of run time broadcast to a bigger shape (a ViT's class token over the
  // batch) is the broadcast Add of a zero tensor of that shape: a layer the optimizer splits as
  // any broadcast Add, whose gradient sums over the copies for the weight. To its own shape it
  // stays an Expand, which the identity pass removes; so does a compile-time tensor of known
  // values (shape arithmetic, bounded there) and a target that does not broadcast, for shape
  // inference to report.
  const ConstInfo* target = constant(n, 1);
  const ConstInfo* x_value = constant(n, 0);
  // A weight's values (inline up to kMaxInlineElements, as exported with them) are not read.
  const bool computed = x_value && foldable(*x_value);
  const std::optional<Shape> s = known_shape(n.input(0));
  std::optional<Shape> out;
  if (target && s && !computed && !target->ints.empty() &&
      std::all_of(target->ints.begin(), target->ints.end(), [](std::int64_t d) { return d > 0; })) {
    try {
      out = shape_rules::broadcast(*s, target->ints);
    } catch (const InputError&) {
    }
  }
  if (!out || *out == *s) {
    emit(n, OpKind::Expand, {}, {0, 1});
    return;
  }
  const std::string base = label(n);
  const NodeId x = value(n.input(0), "node '" + base + "'");
  OpAttrs zeros;
  zeros.shape = *out;
  const Node& xn = graph_.node(x);  // a weight's node is not inferred yet
  zeros.elem_bytes = xn.kind == OpKind::Constant ? xn.attrs.elem_bytes : xn.output.elem_bytes;
  const NodeId z =
      graph_.add_node(Node{graph_.unique_name(base + ".zeros"), OpKind::Constant, zeros, {}});
  values_[n.output(0)] =
      graph_.add_node(Node{graph_.unique_name(base), OpKind::Add, {}, {}}, {x, z});
}

void Importer::import_coerced_softmax(const onnx::NodeProto& n, const OpAttrs& a) {
  // Before opset 13 a Softmax normalises over the axes from `axis` on together (the input seen
  // as 2-D, [axes before, axes from it]). Over the last axis alone that is today's Softmax;
  // otherwise it is one: a Reshape to 2-D, the Softmax over its second axis, a Reshape back.
  const std::optional<Shape> s = known_shape(n.input(0));
  const auto rank = static_cast<std::int64_t>(s ? s->size() : 0);
  const std::int64_t axis = a.axis < 0 ? a.axis + rank : a.axis;
  if (!s || axis >= rank - 1) {
    emit(n, OpKind::Softmax, a, {0});
    return;
  }
  if (axis < 0)
    fail(n, "axis " + std::to_string(a.axis) + " is out of range for rank " + std::to_string(rank));
  std::int64_t outer = 1, inner = 1;
  for (std::int64_t k = 0; k < rank; ++k)
    (k < axis ? outer : inner) *= (*s)[static_cast<std::size_t>(k)];
  const std::string base = label(n);
  OpAttrs flat, back, softmax = a;
  flat.shape = {outer, inner};
  back.shape = *s;
  softmax.axis = 1;
  const NodeId x = value(n.input(0), "node '" + base + "'");
  // The last node keeps the name, as a Gather imported as a Slice and a Reshape does.
  const NodeId f =
      graph_.add_node(Node{graph_.unique_name(base + ".2d"), OpKind::Reshape, flat, {}}, {x});
  const NodeId y = graph_.add_node(
      Node{graph_.unique_name(base + ".softmax"), OpKind::Softmax, softmax, {}}, {f});
  values_[n.output(0)] =
      graph_.add_node(Node{graph_.unique_name(base), OpKind::Reshape, back, {}}, {y});
}

void Importer::import_equal_split(const onnx::NodeProto& n, std::int64_t axis) {
  const std::int64_t parts = attr_int(n, "num_outputs", n.output_size());
  if (parts != n.output_size())
    fail(n, "num_outputs " + std::to_string(parts) + " for " + std::to_string(n.output_size()) +
                " outputs");
  // Part i is [i·c, (i + 1)·c) of the axis, c = ⌈length / parts⌉ (the last one clamped by its
  // Slice), the length read from the input's shape once it is inferred.
  const NodeId x = value(n.input(0), "node '" + label(n) + "'");
  const std::string base = label(n);
  auto add = [&](const std::string& name, OpKind kind, OpAttrs a, std::vector<NodeId> ins) {
    return graph_.add_node(Node{graph_.unique_name(base + "_" + name), kind, std::move(a), {}},
                           ins);
  };
  auto scalar = [&](const std::string& name, std::int64_t v) {
    return int_constant(base + "_" + name, v);
  };
  OpAttrs first;
  first.axis = 0;
  const NodeId length = add("length", OpKind::Gather, first,
                            {add("shape", OpKind::Shape, {}, {x}), scalar("axis_index", axis)});
  const NodeId chunk = add("chunk", OpKind::Div, {},
                           {add("rounded", OpKind::Add, {}, {length, scalar("round", parts - 1)}),
                            scalar("parts", parts)});
  const NodeId axes = scalar("axis", axis);
  for (int i = 0; i < n.output_size(); ++i) {
    if (n.output(i).empty()) continue;
    const std::string name = std::to_string(i);
    const NodeId start = add(name + "_start", OpKind::Mul, {}, {chunk, scalar(name + "_i", i)});
    const NodeId end = add(name + "_end", OpKind::Mul, {}, {chunk, scalar(name + "_i1", i + 1)});
    values_[n.output(i)] = add(name, OpKind::Slice, {}, {x, start, end, axes});
  }
  splits_.push_back(Split{base, x, axis, 0, parts, attr(n, "num_outputs") != nullptr});
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
    if (const ConstInfo* b = constant(n, 2); b && b->dims != Shape{a.out_channels})
      fail(n, "bias " + shape_str(b->dims) + " does not match the weight's " +
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
    const ConstInfo& w = need_constant(n, 1, "weight");
    if (w.dims.size() != 2) fail(n, "weight must be 2-D, got " + shape_str(w.dims));
    const bool trans_b = attr_flag(n, "transB", false);
    a.out_channels = trans_b ? w.dims[0] : w.dims[1];
    a.in_channels = trans_b ? w.dims[1] : w.dims[0];
    a.bias = op == "Gemm" && n.input_size() > 2 && !n.input(2).empty();
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
    if (n.output_size() > 1) fail(n, "training-mode outputs are not supported");
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
    a.elem_bytes = elem_bytes_of(static_cast<int>(to));
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
