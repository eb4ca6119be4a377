// SPDX-License-Identifier: MIT
// ONNX import: the model's inputs, constants and values; the operators are in
// onnx_import_ops.cpp.
#include "optimizer/frontend/onnx_import.h"

#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <stdexcept>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "noc/base/text_input.h"
#include "optimizer/frontend/onnx_importer.h"
#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer {
namespace onnx_import_detail {
namespace {

/// The model's graph name, or the file's stem where it has none or the exporter's default
/// (PyTorch names every export torch_jit or main_graph).
std::string network_name(const std::string& path, const std::string& graph_name) {
  for (const char* generic : {"", "torch_jit", "torch-jit-export", "main_graph"})
    if (graph_name == generic) {
      const std::string stem = utf8_replaced(std::filesystem::path(path).stem().string());
      return stem.empty() ? "onnx" : stem;
    }
  return utf8_replaced(graph_name);  // a label: JSON outputs need UTF-8
}

}  // namespace

int elem_bytes_of(int dtype) {
  using T = onnx::TensorProto;
  switch (dtype) {
    case T::COMPLEX128:
      return 16;
    case T::DOUBLE:
    case T::INT64:
    case T::UINT64:
    case T::COMPLEX64:
      return 8;
    case T::FLOAT:
    case T::INT32:
    case T::UINT32:
      return 4;
    case T::FLOAT16:
    case T::BFLOAT16:
    case T::INT16:
    case T::UINT16:
      return 2;
    case T::UNDEFINED:
    case T::STRING:
      return 0;
    default:
      return T::DataType_IsValid(dtype) ? 1 : 0;  // 8-bit types, bool
  }
}

ConstInfo const_from(const onnx::TensorProto& t, bool initializer) {
  ConstInfo c;
  c.dims.assign(t.dims().begin(), t.dims().end());
  c.dtype = t.data_type();
  c.from_initializer = initializer;
  std::int64_t n = 1;
  for (auto d : c.dims) n *= d;
  if (n > kMaxInlineElements || t.data_location() == onnx::TensorProto::EXTERNAL) return c;
  using T = onnx::TensorProto;
  const std::string& raw = t.raw_data();
  auto raw_as = [&](auto zero) {
    using V = decltype(zero);
    std::vector<V> v(raw.size() / sizeof(V));
    if (!v.empty()) std::memcpy(v.data(), raw.data(), v.size() * sizeof(V));
    return v;
  };
  if (c.dtype == T::INT64) {
    if (!raw.empty())
      for (auto x : raw_as(std::int64_t{})) c.ints.push_back(x);
    else
      c.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (c.dtype == T::INT32) {
    if (!raw.empty())
      for (auto x : raw_as(std::int32_t{})) c.ints.push_back(x);
    else
      c.ints.assign(t.int32_data().begin(), t.int32_data().end());
  } else if (c.dtype == T::FLOAT) {
    if (!raw.empty())
      for (auto x : raw_as(float{})) c.floats.push_back(x);
    else
      c.floats.assign(t.float_data().begin(), t.float_data().end());
  } else if (c.dtype == T::DOUBLE) {
    if (!raw.empty())
      for (auto x : raw_as(double{})) c.floats.push_back(x);
    else
      c.floats.assign(t.double_data().begin(), t.double_data().end());
  } else if (c.dtype == T::BOOL) {  // one byte each, or int32_data
    if (!raw.empty())
      for (auto x : raw) c.ints.push_back(x != 0);
    else
      for (auto x : t.int32_data()) c.ints.push_back(x != 0);
  }
  if (static_cast<std::int64_t>(c.ints.size() + c.floats.size()) != n) {
    c.ints.clear();
    c.floats.clear();
  }
  return c;
}

bool is_floating(int dtype) {
  using T = onnx::TensorProto;
  return dtype == T::FLOAT || dtype == T::DOUBLE || dtype == T::FLOAT16 || dtype == T::BFLOAT16;
}

bool foldable(const ConstInfo& c) {
  if (c.from_initializer && is_floating(c.dtype)) return false;  // a weight, values unread
  std::int64_t n = 1;
  for (auto d : c.dims) {  // more than kMaxFoldElements are never held
    if (d < 0 || (d != 0 && n > kMaxFoldElements / d)) return false;
    n *= d;
  }
  const std::size_t held = is_floating(c.dtype) ? c.floats.size() : c.ints.size();
  return static_cast<std::int64_t>(held) == n;
}

Importer::Importer(std::string path, onnx::ModelProto& model, int float_bytes)
    : path_(std::move(path)),
      model_(model),
      graph_(network_name(path_, model.graph().name())),
      float_bytes_(float_bytes) {
  for (const auto& op : model_.opset_import())
    if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
  if (opset_ > kNewestOnnxOpset)
    graph_.add_note(path_ + " imports opset " + std::to_string(opset_) +
                    " of the default ONNX domain, newer than nocflow knows: its operators are "
                    "read with the semantics of opset " +
                    std::to_string(kNewestOnnxOpset));
}

int Importer::elem_bytes(int dtype) const {
  return float_bytes_ > 0 && is_floating(dtype) ? float_bytes_ : elem_bytes_of(dtype);
}

Graph Importer::build() {
  const auto& g = model_.graph();
  for (const auto& init : g.initializer()) consts_[init.name()] = const_from(init, true);
  for (const auto& in : g.input())
    if (!consts_.count(in.name())) add_input(in);
  for (const auto& n : g.node()) {
    import_node(n);
    check_schema(n);
  }
  std::vector<NodeId> outputs;
  std::vector<std::string> initializer_outputs;  // the network computes none of them
  for (const auto& out : g.output())
    if (consts_.count(out.name()) && !produced_.count(out.name()))
      initializer_outputs.push_back(out.name());
    else
      outputs.push_back(value(out.name(), "graph output"));
  if (outputs.empty())
    throw InputError(
        path_ + ": the graph has no outputs" +
        (initializer_outputs.empty()
             ? ""
             : " but initializers (" + join(initializer_outputs) + "), which no node computes"));
  if (!initializer_outputs.empty())
    graph_.add_note(path_ + ": graph output" + (initializer_outputs.size() > 1 ? "s " : " ") +
                    join(initializer_outputs) + " left out: " +
                    (initializer_outputs.size() > 1 ? "initializers" : "an initializer") +
                    ", which no node computes (the layers' results are the outputs)");
  graph_.set_outputs(outputs);
  // The sizes of a Split must add up to its axis: its Slices would clamp a long split and
  // leave a short one uncut. Checked first, so that a Slice's own error does not hide it.
  auto check_splits = [&] {
    for (const Split& split : splits_) {
      const Shape& in = graph_.node(split.input).output.shape;
      if (in.empty()) continue;  // not inferred: shape inference failed before it
      const auto rank = static_cast<std::int64_t>(in.size());
      const std::int64_t axis = split.axis < 0 ? split.axis + rank : split.axis;
      if (axis < 0 || axis >= rank)
        throw InputError(path_ + ": node '" + split.node + "' (Split): axis " +
                         std::to_string(split.axis) + " is out of range for " + shape_str(in));
      if (split.parts) {  // parts of ⌈length / parts⌉
        const std::int64_t length = in[static_cast<std::size_t>(axis)];
        const std::int64_t chunk = (length + split.parts - 1) / split.parts;
        if (length % split.parts == 0 || (split.uneven && chunk * (split.parts - 1) < length))
          continue;
        throw InputError(path_ + ": node '" + split.node +
                         "' (Split): " + std::to_string(split.parts) + " equal parts of axis " +
                         std::to_string(split.axis) + " of " + shape_str(in) +
                         (split.uneven ? " leave the last one empty"
                                       : ": its length must be a multiple of their number "
                                         "(opset 18's num_outputs allows a smaller last part)"));
      }
      if (in[static_cast<std::size_t>(axis)] != split.total)
        throw InputError(path_ + ": node '" + split.node + "' (Split): sizes adding up to " +
                         std::to_string(split.total) + " for axis " + std::to_string(split.axis) +
                         " of " + shape_str(in));
    }
  };
  try {
    infer_shapes(graph_);
  } catch (const InputError& e) {
    check_splits();
    throw InputError(path_ + ": " + e.what());
  }
  check_splits();
  return std::move(graph_);
}

void Importer::fail(const onnx::NodeProto& n, const std::string& what) const {
  throw InputError(path_ + ": node '" + label(n) + "' (" + n.op_type() + "): " + what);
}

std::string Importer::label(const onnx::NodeProto& n) {
  if (!n.name().empty()) return n.name();
  for (const auto& out : n.output())
    if (!out.empty()) return out;
  return n.op_type();
}

void Importer::add_input(const onnx::ValueInfoProto& in) {
  OpAttrs a;
  const auto& tt = in.type().tensor_type();
  a.elem_bytes = elem_bytes(tt.elem_type());
  if (a.elem_bytes == 0)
    throw InputError(path_ + ": input '" + in.name() + "' has data type " +
                     std::to_string(tt.elem_type()) + ", which has no fixed element size");
  if (!tt.has_shape())
    throw InputError(path_ + ": input '" + in.name() +
                     "' has no shape; export it with a static shape");
  for (const auto& d : tt.shape().dim()) {
    const std::string where =
        path_ + ": input '" + in.name() + "' dimension " + std::to_string(a.shape.size());
    if (!d.has_dim_value())
      throw InputError(
          where + " is dynamic (" +
          (d.dim_param().empty() ? "unnamed" : "'" + d.dim_param() + "'") +
          "); export it with a static shape" +
          (a.shape.empty() ? " or give the batch (--batch N; in a sweep, a batch axis)" : ""));
    if (d.dim_value() <= 0)
      throw InputError(where + " is " + std::to_string(d.dim_value()) + ", not positive");
    a.shape.push_back(d.dim_value());
  }
  Node node{graph_.unique_name(in.name()), OpKind::Input, a, {}};
  values_[in.name()] = graph_.add_node(std::move(node));
}

NodeId Importer::value(const std::string& name, const std::string& user) {
  if (auto it = values_.find(name); it != values_.end()) return it->second;
  if (auto pad = pads_.find(name); pad != pads_.end())
    throw InputError(path_ + ": " + user + " reads the output of Pad '" + pad->second.node +
                     "', which is supported only before a Conv, MaxPool or AveragePool "
                     "(folded into its pads)");
  if (auto p = produced_.find(name); p != produced_.end() && !consts_.count(name))
    throw InputError(path_ + ": tensor '" + name + "' used by " + user + " is an output of node '" +
                     p->second + "' that nocflow does not import");
  auto c = consts_.find(name);
  if (c == consts_.end()) {
    // ONNX lists nodes in topological order; a tensor produced by a later node means a
    // cycle (or an unsorted graph, which ONNX forbids).
    for (const auto& n : model_.graph().node())
      for (const auto& out : n.output())
        if (out == name)
          throw InputError(path_ + ": tensor '" + name + "' used by " + user +
                           " is produced only later, by node '" + label(n) +
                           "': the graph has a cycle (or its nodes are not in topological order)");
    throw InputError(path_ + ": tensor '" + name + "' used by " + user + " is never produced");
  }
  ConstInfo& info = c->second;
  if (!info.node) {
    OpAttrs a;
    a.shape = info.dims;
    a.elem_bytes = elem_bytes(info.dtype);
    if (a.elem_bytes == 0)
      throw InputError(path_ + ": tensor '" + name + "' has data type " +
                       std::to_string(info.dtype) + ", which has no fixed element size");
    // Values computed while importing may be many more; the graph keeps them only if small.
    if (static_cast<std::int64_t>(info.ints.size() + info.floats.size()) <= kMaxInlineElements) {
      a.int_data = info.ints;
      a.float_data = info.floats;
    }
    // Floating-point initializers are learned parameters; Constant nodes are not.
    a.trainable =
        info.from_initializer && a.int_data.empty() &&
        (info.dtype == onnx::TensorProto::FLOAT || info.dtype == onnx::TensorProto::FLOAT16 ||
         info.dtype == onnx::TensorProto::DOUBLE || info.dtype == onnx::TensorProto::BFLOAT16);
    info.node = graph_.add_node(Node{graph_.unique_name(name), OpKind::Constant, a, {}});
  }
  return *info.node;
}

std::optional<Shape> Importer::known_shape(const std::string& name) {
  if (auto c = consts_.find(name); c != consts_.end()) return c->second.dims;
  if (auto pad = pads_.find(name); pad != pads_.end()) {  // its source with H and W padded
    std::optional<Shape> s = known_shape(pad->second.source);
    if (s && s->size() == 4) {
      const auto& p = pad->second.pads;
      (*s)[2] += p[0] + p[2];
      (*s)[3] += p[1] + p[3];
    }
    return s && s->size() == 4 ? s : std::nullopt;
  }
  const auto v = values_.find(name);
  if (v == values_.end()) return std::nullopt;
  // The importer adds a node after its inputs, so ids are a topological order. A rule that
  // fails leaves the node (and what reads it) unknown; build()'s inference reports it.
  for (; inferred_ <= v->second; ++inferred_) {
    bool ready = true;
    for (NodeId in : graph_.inputs(inferred_)) ready = ready && known_[in];
    try {
      if (ready) infer_node(graph_, inferred_);
    } catch (const InputError&) {
      ready = false;
    }
    known_.push_back(ready);
  }
  if (!known_[v->second]) return std::nullopt;
  return graph_.node(v->second).output.shape;
}

const ConstInfo* Importer::constant(const onnx::NodeProto& n, int index) const {
  if (index >= n.input_size() || n.input(index).empty()) return nullptr;
  auto it = consts_.find(n.input(index));
  return it == consts_.end() ? nullptr : &it->second;
}

const ConstInfo& Importer::need_constant(const onnx::NodeProto& n, int index,
                                         const char* what) const {
  const ConstInfo* c = constant(n, index);
  if (!c)
    fail(n, std::string(what) + " (input " + std::to_string(index) +
                ") must be an initializer or constant");
  return *c;
}

void Importer::emit(const onnx::NodeProto& n, OpKind kind, const OpAttrs& a,
                    const std::vector<int>& operand_indices) {
  std::vector<NodeId> ins;
  for (int i : operand_indices) {
    if (i >= n.input_size() || n.input(i).empty())
      fail(n, "input " + std::to_string(i) + " is missing");
    std::string name = n.input(i);
    // A window operator reads past the Pad it took into its pads (fold_pad); value() refuses
    // a Pad's output to any other reader.
    const bool window = kind == OpKind::Conv || kind == OpKind::MaxPool || kind == OpKind::AvgPool;
    if (auto pad = pads_.find(name); pad != pads_.end() && i == 0 && window)
      name = pad->second.source;
    ins.push_back(value(name, "node '" + label(n) + "'"));
  }
  Node node{graph_.unique_name(label(n)), kind, a, {}};
  values_[n.output(0)] = graph_.add_node(std::move(node), ins);
}

void Importer::alias(const onnx::NodeProto& n, const ConstInfo& c) {
  folded_elements_ += static_cast<std::int64_t>(c.ints.size() + c.floats.size());
  if (folded_elements_ > kMaxFoldedTotal)
    fail(n, "the compile-time tensors computed while importing exceed " +
                std::to_string(kMaxFoldedTotal) + " elements in all");
  consts_[n.output(0)] = ConstInfo{c.dims, c.dtype, c.from_initializer, c.ints, c.floats, c.node};
}

namespace {

/// A ceil-mode pool whose last window would start in the end padding: PyTorch and nocflow drop
/// that window, ONNX's shape inference (onnx 1.12) keeps it.
bool drops_ceil_window(const Graph& graph, NodeId id) {
  const Node& n = graph.node(id);
  if ((n.kind != OpKind::MaxPool && n.kind != OpKind::AvgPool) || !n.attrs.ceil_mode) return false;
  const Shape& in = graph.node(graph.input(id, 0)).output.shape;
  const OpAttrs& a = n.attrs;
  for (int axis = 0; axis < 2; ++axis) {
    const std::int64_t room = in[2 + axis] + a.pads[axis] + a.pads[axis + 2] - a.kernel[axis];
    const std::int64_t kept = (room + a.stride[axis] - 1) / a.stride[axis] + 1;
    if (n.output.shape[2 + axis] != kept) return true;
  }
  return false;
}

}  // namespace

void Importer::check_against_onnx(const Graph& graph) const {
  // Tensors from such a pool on differ by design: not compared.
  std::set<NodeId> diverged;
  for (NodeId id : graph.topological_order()) {
    const std::vector<NodeId> ins = graph.inputs(id);
    if (drops_ceil_window(graph, id) ||
        std::any_of(ins.begin(), ins.end(), [&](NodeId i) { return diverged.count(i) > 0; }))
      diverged.insert(id);
  }
  auto check = [&](const onnx::ValueInfoProto& vi) {
    auto it = values_.find(vi.name());
    if (it == values_.end() || !graph.contains(it->second) || diverged.count(it->second)) return;
    const auto& shape = vi.type().tensor_type().shape();
    Shape onnx_shape;
    for (const auto& d : shape.dim()) {
      if (!d.has_dim_value()) return;
      onnx_shape.push_back(d.dim_value());
    }
    const Node& n = graph.node(it->second);
    // Most often the model's: a stale value_info, or an attribute its opset does not read.
    if (vi.type().tensor_type().has_shape() && n.output.shape != onnx_shape)
      throw InputError(path_ + ": tensor '" + vi.name() + "': nocflow infers " +
                       shape_str(n.output.shape) + ", ONNX shape inference (which keeps a " +
                       "value_info the model gives) " + shape_str(onnx_shape) +
                       ": re-export the model or rerun onnx.shape_inference on it (if it is "
                       "valid as it is, nocflow misreads it: please report it)");
  };
  for (const auto& vi : model_.graph().value_info()) check(vi);
  for (const auto& vi : model_.graph().output()) check(vi);
}

}  // namespace onnx_import_detail

namespace {

/// A Reshape whose constant shape starts with a number where its input had the batch given for
/// a dynamic axis (`x.view(1, -1, 16)` exported with a dynamic batch): the batch is folded into
/// the other dimensions from there on, which a network YAML refuses; a model may mean it (a
/// [B*T, D] before a Gemm), so it is a note.
void note_batch_folding_reshapes(Graph& graph, std::int64_t batch) {
  for (const NodeId id : graph.topological_order()) {
    const Node& n = graph.node(id);
    if (n.kind != OpKind::Reshape || n.attrs.shape.empty() || n.attrs.shape[0] <= 0) continue;
    const Shape& in = graph.node(graph.input(id, 0)).output.shape;
    if (in.empty() || in[0] != batch || n.output.shape.empty() || n.output.shape[0] == batch)
      continue;
    graph.add_note("node '" + n.name + "' (Reshape) gives " + shape_str(n.output.shape) + " from " +
                   shape_str(in) + ": its shape " + shape_str(n.attrs.shape) +
                   " starts with a number where the batch (" + std::to_string(batch) +
                   ") was, so from there on the batch is folded into the other dimensions (a "
                   "view(" +
                   std::to_string(n.attrs.shape[0]) +
                   ", ...) exported with a dynamic batch?); BATCH cannot split it");
  }
}

}  // namespace

Graph import_onnx(const std::string& path, std::int64_t batch, int float_bytes) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in) || !model.has_graph())
    throw InputError(path + ": not a readable ONNX model");
  // A batch exported as a dynamic axis takes the one asked for (ONNX's inference sees it too).
  bool dynamic_batch = false;
  if (batch > 0)
    for (auto& input : *model.mutable_graph()->mutable_input())
      if (auto* type = input.mutable_type()->mutable_tensor_type(); type->has_shape()) {
        auto* shape = type->mutable_shape();
        if (shape->dim_size() > 0 && !shape->dim(0).has_dim_value()) {
          shape->mutable_dim(0)->set_dim_value(batch);
          dynamic_batch = true;
        }
      }
  // nocflow's import and shape inference run first: they check every operator they accept,
  // which ONNX's inference assumes (its Conv rule divides by the strides and indexes the
  // input's shape by the weight's rank unchecked, in onnx 1.12 at least).
  onnx_import_detail::Importer importer(path, model, float_bytes);
  Graph graph = [&] {
    try {
      return importer.build();
    } catch (const InputError& e) {  // the graph's own (a name that is not UTF-8) lack the file
      const std::string what = e.what();
      if (what.rfind(path, 0) == 0) throw;
      throw InputError(path + ": " + what);
    }
  }();
  if (dynamic_batch && batch > 1) note_batch_folding_reshapes(graph, batch);
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    throw InputError(path + ": ONNX shape inference failed: " + e.what());
  }
  importer.check_against_onnx(graph);
  return graph;
}

}  // namespace nocflow::optimizer
