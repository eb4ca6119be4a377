// SPDX-License-Identifier: MIT
// ONNX import: operators imported as several of nocflow's nodes. Split as one Slice per output
// (of its sizes or of equal parts), Einsum that is a batched product as Transposes and a MatMul,
// Expand of a weight or a tensor of run time as a broadcast Add of zeros, and Softmax before
// opset 13 as a Reshape to 2-D around it.
#include <algorithm>
#include <cctype>
#include <optional>
#include <string>

#include "noc/base/error.h"
#include "optimizer/frontend/onnx_importer.h"
#include "optimizer/graph/shape_rules.h"

namespace nocflow::optimizer::onnx_import_detail {

NodeId Importer::int_constant(const std::string& name, std::int64_t v) {
  OpAttrs c;
  c.shape = {1};
  c.elem_bytes = 8;
  c.int_data = {v};
  return graph_.add_node(Node{graph_.unique_name(name), OpKind::Constant, c, {}});
}

std::string Importer::split_part_name(const onnx::NodeProto& n, int i) {
  return n.name().empty() ? n.output(i) : n.name() + "_" + std::to_string(i);
}

void Importer::import_split(const onnx::NodeProto& n) {
  const std::int64_t axis = attr_int(n, "axis", 0);
  std::vector<std::int64_t> sizes = attr_ints(n, "split");
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
      const std::string name = split_part_name(n, i);
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
  zeros.zeros = true;  // they give the Add its shape: not data a layer holds (is_fixed_data)
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
    values_[n.output(i)] =
        graph_.add_node(Node{graph_.unique_name(split_part_name(n, i)), OpKind::Slice, {}, {}},
                        {x, start, end, axes});
  }
  splits_.push_back(Split{base, x, axis, 0, parts, attr(n, "num_outputs") != nullptr});
}

}  // namespace nocflow::optimizer::onnx_import_detail
