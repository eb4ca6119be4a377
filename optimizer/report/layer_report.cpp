// SPDX-License-Identifier: MIT
#include "optimizer/report/layer_report.h"

#include <cstdio>
#include <nlohmann/json.hpp>

#include "noc/base/format.h"
#include "optimizer/graph/op_cost.h"

namespace nocflow::optimizer {
namespace {

/// "1.23 G", "45.6 M", "7.8 k", "12"
std::string si(std::int64_t v) {
  char buf[32];
  const double d = static_cast<double>(v);
  if (v >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.3f G", d / 1e9);
  else if (v >= 1'000'000) std::snprintf(buf, sizeof buf, "%.3f M", d / 1e6);
  else if (v >= 10'000) std::snprintf(buf, sizeof buf, "%.1f k", d / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  return buf;
}

std::string input_shapes(const Graph& g, NodeId id) {
  std::string out;
  for (NodeId in : g.inputs(id))
    if (g.node(in).kind != OpKind::Constant)
      out += (out.empty() ? "" : " ") + shape_str(g.node(in).output.shape);
  return out.empty() ? "-" : out;
}

}  // namespace

std::string layer_table(const Graph& g) {
  std::string out = "network " + g.name() + "\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-34s %-22s %-22s %-18s %12s %12s %12s %12s  %s\n", "layer",
                "op", "input shape", "output shape", "MACs", "params", "weights (B)",
                "output (B)", "partition dims");
  out += line;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    const OpCost c = op_cost(g, id);
    std::snprintf(line, sizeof line, "%-34s %-22s %-22s %-18s %12s %12s %12s %12s  %s\n",
                  n.name.c_str(), n.op_label().c_str(), input_shapes(g, id).c_str(),
                  shape_str(n.output.shape).c_str(), si(c.macs).c_str(), si(c.params).c_str(),
                  si(c.weight_bytes).c_str(), si(c.output_bytes).c_str(),
                  legal_part_dims(g, id).str().c_str());
    out += line;
  }
  const GraphTotals t = graph_totals(g);
  std::snprintf(line, sizeof line,
                "total: %zu layers, %s MACs (%lld), %s params (%lld), %s weight bytes, "
                "%s activation bytes (sum of layer outputs)\n",
                t.layers, si(t.macs).c_str(), static_cast<long long>(t.macs), si(t.params).c_str(),
                static_cast<long long>(t.params), si(t.weight_bytes).c_str(),
                si(t.activation_bytes).c_str());
  return out + line;
}

std::string graph_json(const Graph& g) {
  using nlohmann::json;
  const GraphTotals t = graph_totals(g);
  json layers = json::array();
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    const OpCost c = op_cost(g, id);
    json inputs = json::array(), shapes = json::array(), dims = json::array();
    for (NodeId in : g.inputs(id)) {
      inputs.push_back(g.node(in).name);
      shapes.push_back(g.node(in).output.shape);
    }
    const PartDimSet legal = legal_part_dims(g, id);
    for (PartDim d : kAllPartDims)
      if (legal.contains(d)) dims.push_back(std::string(to_string(d)));
    layers.push_back({{"name", n.name}, {"op", n.op_label()}, {"inputs", inputs},
                      {"input_shapes", shapes}, {"output_shape", n.output.shape},
                      {"macs", c.macs}, {"vector_ops", c.vector_ops}, {"params", c.params},
                      {"weight_bytes", c.weight_bytes}, {"input_bytes", c.input_bytes},
                      {"output_bytes", c.output_bytes}, {"partition_dims", dims}});
  }
  json outputs = json::array();
  for (NodeId o : g.outputs()) outputs.push_back(g.node(o).name);
  json j = {{"network", g.name()},       {"total_macs", t.macs},
            {"total_params", t.params},  {"total_weight_bytes", t.weight_bytes},
            {"total_activation_bytes", t.activation_bytes},
            {"num_layers", t.layers},    {"layers", layers},
            {"outputs", outputs}};
  return j.dump(2) + "\n";
}

std::string graph_dot(const Graph& g) {
  std::string out = "digraph " + dot_string(g.name()) +
                    " {\n  rankdir=TB;\n  node [shape=box, fontname=\"Helvetica\", fontsize=10];\n";
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    const std::string style = n.kind == OpKind::Input ? ", style=filled, fillcolor=\"#e9ecef\""
                              : n.kind == OpKind::Constant ? ", shape=note"
                              : n.kind == OpKind::Fused ? ", style=filled, fillcolor=\"#a5d8ff\"" : "";
    out += "  n" + std::to_string(id) +
           " [label=" + dot_string(n.name + "\n" + n.op_label() + " " + shape_str(n.output.shape)) +
           style + "];\n";
    for (NodeId in : g.inputs(id)) out += "  n" + std::to_string(in) + " -> n" + std::to_string(id) + ";\n";
  }
  return out + "}\n";
}

}  // namespace nocflow::optimizer
