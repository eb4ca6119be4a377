// SPDX-License-Identifier: MIT
#include "optimizer/frontend/onnx_import.h"

#include <onnx/onnx_pb.h>
#include <onnx/shape_inference/implementation.h>

#include <array>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <unordered_map>

#include "noc/base/error.h"
#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer {
namespace {

constexpr std::int64_t kMaxInlineElements = 4096;  // larger constants are never read

/// Bytes per element of an ONNX data type; 0 for one without a fixed size (UNDEFINED, STRING)
/// or unknown to this ONNX version.
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
    case T::FLOAT: case T::INT32: case T::UINT32: return 4;
    case T::FLOAT16: case T::BFLOAT16: case T::INT16: case T::UINT16: return 2;
    case T::UNDEFINED:
    case T::STRING:
      return 0;
    default:
      return T::DataType_IsValid(dtype) ? 1 : 0;  // 8-bit types, bool
  }
}

/// A compile-time tensor: an initializer or a Constant node's value. Contents are read only
/// for small tensors stored inline.
struct ConstInfo {
  Shape dims;
  int dtype = onnx::TensorProto::FLOAT;
  bool from_initializer = false;
  std::vector<std::int64_t> ints;
  std::vector<double> floats;
  std::optional<NodeId> node;  ///< materialised Constant node, once an operator needs one
};

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
    if (!raw.empty()) for (auto x : raw_as(std::int64_t{})) c.ints.push_back(x);
    else c.ints.assign(t.int64_data().begin(), t.int64_data().end());
  } else if (c.dtype == T::INT32) {
    if (!raw.empty()) for (auto x : raw_as(std::int32_t{})) c.ints.push_back(x);
    else c.ints.assign(t.int32_data().begin(), t.int32_data().end());
  } else if (c.dtype == T::FLOAT) {
    if (!raw.empty()) for (auto x : raw_as(float{})) c.floats.push_back(x);
    else c.floats.assign(t.float_data().begin(), t.float_data().end());
  } else if (c.dtype == T::DOUBLE) {
    if (!raw.empty()) for (auto x : raw_as(double{})) c.floats.push_back(x);
    else c.floats.assign(t.double_data().begin(), t.double_data().end());
  }
  if (static_cast<std::int64_t>(c.ints.size() + c.floats.size()) != n) {
    c.ints.clear();
    c.floats.clear();
  }
  return c;
}

/// The model's graph name, or the file's stem where it has none or the exporter's default
/// (PyTorch names every export torch_jit or main_graph).
std::string network_name(const std::string& path, const std::string& graph_name) {
  for (const char* generic : {"", "torch_jit", "torch-jit-export", "main_graph"})
    if (graph_name == generic) {
      const std::string stem = std::filesystem::path(path).stem().string();
      return stem.empty() ? "onnx" : stem;
    }
  return graph_name;
}

class Importer {
 public:
  Importer(std::string path, onnx::ModelProto& model)
      : path_(std::move(path)), model_(model), graph_(network_name(path_, model.graph().name())) {
    for (const auto& op : model_.opset_import())
      if (op.domain().empty() || op.domain() == "ai.onnx") opset_ = op.version();
  }

  /// The graph, shape-inferred by nocflow's rules (ONNX's own inference is not needed).
  Graph build() {
    const auto& g = model_.graph();
    for (const auto& init : g.initializer()) consts_[init.name()] = const_from(init, true);
    for (const auto& in : g.input())
      if (!consts_.count(in.name())) add_input(in);
    for (const auto& n : g.node()) import_node(n);
    std::vector<NodeId> outputs;
    for (const auto& out : g.output()) outputs.push_back(value(out.name(), "graph output"));
    if (outputs.empty()) throw InputError(path_ + ": the graph has no outputs");
    graph_.set_outputs(outputs);
    try {
      infer_shapes(graph_);
    } catch (const InputError& e) {
      throw InputError(path_ + ": " + e.what());
    }
    return std::move(graph_);
  }

  /// Compares `graph` (what build() returned) with the shapes ONNX inference recorded.
  void check_against_onnx(const Graph& graph) const;

 private:
  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& what) const {
    throw InputError(path_ + ": node '" + label(n) + "' (" + n.op_type() + "): " + what);
  }
  static std::string label(const onnx::NodeProto& n) {
    if (!n.name().empty()) return n.name();
    return n.output_size() ? n.output(0) : n.op_type();
  }

  void add_input(const onnx::ValueInfoProto& in) {
    OpAttrs a;
    const auto& tt = in.type().tensor_type();
    a.elem_bytes = elem_bytes_of(tt.elem_type());
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
        throw InputError(where + " is dynamic ('" + d.dim_param() +
                         "'); export it with a static shape");
      if (d.dim_value() <= 0)
        throw InputError(where + " is " + std::to_string(d.dim_value()) + ", not positive");
      a.shape.push_back(d.dim_value());
    }
    Node node{graph_.unique_name(in.name()), OpKind::Input, a, {}};
    values_[in.name()] = graph_.add_node(std::move(node));
  }

  /// The node producing tensor `name`, materialising a constant as a Constant node.
  NodeId value(const std::string& name, const std::string& user) {
    if (auto it = values_.find(name); it != values_.end()) return it->second;
    if (auto pad = pads_.find(name); pad != pads_.end())
      throw InputError(path_ + ": " + user + " reads the output of Pad '" + pad->second.node +
                       "', which is supported only before a Conv, MaxPool or AveragePool "
                       "(folded into its pads)");
    auto c = consts_.find(name);
    if (c == consts_.end()) {
      // ONNX lists nodes in topological order; a tensor produced by a later node means a
      // cycle (or an unsorted graph, which ONNX forbids).
      for (const auto& n : model_.graph().node())
        for (const auto& out : n.output())
          if (out == name)
            throw InputError(
                path_ + ": tensor '" + name + "' used by " + user +
                " is produced only later, by node '" + label(n) +
                "': the graph has a cycle (or its nodes are not in topological order)");
      throw InputError(path_ + ": tensor '" + name + "' used by " + user + " is never produced");
    }
    ConstInfo& info = c->second;
    if (!info.node) {
      OpAttrs a;
      a.shape = info.dims;
      a.elem_bytes = elem_bytes_of(info.dtype);
      if (a.elem_bytes == 0)
        throw InputError(path_ + ": tensor '" + name + "' has data type " +
                         std::to_string(info.dtype) + ", which has no fixed element size");
      a.int_data = info.ints;
      a.float_data = info.floats;
      // Floating-point initializers are learned parameters; Constant nodes are not.
      a.trainable = info.from_initializer && a.int_data.empty() &&
                    (info.dtype == onnx::TensorProto::FLOAT || info.dtype == onnx::TensorProto::FLOAT16 ||
                     info.dtype == onnx::TensorProto::DOUBLE || info.dtype == onnx::TensorProto::BFLOAT16);
      info.node = graph_.add_node(Node{graph_.unique_name(name), OpKind::Constant, a, {}});
    }
    return *info.node;
  }

  const ConstInfo* constant(const onnx::NodeProto& n, int index) const {
    if (index >= n.input_size() || n.input(index).empty()) return nullptr;
    auto it = consts_.find(n.input(index));
    return it == consts_.end() ? nullptr : &it->second;
  }

  const ConstInfo& need_constant(const onnx::NodeProto& n, int index, const char* what) const {
    const ConstInfo* c = constant(n, index);
    if (!c) fail(n, std::string(what) + " (input " + std::to_string(index) + ") must be an initializer or constant");
    return *c;
  }

  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name) {
    for (const auto& a : n.attribute())
      if (a.name() == name) return &a;
    return nullptr;
  }
  std::int64_t attr_int(const onnx::NodeProto& n, const char* name, std::int64_t def) const {
    const auto* a = attr(n, name);
    if (!a) return def;
    if (a->type() != onnx::AttributeProto::INT) fail(n, std::string("attribute '") + name + "' must be an int");
    return a->i();
  }
  double attr_float(const onnx::NodeProto& n, const char* name, double def) const {
    const auto* a = attr(n, name);
    if (!a) return def;
    if (a->type() != onnx::AttributeProto::FLOAT) fail(n, std::string("attribute '") + name + "' must be a float");
    return a->f();
  }
  std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const char* name) const {
    const auto* a = attr(n, name);
    if (!a) return {};
    if (a->type() != onnx::AttributeProto::INTS) fail(n, std::string("attribute '") + name + "' must be a list of ints");
    return {a->ints().begin(), a->ints().end()};
  }

  /// `name`: absent (empty) or `size` values, each at least `min`.
  std::vector<std::int64_t> window_ints(const onnx::NodeProto& n, const char* name,
                                        std::size_t size, std::int64_t min) const {
    auto v = attr_ints(n, name);
    if (v.empty() && !attr(n, name)) return v;
    if (v.size() != size)
      fail(n, std::string(name) + " " + shape_str(v) + " must have " + std::to_string(size) +
                  " values for a 2-D window");
    for (auto x : v)
      if (x < min)
        fail(n,
             std::string(name) + " " + shape_str(v) + " must be at least " + std::to_string(min));
    return v;
  }

  /// Kernel, stride, pads, dilation of a 2-D window operator, checked here: ONNX's own shape
  /// inference divides by the strides and indexes by these lengths unchecked.
  void window_attrs(const onnx::NodeProto& n, OpAttrs& a, const Shape& kernel) const {
    const auto ap = attr(n, "auto_pad");
    if (ap && ap->s() != "NOTSET" && ap->s() != "VALID")
      fail(n, "auto_pad '" + ap->s() + "' is not supported (export with explicit pads)");
    if (kernel.size() != 2) fail(n, "only 2-D windows are supported, kernel " + shape_str(kernel));
    if (kernel[0] < 1 || kernel[1] < 1)
      fail(n, "kernel " + shape_str(kernel) + " must be at least 1");
    a.kernel = {kernel[0], kernel[1]};
    if (auto s = window_ints(n, "strides", 2, 1); !s.empty()) a.stride = {s[0], s[1]};
    if (auto d = window_ints(n, "dilations", 2, 1); !d.empty()) a.dilation = {d[0], d[1]};
    if (auto p = window_ints(n, "pads", 4, 0); !p.empty()) a.pads = {p[0], p[1], p[2], p[3]};
    a.ceil_mode = attr_int(n, "ceil_mode", 0) != 0;
  }

  /// "W|B": the names of the parameter inputs from `first` on, which CSE compares.
  static std::string weight_names(const onnx::NodeProto& n, int first) {
    std::string out;
    for (int i = first; i < n.input_size(); ++i) out += (i > first ? "|" : "") + n.input(i);
    return out;
  }

  void emit(const onnx::NodeProto& n, OpKind kind, const OpAttrs& a, const std::vector<int>& operand_indices) {
    std::vector<NodeId> ins;
    for (int i : operand_indices) {
      if (i >= n.input_size() || n.input(i).empty())
        fail(n, "input " + std::to_string(i) + " is missing");
      std::string name = n.input(i);
      // A window operator reads past the Pad it took into its pads (fold_pad); value() refuses
      // a Pad's output to any other reader.
      const bool window =
          kind == OpKind::Conv || kind == OpKind::MaxPool || kind == OpKind::AvgPool;
      if (auto pad = pads_.find(name); pad != pads_.end() && i == 0 && window)
        name = pad->second.source;
      ins.push_back(value(name, "node '" + label(n) + "'"));
    }
    Node node{graph_.unique_name(label(n)), kind, a, {}};
    values_[n.output(0)] = graph_.add_node(std::move(node), ins);
  }

  void alias(const onnx::NodeProto& n, const ConstInfo& c) { consts_[n.output(0)] = ConstInfo{c.dims, c.dtype, c.from_initializer, c.ints, c.floats, c.node}; }

  void import_node(const onnx::NodeProto& n);

  /// A constant-mode Pad of H and W by a constant amount: an alias of its input when it pads
  /// nothing, else kept in pads_ for the Conv or pool that reads it (fold_pad).
  void import_pad(const onnx::NodeProto& n) {
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
    if (p.size() != 8)
      fail(n, "pads " + shape_str(p) + ": only 4-D tensors (N, C, H, W) are supported");
    for (auto x : p)
      if (x < 0) fail(n, "pads " + shape_str(p) + ": negative pads (cropping) are not supported");
    if (p[0] || p[1] || p[4] || p[5])
      fail(n, "pads " + shape_str(p) + ": only H and W may be padded");
    if (p[2] == 0 && p[3] == 0 && p[6] == 0 && p[7] == 0) {
      if (const ConstInfo* c = constant(n, 0))
        alias(n, *c);
      else
        values_[n.output(0)] = value(n.input(0), "node '" + label(n) + "'");
      return;
    }
    if (pads_.count(n.input(0))) fail(n, "pads the output of another Pad");
    pads_[n.output(0)] = Pad{n.input(0), label(n), {p[2], p[3], p[6], p[7]}};
  }

  /// Adds the pads of a Pad that feeds window operator `n` to its own: zeros counted in an
  /// average, as the explicit padding was.
  void fold_pad(const onnx::NodeProto& n, OpAttrs& a) const {
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

  std::string path_;
  onnx::ModelProto& model_;
  Graph graph_;
  std::int64_t opset_ = 13;
  std::unordered_map<std::string, ConstInfo> consts_;
  std::unordered_map<std::string, NodeId> values_;
  /// Outputs of Pad nodes, folded into the window operator that reads them.
  struct Pad {
    std::string source, node;
    std::array<std::int64_t, 4> pads;  ///< top, left, bottom, right
  };
  std::unordered_map<std::string, Pad> pads_;
};

void Importer::import_node(const onnx::NodeProto& n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    fail(n, "unsupported ONNX operator '" + n.domain() + "." + n.op_type() + "'");
  if (n.output_size() == 0) fail(n, "has no output");
  // ONNX graphs are in single-assignment form; a second producer would silently win.
  if (!n.output(0).empty() && (values_.count(n.output(0)) || consts_.count(n.output(0))))
    fail(n, "output tensor '" + n.output(0) +
                "' is already produced by an earlier node or initializer");
  const std::string& op = n.op_type();
  OpAttrs a;
  if (op == "Constant") {
    const auto* v = attr(n, "value");
    if (!v || v->type() != onnx::AttributeProto::TENSOR) fail(n, "only 'value' tensor constants are supported");
    consts_[n.output(0)] = const_from(v->t(), false);
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
  } else if (op == "Conv") {
    const ConstInfo& w = need_constant(n, 1, "weight");
    if (w.dims.size() != 4) fail(n, "only 2-D convolutions are supported, weight " + shape_str(w.dims));
    a.groups = attr_int(n, "group", 1);
    a.out_channels = w.dims[0];
    a.in_channels = w.dims[1] * a.groups;
    a.bias = n.input_size() > 2 && !n.input(2).empty();
    if (const ConstInfo* b = constant(n, 2); b && b->dims != Shape{a.out_channels})
      fail(n, "bias " + shape_str(b->dims) + " does not match the weight's " +
                  std::to_string(a.out_channels) + " output channels");
    const Shape weight_kernel{w.dims[2], w.dims[3]};
    auto k = attr_ints(n, "kernel_shape");
    if (!k.empty() && k != weight_kernel)
      fail(n, "kernel_shape " + shape_str(k) + " contradicts the weight " + shape_str(w.dims));
    window_attrs(n, a, weight_kernel);
    fold_pad(n, a);
    a.weights = weight_names(n, 1);
    emit(n, OpKind::Conv, a, {0});
  } else if (op == "Gemm" || (op == "MatMul" && constant(n, 1) && constant(n, 1)->dims.size() == 2)) {
    if (attr_int(n, "transA", 0)) fail(n, "transA=1 is not supported");
    const ConstInfo& w = need_constant(n, 1, "weight");
    if (w.dims.size() != 2) fail(n, "weight must be 2-D, got " + shape_str(w.dims));
    const bool trans_b = attr_int(n, "transB", 0) != 0;
    a.out_channels = trans_b ? w.dims[0] : w.dims[1];
    a.in_channels = trans_b ? w.dims[1] : w.dims[0];
    a.bias = op == "Gemm" && n.input_size() > 2 && !n.input(2).empty();
    a.weights = weight_names(n, 1);
    emit(n, OpKind::Gemm, a, {0});
  } else if (op == "MatMul") {
    emit(n, OpKind::MatMul, a, {0, 1});
  } else if (op == "MaxPool" || op == "AveragePool") {
    if (n.output_size() > 1 && !n.output(1).empty()) fail(n, "the indices output is not supported");
    window_attrs(n, a, attr_ints(n, "kernel_shape"));
    if (a.dilation != std::array<std::int64_t, 2>{1, 1}) fail(n, "dilated pooling is not supported");
    a.count_include_pad = attr_int(n, "count_include_pad", 0) != 0;
    fold_pad(n, a);
    emit(n, op == "MaxPool" ? OpKind::MaxPool : OpKind::AvgPool, a, {0});
  } else if (op == "GlobalAveragePool") {
    emit(n, OpKind::GlobalAvgPool, a, {0});
  } else if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow") {
    emit(n, *op_kind_from_key(op), a, {0, 1});
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
      if (const ConstInfo* c = constant(n, i); c && c->floats.size() == 1) (i == 1 ? a.min : a.max) = c->floats[0];
      else if (i < n.input_size() && !n.input(i).empty()) fail(n, "min/max must be constant scalars");
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
    emit(n, OpKind::Softmax, a, {0});
  } else if (op == "ReduceMean") {
    a.axes = attr_ints(n, "axes");
    if (n.input_size() > 1 && !n.input(1).empty()) {  // opset 18: the axes are an input
      const ConstInfo* c = constant(n, 1);
      if (!c) fail(n, "axes (input 2) must be a constant");
      a.axes = c->ints;
    }
    if (a.axes.empty() && attr_int(n, "noop_with_empty_axes", 0))
      fail(n, "noop_with_empty_axes=1 without axes is not supported");
    a.keepdims = attr_int(n, "keepdims", 1) != 0;
    emit(n, OpKind::ReduceMean, a, {0});
  } else if (op == "Concat") {
    a.axis = attr_int(n, "axis", 1);
    std::vector<int> all;
    for (int i = 0; i < n.input_size(); ++i) all.push_back(i);
    emit(n, OpKind::Concat, a, all);
  } else if (op == "Reshape") {
    if (attr_int(n, "allowzero", 0)) fail(n, "allowzero=1 is not supported");
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
    if (n.output_size() > 1 && !n.output(1).empty()) fail(n, "the mask output is not supported");
    emit(n, op == "Identity" ? OpKind::Identity : OpKind::Dropout, a, {0});
  } else if (op == "Pad") {
    import_pad(n);
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
  } else if (op == "Gather") {
    a.axis = attr_int(n, "axis", 0);
    emit(n, OpKind::Gather, a, {0, 1});
  } else if (op == "Unsqueeze" || op == "Squeeze") {
    a.axes = attr_ints(n, "axes");
    const OpKind k = op == "Unsqueeze" ? OpKind::Unsqueeze : OpKind::Squeeze;
    if (n.input_size() > 1 && !n.input(1).empty()) emit(n, k, a, {0, 1});
    else emit(n, k, a, {0});
  } else if (op == "Cast") {
    const auto to = attr_int(n, "to", onnx::TensorProto::FLOAT);
    a.elem_bytes = elem_bytes_of(static_cast<int>(to));
    if (a.elem_bytes == 0)
      fail(n, "to=" + std::to_string(to) + " is not a data type of fixed size");
    emit(n, OpKind::Cast, a, {0});
  } else {
    fail(n, "unsupported ONNX operator '" + op + "'");
  }
}

void Importer::check_against_onnx(const Graph& graph) const {
  auto check = [&](const onnx::ValueInfoProto& vi) {
    auto it = values_.find(vi.name());
    if (it == values_.end() || !graph.contains(it->second)) return;
    const auto& shape = vi.type().tensor_type().shape();
    Shape onnx_shape;
    for (const auto& d : shape.dim()) {
      if (!d.has_dim_value()) return;
      onnx_shape.push_back(d.dim_value());
    }
    const Node& n = graph.node(it->second);
    if (vi.type().tensor_type().has_shape() && n.output.shape != onnx_shape)
      throw std::logic_error(path_ + ": tensor '" + vi.name() + "': nocflow infers " +
                             shape_str(n.output.shape) + ", ONNX shape inference " + shape_str(onnx_shape));
  };
  for (const auto& vi : model_.graph().value_info()) check(vi);
  for (const auto& vi : model_.graph().output()) check(vi);
}

}  // namespace

Graph import_onnx(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError(path + ": cannot open");
  onnx::ModelProto model;
  if (!model.ParseFromIstream(&in) || !model.has_graph())
    throw InputError(path + ": not a readable ONNX model");
  // nocflow's import and shape inference run first: they check every operator they accept,
  // which ONNX's inference assumes (its Conv rule divides by the strides and indexes the
  // input's shape by the weight's rank unchecked, in onnx 1.12 at least).
  Importer importer(path, model);
  Graph graph = importer.build();
  try {
    onnx::shape_inference::InferShapes(model);
  } catch (const std::exception& e) {
    throw InputError(path + ": ONNX shape inference failed: " + e.what());
  }
  importer.check_against_onnx(graph);
  return graph;
}

}  // namespace nocflow::optimizer
