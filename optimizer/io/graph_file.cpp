// SPDX-License-Identifier: MIT
#include "optimizer/io/graph_file.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/io/yaml_file.h"

namespace nocflow::optimizer {
namespace {

/// Calls visit(key, member) for every attribute but `parts` (written separately). The keys are
/// the field names; one list for writing and reading, so that the two cannot drift apart.
template <class Visit>
void for_each_attr(Visit&& visit) {
  visit("out_channels", &OpAttrs::out_channels);
  visit("in_channels", &OpAttrs::in_channels);
  visit("kernel", &OpAttrs::kernel);
  visit("stride", &OpAttrs::stride);
  visit("dilation", &OpAttrs::dilation);
  visit("pads", &OpAttrs::pads);
  visit("output_padding", &OpAttrs::output_padding);
  visit("groups", &OpAttrs::groups);
  visit("bias", &OpAttrs::bias);
  visit("shift", &OpAttrs::shift);
  visit("ceil_mode", &OpAttrs::ceil_mode);
  visit("count_include_pad", &OpAttrs::count_include_pad);
  visit("fmod", &OpAttrs::fmod);
  visit("axis", &OpAttrs::axis);
  visit("axes", &OpAttrs::axes);
  visit("keepdims", &OpAttrs::keepdims);
  visit("shape", &OpAttrs::shape);
  visit("perm", &OpAttrs::perm);
  visit("min", &OpAttrs::min);
  visit("max", &OpAttrs::max);
  visit("alpha", &OpAttrs::alpha);
  visit("beta", &OpAttrs::beta);
  visit("epsilon", &OpAttrs::epsilon);
  visit("ratio", &OpAttrs::ratio);
  visit("elem_bytes", &OpAttrs::elem_bytes);
  visit("int_data", &OpAttrs::int_data);
  visit("float_data", &OpAttrs::float_data);
  visit("trainable", &OpAttrs::trainable);
  visit("zeros", &OpAttrs::zeros);
  visit("weights", &OpAttrs::weights);
  visit("grad_of", &OpAttrs::grad_of);
  visit("grad_input", &OpAttrs::grad_input);
  visit("offset", &OpAttrs::offset);
  visit("step", &OpAttrs::step);
  visit("params", &OpAttrs::params);
  visit("optimizer", &OpAttrs::optimizer);
  visit("scales", &OpAttrs::scales);
  visit("mode", &OpAttrs::mode);
  visit("coordinate_transformation_mode", &OpAttrs::coordinate_transformation_mode);
  visit("nearest_mode", &OpAttrs::nearest_mode);
}

/// The shortest decimal that reads back as exactly `x` (".inf" and "-.inf" for infinities).
std::string exact(double x) {
  if (std::isinf(x)) return x > 0 ? ".inf" : "-.inf";
  char buf[40];
  for (int digits = 6; digits <= 17; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, x);
    if (std::strtod(buf, nullptr) == x) break;
  }
  return buf;
}

void emit(YAML::Emitter& out, double x) {
  out << exact(x);
}
void emit(YAML::Emitter& out, const std::vector<double>& xs) {
  out << YAML::Flow << YAML::BeginSeq;
  for (double x : xs) emit(out, x);
  out << YAML::EndSeq;
}
void emit(YAML::Emitter& out, OpKind k) {
  out << std::string(op_name(k));
}
template <std::size_t N>
void emit(YAML::Emitter& out, const std::array<std::int64_t, N>& xs) {
  out << YAML::Flow << std::vector<std::int64_t>(xs.begin(), xs.end());
}
void emit(YAML::Emitter& out, const std::vector<std::int64_t>& xs) {
  out << YAML::Flow << xs;
}
template <class T>
void emit(YAML::Emitter& out, const T& x) {
  out << x;
}

void emit_attrs(YAML::Emitter& out, const OpAttrs& a) {
  const OpAttrs defaults;
  bool any = false;
  for_each_attr([&](const char* key, auto member) {
    if (a.*member == defaults.*member) return;
    if (!any) out << YAML::Key << "attrs" << YAML::Value << YAML::Flow << YAML::BeginMap;
    any = true;
    out << YAML::Key << key << YAML::Value;
    emit(out, a.*member);
  });
  if (any) out << YAML::EndMap;
}

/// Display name → kind, every kind (generated and fused ones too: a graph file holds them).
std::optional<OpKind> kind_named(const std::string& name) {
  for (int k = 0; k <= static_cast<int>(OpKind::Fused); ++k)
    if (op_name(static_cast<OpKind>(k)) == name) return static_cast<OpKind>(k);
  return std::nullopt;
}
std::vector<std::string> kind_names() {
  std::vector<std::string> out;
  for (int k = 0; k <= static_cast<int>(OpKind::Fused); ++k)
    out.emplace_back(op_name(static_cast<OpKind>(k)));
  return out;
}

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  Graph read(const YAML::Node& root) {
    check_keys(root, "", {"format", "name", "outputs", "nodes"});
    if (get<std::string>(root["format"], "format") != kGraphFormat)
      fail(root["format"], "format", std::string("expected ") + kGraphFormat);
    Graph graph(root["name"] ? get<std::string>(root["name"], "name") : std::string("network"));
    const YAML::Node nodes = root["nodes"];
    if (!nodes || !nodes.IsSequence() || nodes.size() == 0)
      fail(nodes ? nodes : root, "nodes", "expected a non-empty list of nodes");
    std::vector<std::pair<NodeId, YAML::Node>> recorded;  // node, its `output`
    for (std::size_t i = 0; i < nodes.size(); ++i) {
      const std::string path = "nodes[" + std::to_string(i) + "]";
      const YAML::Node n = nodes[i];
      check_keys(n, path, {"name", "op", "inputs", "attrs", "parts", "output"});
      Node node;
      node.name = get<std::string>(required(n, "name", path), path + ".name");
      if (graph.find(node.name))
        fail(n["name"], path + ".name", "duplicate name '" + node.name + "'");
      node.kind = kind(required(n, "op", path), path + ".op");
      node.attrs = attrs(n["attrs"], path + ".attrs");
      if (n["parts"]) {
        if (node.kind != OpKind::Fused)
          fail(n["parts"], path + ".parts", "only a Fused node has parts");
        node.attrs.parts = parts(n["parts"], path + ".parts");
      }
      std::vector<NodeId> inputs;
      if (n["inputs"])
        for (const std::string& in : get<std::vector<std::string>>(n["inputs"], path + ".inputs")) {
          const auto id = graph.find(in);
          if (!id) fail(n["inputs"], path + ".inputs", "'" + in + "' is not an earlier node");
          inputs.push_back(*id);
        }
      if (n["output"] && !n["output"].IsMap())
        fail(n["output"], path + ".output", "expected a map: {shape: [...], elem_bytes: N}");
      recorded.emplace_back(graph.add_node(std::move(node), inputs), n["output"]);
      marks_.emplace_back(graph.node(recorded.back().first).name, n.Mark());
    }
    std::vector<NodeId> outputs;
    for (const std::string& o :
         get<std::vector<std::string>>(required(root, "outputs", ""), "outputs")) {
      const auto id = graph.find(o);
      if (!id) fail(root["outputs"], "outputs", "'" + o + "' is not a node");
      outputs.push_back(*id);
    }
    if (outputs.empty())
      fail(root["outputs"], "outputs", "no outputs: dead-code elimination would remove every node");
    graph.set_outputs(outputs);
    try {
      infer_shapes(graph);
    } catch (const InputError& e) {
      const std::string msg = e.what();
      for (const auto& [name, mark] : marks_)
        if (msg.rfind("node '" + name + "'", 0) == 0) throw InputError(where(mark) + ": " + msg);
      throw InputError(origin_ + ": " + msg);
    }
    for (const auto& [id, output] : recorded) {
      if (!output) continue;
      const Tensor& t = graph.node(id).output;
      const auto shape = get<Shape>(required(output, "shape", "output"), "output.shape");
      const int bytes =
          output["elem_bytes"] ? get<int>(output["elem_bytes"], "output.elem_bytes") : t.elem_bytes;
      if (shape != t.shape || bytes != t.elem_bytes)
        fail(output, "output",
             "node '" + graph.node(id).name + "': the file records " + shape_str(shape) + " x " +
                 std::to_string(bytes) + " B, shape inference gives " + shape_str(t.shape) + " x " +
                 std::to_string(t.elem_bytes) + " B");
    }
    return graph;
  }

 private:
  std::string where(const YAML::Mark& m) const {
    if (m.is_null()) return origin_;
    return origin_ + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1);
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    throw InputError(where(at.Mark()) + ": " + (key.empty() ? "" : key + ": ") + what);
  }
  void check_keys(const YAML::Node& n, const std::string& path,
                  const std::vector<std::string>& known) const {
    if (!n.IsMap()) fail(n, path, "expected a mapping");
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      if (std::find(known.begin(), known.end(), key) == known.end())
        fail(kv.first, path.empty() ? key : path + "." + key,
             unknown_name_message("key", key, known));
    }
  }
  YAML::Node required(const YAML::Node& n, const char* key, const std::string& path) const {
    if (!n[key]) fail(n, path, std::string("needs '") + key + "'");
    return n[key];
  }
  template <class T>
  T get(const YAML::Node& n, const std::string& key) const {
    if (const std::optional<T> read = yaml_as<T>(n)) return *read;
    fail(n, key, kWholeNumber<T> || WholeNumbers<T>::value
                     ? "wrong type of value (expected a whole number in decimal)"
                     : "wrong type of value");
  }
  OpKind kind(const YAML::Node& n, const std::string& key) const {
    const auto name = get<std::string>(n, key);
    const auto k = kind_named(name);
    if (!k) fail(n, key, unknown_name_message("operator", name, kind_names()));
    return *k;
  }
  OpAttrs attrs(const YAML::Node& n, const std::string& path) const {
    OpAttrs a;
    if (!n) return a;
    std::vector<std::string> known;
    for_each_attr([&](const char* key, auto) { known.emplace_back(key); });
    check_keys(n, path, known);
    for (const auto& kv : n) {
      const std::string key = kv.first.as<std::string>();
      for_each_attr([&](const char* k, auto member) {
        if (key != k) return;
        using T = std::decay_t<decltype(a.*member)>;
        if constexpr (std::is_same_v<T, OpKind>)
          a.*member = kind(kv.second, path + "." + key);
        else
          a.*member = get<T>(kv.second, path + "." + key);
      });
    }
    return a;
  }
  std::vector<FusedPart> parts(const YAML::Node& n, const std::string& path) const {
    if (!n.IsSequence() || n.size() == 0) fail(n, path, "expected a non-empty list of parts");
    std::vector<FusedPart> out;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const std::string p = path + "[" + std::to_string(i) + "]";
      check_keys(n[i], p, {"name", "op", "num_inputs", "chain_input", "attrs"});
      FusedPart part;
      part.name = get<std::string>(required(n[i], "name", p), p + ".name");
      part.kind = kind(required(n[i], "op", p), p + ".op");
      part.num_inputs = get<int>(required(n[i], "num_inputs", p), p + ".num_inputs");
      if (n[i]["chain_input"]) part.chain_input = get<int>(n[i]["chain_input"], p + ".chain_input");
      part.attrs = attrs(n[i]["attrs"], p + ".attrs");
      check_part(part, i, n[i], p);
      out.push_back(std::move(part));
    }
    return out;
  }

  /// A part reads its operator's number of inputs (part `index` > 0: the previous part's
  /// output, at chain_input, and num_inputs of the node's), as top-level nodes are checked.
  void check_part(const FusedPart& part, std::size_t index, const YAML::Node& n,
                  const std::string& path) const {
    if (part.kind == OpKind::Fused) fail(n["op"], path + ".op", "a part cannot itself be Fused");
    const OpInfo& info = op_info(part.kind);
    const int chained = index == 0 ? 0 : 1;
    const int lo = std::max(info.min_inputs - chained, 0);
    const int hi = info.max_inputs < 0 ? -1 : info.max_inputs - chained;
    if (part.num_inputs < lo || (hi >= 0 && part.num_inputs > hi))
      fail(n["num_inputs"], path + ".num_inputs",
           "expected " + input_count_text(lo, hi) + " for " + std::string(info.name) +
               (chained ? " after the previous part's output" : "") + ", got " +
               std::to_string(part.num_inputs));
    if (chained ? part.chain_input < 0 || part.chain_input > part.num_inputs
                : part.chain_input != 0)
      fail(n["chain_input"], path + ".chain_input",
           chained ? "expected an input position in 0.." + std::to_string(part.num_inputs)
                   : std::string("the first part has no previous part to chain"));
  }

  std::string origin_;
  std::vector<std::pair<std::string, YAML::Mark>> marks_;
};

}  // namespace

std::string graph_yaml(const Graph& graph) {
  YAML::Emitter out;
  out << YAML::BeginMap << YAML::Key << "format" << YAML::Value << kGraphFormat;
  out << YAML::Key << "name" << YAML::Value << graph.name();
  std::vector<std::string> outputs;
  for (NodeId id : graph.outputs()) outputs.push_back(graph.node(id).name);
  out << YAML::Key << "outputs" << YAML::Value << YAML::Flow << outputs;
  out << YAML::Key << "nodes" << YAML::Value << YAML::BeginSeq;
  for (NodeId id : graph.topological_order()) {
    const Node& n = graph.node(id);
    out << YAML::BeginMap << YAML::Key << "name" << YAML::Value << n.name;
    out << YAML::Key << "op" << YAML::Value << std::string(op_name(n.kind));
    std::vector<std::string> inputs;
    for (NodeId in : graph.inputs(id)) inputs.push_back(graph.node(in).name);
    if (!inputs.empty()) out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << inputs;
    emit_attrs(out, n.attrs);  // all but the parts, which follow
    if (!n.attrs.parts.empty()) {
      out << YAML::Key << "parts" << YAML::Value << YAML::BeginSeq;
      for (const FusedPart& p : n.attrs.parts) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "name" << YAML::Value << p.name
            << YAML::Key << "op" << YAML::Value << std::string(op_name(p.kind)) << YAML::Key
            << "num_inputs" << YAML::Value << p.num_inputs;
        if (p.chain_input != 0) out << YAML::Key << "chain_input" << YAML::Value << p.chain_input;
        emit_attrs(out, p.attrs);
        out << YAML::EndMap;
      }
      out << YAML::EndSeq;
    }
    out << YAML::Key << "output" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key
        << "shape" << YAML::Value << YAML::Flow << n.output.shape << YAML::Key << "elem_bytes"
        << YAML::Value << n.output.elem_bytes << YAML::EndMap;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap;
  return std::string("# nocflow graph (nocflow inspect --save): read it with --network FILE\n") +
         out.c_str() + "\n";
}

Graph read_graph_yaml(const YAML::Node& root, const std::string& origin) {
  return yaml_errors_as_input(origin, [&] { return Reader(origin).read(root); });
}

}  // namespace nocflow::optimizer
