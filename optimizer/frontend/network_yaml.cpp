// SPDX-License-Identifier: MIT
#include "optimizer/frontend/network_yaml.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "noc/base/text_input.h"
#include "optimizer/graph/resize.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/io/graph_file.h"
#include "optimizer/io/yaml_file.h"

namespace nocflow::optimizer {
namespace {

/// Attribute keys each operator accepts (besides op, name, inputs), and which are required.
struct OpKeys {
  std::vector<std::string> allowed;
  std::vector<std::string> required;
};

OpKeys keys_for(OpKind k) {
  switch (k) {
    case OpKind::Input: case OpKind::RandomUniform: return {{"shape"}, {"shape"}};
    case OpKind::Constant: return {{"shape", "trainable"}, {"shape"}};
    case OpKind::Conv: return {{"out", "kernel", "stride", "pad", "dilation", "groups", "bias"}, {"out", "kernel"}};
    case OpKind::ConvTranspose:
      return {{"out", "kernel", "stride", "pad", "dilation", "groups", "bias", "output_padding"},
              {"out", "kernel"}};
    case OpKind::Gemm: return {{"out", "bias"}, {"out"}};
    case OpKind::MaxPool: case OpKind::AvgPool: return {{"kernel", "stride", "pad", "ceil_mode"}, {"kernel"}};
    case OpKind::Clip: return {{"min", "max"}, {}};
    case OpKind::HardSigmoid: return {{"alpha", "beta"}, {}};
    case OpKind::LeakyRelu: return {{"alpha"}, {}};
    case OpKind::Mod: return {{"fmod"}, {}};
    case OpKind::BatchNorm: return {{"epsilon"}, {}};
    case OpKind::LayerNorm:
      return {{"epsilon", "axis", "shift"}, {}};
    case OpKind::Softmax: case OpKind::Concat: case OpKind::Flatten: case OpKind::Gather: return {{"axis"}, {}};
    case OpKind::ReduceMean: return {{"axes", "keepdims"}, {}};
    case OpKind::Unsqueeze: case OpKind::Squeeze: return {{"axes"}, {}};
    case OpKind::Reshape: return {{"shape"}, {}};
    case OpKind::Transpose: return {{"perm"}, {}};
    case OpKind::Dropout: return {{"ratio"}, {}};
    case OpKind::Resize:
      return {{"sizes", "scales", "mode", "coordinate_transformation_mode", "nearest_mode"}, {}};
    default: return {{}, {}};
  }
}

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

class Loader {
 public:
  Loader(std::string origin, std::string name, std::int64_t batch)
      : origin_(std::move(origin)), graph_(std::move(name)), batch_(batch) {}

  Graph load(const YAML::Node& root) {
    if (!root.IsMap()) fail(root, "", "expected a mapping with 'layers'");
    static const std::vector<std::string> top = {"name", "elem_bytes", "input", "inputs", "layers", "outputs"};
    for (const auto& kv : root) {
      const auto key = kv.first.as<std::string>();
      if (std::find(top.begin(), top.end(), key) == top.end()) fail(kv.first, key, unknown(key, top));
    }
    if (root["name"]) graph_.set_name(scalar<std::string>(root["name"], "name"));
    if (root["elem_bytes"]) {
      const auto bytes = scalar<std::int64_t>(root["elem_bytes"], "elem_bytes");
      if (bytes < 1 || bytes > 64)
        fail(root["elem_bytes"], "elem_bytes", "expected bytes per element in 1..64");
      elem_bytes_ = static_cast<int>(bytes);
    }
    if (root["input"] && root["inputs"]) fail(root["inputs"], "inputs", "give either 'input' or 'inputs'");
    if (root["input"]) add_input("input", root["input"], "input");
    if (const auto ins = root["inputs"]) {
      if (!ins.IsMap()) fail(ins, "inputs", "expected a mapping name: shape");
      for (const auto& kv : ins) add_input(kv.first.as<std::string>(), kv.second, "inputs." + kv.first.as<std::string>());
    }
    if (last_ == kNone) fail(root, "", "the network needs 'input' or 'inputs'");
    const auto layers = root["layers"];
    if (!layers || !layers.IsSequence() || layers.size() == 0) fail(layers ? layers : root, "layers", "expected a non-empty list of layers");
    for (std::size_t i = 0; i < layers.size(); ++i)
      if (layers[i].IsMap() && layers[i]["name"] && layers[i]["name"].IsScalar())
        named_.emplace(layers[i]["name"].Scalar(), i);
    for (std::size_t i = 0; i < layers.size(); ++i) add_layer(layers[i], "layers[" + std::to_string(i) + "]");
    if (const auto outs = root["outputs"]) {
      std::vector<NodeId> ids;
      for (const auto& o : list_of(outs, "outputs")) ids.push_back(lookup(o, "outputs", &outs));
      if (ids.empty())
        fail(outs, "outputs", "no outputs: dead-code elimination would remove every layer");
      graph_.set_outputs(ids);
    } else {
      graph_.set_outputs({last_});
    }
    try {
      infer_shapes(graph_);
    } catch (const InputError& e) {
      // Point at the layer the message names, if it does.
      const std::string msg = e.what();
      for (const auto& [name, mark] : marks_)
        if (msg.rfind("node '" + name + "'", 0) == 0)
          throw InputError(where(mark) + ": " + msg);
      throw InputError(origin_ + ": " + msg);
    }
    return std::move(graph_);
  }

 private:
  static constexpr NodeId kNone = static_cast<NodeId>(-1);

  std::string where(const YAML::Mark& m) const {
    if (m.is_null()) return origin_;
    return origin_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key, const std::string& what) const {
    throw InputError(where(at.Mark()) + ": " + (key.empty() ? "" : key + ": ") + what);
  }
  static std::string unknown(const std::string& key, const std::vector<std::string>& known) {
    std::string msg = "unknown key";
    if (auto g = closest_name(key, known); !g.empty()) msg += "; did you mean '" + g + "'?";
    return msg + " (known: " + join(known) + ")";
  }

  template <class T>
  T scalar(const YAML::Node& n, const std::string& key) const {
    const char* expected = std::is_same_v<T, bool> ? "true or false"
                           : std::is_same_v<T, std::int64_t> ? "an integer"
                           : std::is_same_v<T, double> ? "a number" : "a string";
    if (!n.IsScalar()) fail(n, key, std::string("expected ") + expected);
    const std::optional<T> read = yaml_as<T>(n);
    if (!read)
      fail(n, key,
           std::string("expected ") + expected + ", got '" + n.Scalar() + "'" +
               (has_leading_zero(n.Scalar()) ? " (no leading zero: it reads as octal)" : ""));
    const T v = *read;
    if constexpr (std::is_same_v<T, double>)
      if (!std::isfinite(v)) fail(n, key, "expected a finite number, got '" + n.Scalar() + "'");
    return v;
  }
  std::vector<std::int64_t> ints(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) return {scalar<std::int64_t>(n, key)};
    if (!n.IsSequence()) fail(n, key, "expected an integer or a list of integers");
    std::vector<std::int64_t> out;
    for (const auto& x : n) out.push_back(scalar<std::int64_t>(x, key));
    return out;
  }
  std::vector<std::string> list_of(const YAML::Node& n, const std::string& key) const {
    if (n.IsScalar()) return {n.Scalar()};
    if (!n.IsSequence()) fail(n, key, "expected a name or a list of names");
    std::vector<std::string> out;
    for (const auto& x : n) out.push_back(scalar<std::string>(x, key));
    return out;
  }
  std::array<std::int64_t, 2> pair(const YAML::Node& n, const std::string& key) const {
    const auto v = ints(n, key);
    if (v.size() == 1) return {v[0], v[0]};
    if (v.size() == 2) return {v[0], v[1]};
    fail(n, key, "expected one value or [h, w]");
  }

  NodeId lookup(const std::string& name, const std::string& key, const YAML::Node* at = nullptr) const {
    if (auto id = graph_.find(name)) return *id;
    std::vector<std::string> known;
    for (NodeId id : graph_.node_ids()) known.push_back(graph_.node(id).name);
    const auto later = named_.find(name);
    const std::string msg =
        later != named_.end()
            ? "'" + name + "' is layers[" + std::to_string(later->second) +
                  "], not defined yet: a layer reads only the inputs and layers before it"
            : unknown_name_message(key == "outputs" ? "output name" : "input name", name, known);
    if (at) fail(*at, key, msg);
    throw InputError(origin_ + ": " + key + ": " + msg);
  }

  /// A shape whose leading dimension may be the word `batch` (--batch N, default 1); `open`
  /// says whether it was.
  std::vector<std::int64_t> batched_shape(const YAML::Node& shape, const std::string& key, bool* open) const {
    std::vector<std::int64_t> out;
    *open = false;
    for (std::size_t i = 0; i < shape.size(); ++i)
      if (shape[i].IsScalar() && shape[i].Scalar() == "batch") {
        if (i != 0) fail(shape[i], key, "only the leading dimension can be 'batch'");
        out.push_back(batch_ > 0 ? batch_ : 1);
        *open = true;
      } else {
        out.push_back(scalar<std::int64_t>(shape[i], key));
      }
    return out;
  }

  void add_input(const std::string& name, const YAML::Node& shape, const std::string& key) {
    if (!shape.IsSequence()) fail(shape, key, "expected a shape, a list such as [1, 3, 224, 224]");
    OpAttrs a;
    bool open = false;
    a.shape = batched_shape(shape, key, &open);
    // One batch for all inputs: an input whose batch is fixed beside one left open would
    // broadcast against it, another network at each --batch.
    if (last_ != kNone && open != batch_open_)
      fail(shape, key, "the inputs' leading dimensions must all be 'batch' or all be numbers");
    batch_open_ = open;
    a.elem_bytes = elem_bytes_;
    last_ = graph_.add_node(Node{name, OpKind::Input, a, {}});
    marks_.emplace_back(name, shape.Mark());
  }

  void add_layer(const YAML::Node& layer, const std::string& path) {
    YAML::Node spec = layer;
    std::string op_key;
    if (layer.IsScalar()) {
      op_key = layer.Scalar();
    } else if (layer.IsMap()) {
      if (!layer["op"]) fail(layer, path, "a layer needs 'op'");
      op_key = scalar<std::string>(layer["op"], path + ".op");
    } else {
      fail(layer, path, "expected an operator name or a mapping with 'op'");
    }
    const auto kind = op_kind_from_key(op_key);
    if (!kind || *kind == OpKind::Fused || *kind == OpKind::Input)
      fail(layer.IsMap() ? layer["op"] : layer, path + ".op", unknown_name_message("operator", op_key, op_keys()));
    OpAttrs a;
    a.elem_bytes = elem_bytes_;
    if (*kind == OpKind::Clip && op_key == "relu6") a.min = 0, a.max = 6;
    if (*kind == OpKind::Softmax || *kind == OpKind::LayerNorm) a.axis = -1;
    if (*kind == OpKind::Gather) a.axis = 0;
    if (*kind == OpKind::HardSigmoid) a.alpha = 0.2, a.beta = 0.5;  // as ONNX
    if (*kind == OpKind::LeakyRelu) a.alpha = 0.01;
    if (*kind == OpKind::Conv || *kind == OpKind::ConvTranspose || *kind == OpKind::Gemm)
      a.bias = true;  // as PyTorch
    std::string name;
    std::vector<NodeId> inputs{last_};
    bool stride_given = false;
    const OpKeys keys = keys_for(*kind);
    if (layer.IsMap()) {
      std::vector<std::string> known = {"op", "name", "inputs"};
      known.insert(known.end(), keys.allowed.begin(), keys.allowed.end());
      for (const auto& kv : layer) {
        const std::string key = kv.first.as<std::string>();
        const std::string kpath = path + "." + key;
        const YAML::Node& v = kv.second;
        if (std::find(known.begin(), known.end(), key) == known.end())
          fail(kv.first, kpath, unknown(key, known) + " for operator '" + op_key + "'");
        if (key == "op") continue;
        if (key == "name") {
          name = scalar<std::string>(v, kpath);
          if (name.empty()) fail(v, kpath, "an empty name (leave 'name' out for a generated one)");
        }
        else if (key == "inputs") {
          inputs.clear();
          for (const auto& in : list_of(v, kpath)) inputs.push_back(lookup(in, kpath, &v));
        } else if (key == "out") a.out_channels = scalar<std::int64_t>(v, kpath);
        else if (key == "kernel") a.kernel = pair(v, kpath);
        else if (key == "stride") a.stride = pair(v, kpath), stride_given = true;
        else if (key == "dilation") a.dilation = pair(v, kpath);
        else if (key == "output_padding") a.output_padding = pair(v, kpath);
        else if (key == "pad") {
          const auto p = ints(v, kpath);
          if (p.size() == 1) a.pads = {p[0], p[0], p[0], p[0]};
          else if (p.size() == 2) a.pads = {p[0], p[1], p[0], p[1]};
          else if (p.size() == 4) a.pads = {p[0], p[1], p[2], p[3]};
          else fail(v, kpath, "expected one value, [h, w] or [top, left, bottom, right]");
        } else if (key == "groups") a.groups = scalar<std::int64_t>(v, kpath);
        else if (key == "bias") a.bias = scalar<bool>(v, kpath);
        else if (key == "shift")
          a.shift = scalar<bool>(v, kpath);
        else if (key == "ceil_mode") a.ceil_mode = scalar<bool>(v, kpath);
        else if (key == "fmod") a.fmod = scalar<bool>(v, kpath);
        else if (key == "axis") {
          a.axis = scalar<std::int64_t>(v, kpath);
          // Flatten's axis 0 folds the batch into the features: as a reshape to a number.
          if (*kind == OpKind::Flatten && batch_open_ && a.axis == 0)
            fail(v, kpath, "the network's batch is open (input: [batch, ...]): flattening from "
                           "axis 0 would fold it into the features; flatten from axis 1");
        }
        else if (key == "axes") a.axes = ints(v, kpath);
        else if (key == "keepdims") a.keepdims = scalar<bool>(v, kpath);
        else if (key == "shape") {
          // With the batch open, a reshape must carry it (0 copies it, -1 infers it, `batch`
          // names it): a number there would fold the batch into the features at --batch > 1.
          bool open = false;
          a.shape = v.IsSequence() ? batched_shape(v, kpath, &open) : ints(v, kpath);
          // With the inputs' batch fixed, `batch` would be --batch's default 1, not theirs.
          if (open && !batch_open_)
            fail(v, kpath,
                 "'batch' stands for an open batch (input: [batch, ...]), and this network's "
                 "inputs fix theirs: write the leading dimension 0 (copy), -1 (infer) or a number");
          if (*kind == OpKind::Reshape && batch_open_ && !open && !a.shape.empty() && a.shape[0] > 0)
            fail(v, kpath,
                 "the network's batch is open (input: [batch, ...]): write the leading dimension "
                 "0 (copy), -1 (infer) or batch, not " + std::to_string(a.shape[0]));
        }
        else if (key == "perm") a.perm = ints(v, kpath);
        else if (key == "min") a.min = scalar<double>(v, kpath);
        else if (key == "max") a.max = scalar<double>(v, kpath);
        else if (key == "alpha") a.alpha = scalar<double>(v, kpath);
        else if (key == "beta") a.beta = scalar<double>(v, kpath);
        else if (key == "epsilon") a.epsilon = scalar<double>(v, kpath);
        else if (key == "ratio") a.ratio = scalar<double>(v, kpath);
        else if (key == "trainable") a.trainable = scalar<bool>(v, kpath);
        else if (key == "sizes") {
          const auto hw = pair(v, kpath);
          a.shape = {hw[0], hw[1]};
        } else if (key == "scales") {
          if (v.IsScalar()) a.scales.assign(2, scalar<double>(v, kpath));
          else if (v.IsSequence() && v.size() == 2)
            for (const auto& x : v) a.scales.push_back(scalar<double>(x, kpath));
          else fail(v, kpath, "expected one value or [h, w]");
        } else if (key == "mode") a.mode = scalar<std::string>(v, kpath);
        else if (key == "coordinate_transformation_mode")
          a.coordinate_transformation_mode = scalar<std::string>(v, kpath);
        else if (key == "nearest_mode") a.nearest_mode = scalar<std::string>(v, kpath);
      }
      for (const auto& r : keys.required)
        if (!layer[r]) fail(layer, path, "operator '" + op_key + "' needs '" + r + "'");
    } else if (!keys.required.empty()) {
      fail(layer, path, "operator '" + op_key + "' needs '" + keys.required.front() + "'");
    }
    // The open batch must stay leading: shapes after it (a reshape's 0, -1 or `batch`) and the
    // BATCH split take axis 0 as the batch. Without perm a transpose reverses the axes.
    if (*kind == OpKind::Transpose && batch_open_ && (a.perm.empty() || a.perm[0] != 0))
      fail(layer.IsMap() && layer["perm"] ? layer["perm"] : layer, path + ".perm",
           "the network's batch is open (input: [batch, ...]): a transpose must keep it leading "
           "(perm starting with 0; without perm it reverses the axes); write the input's batch "
           "as a number to move it");
    if (*kind == OpKind::MaxPool || *kind == OpKind::AvgPool) {
      if (!stride_given) a.stride = a.kernel;
      if (const std::string why = pool_pad_problem(a); !why.empty())
        fail(layer["pad"] ? layer["pad"] : layer, path + ".pad", why);
    }
    if (a.min > a.max)
      fail(layer, path, "clip min " + number_text(a.min) + " is above max " + number_text(a.max));
    if (a.ratio < 0 || a.ratio >= 1)
      fail(layer, path, "dropout ratio " + number_text(a.ratio) + " is outside [0, 1)");
    if (a.epsilon < 0) fail(layer, path, "epsilon " + number_text(a.epsilon) + " is negative");
    if (*kind == OpKind::Resize) {
      if (a.shape.empty() == a.scales.empty())
        fail(layer, path, "operator 'resize' needs either 'sizes' or 'scales'");
      try {
        check_resize_modes(a);
      } catch (const InputError& e) {
        fail(layer, path, e.what());
      }
    }
    if (*kind == OpKind::Reshape && inputs.size() < 2 && !(layer.IsMap() && layer["shape"]))
      fail(layer, path, "operator 'reshape' needs 'shape' (or a second input that gives it)");
    const OpInfo& info = op_info(*kind);
    if (info.min_inputs == 0 && info.max_inputs == 0) {
      if (layer.IsMap() && layer["inputs"])
        fail(layer["inputs"], path + ".inputs", "operator '" + op_key + "' reads no inputs");
      inputs.clear();
    }
    const bool named = !name.empty();
    if (!named) name = std::string(info.key) + std::to_string(++counts_[std::string(info.key)]);
    if (graph_.find(name))  // a generated name may meet a given one: say which it is
      fail(named && layer.IsMap() ? layer["name"] : layer, path + ".name",
           "duplicate layer name '" + name + "'" +
               (named ? ""
                      : ", the name generated for this unnamed '" + op_key +
                            "' layer: give it a name: of its own"));
    last_ = graph_.add_node(Node{name, *kind, a, {}}, inputs);
    marks_.emplace_back(name, layer.Mark());
  }

  std::string origin_;
  Graph graph_;
  std::int64_t batch_ = 0;  ///< --batch for an input whose leading dimension is `batch` (0: 1)
  bool batch_open_ = false;  ///< the inputs' leading dimensions are `batch`
  int elem_bytes_ = 4;
  NodeId last_ = kNone;
  std::map<std::string, int> counts_;
  std::vector<std::pair<std::string, YAML::Mark>> marks_;
  std::map<std::string, std::size_t> named_;  ///< layers' explicit names: their index
};

}  // namespace

Graph parse_network_yaml(const std::string& text, const std::string& origin, std::int64_t batch) {
  const YAML::Node root = parse_one_document(text, origin);
  reject_duplicate_keys(root, origin);
  if (root.IsMap() && root["format"]) return read_graph_yaml(root, origin);  // a saved graph
  // Named after its file unless it says (a file name need not be UTF-8, JSON outputs must).
  const std::string stem = utf8_replaced(std::filesystem::path(origin).stem().string());
  return Loader(origin, stem.empty() ? "network" : stem, batch).load(root);
}

Graph load_network_yaml(const std::string& path, std::int64_t batch) {
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open network file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_network_yaml(ss.str(), path, batch);
}

}  // namespace nocflow::optimizer
