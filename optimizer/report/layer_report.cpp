// SPDX-License-Identifier: MIT
#include "optimizer/report/layer_report.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <set>
#include <vector>

#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "optimizer/graph/op_cost.h"

namespace nocflow::optimizer {
namespace {

/// A count: "12", "7.8 k", "45.600 M", "1.230 G", "4.500 T".
std::string si(std::int64_t v) {
  char buf[32];
  const double d = static_cast<double>(v);
  if (v >= 1'000'000'000'000) std::snprintf(buf, sizeof buf, "%.3f T", d / 1e12);
  else if (v >= 1'000'000'000) std::snprintf(buf, sizeof buf, "%.3f G", d / 1e9);
  else if (v >= 1'000'000) std::snprintf(buf, sizeof buf, "%.3f M", d / 1e6);
  else if (v >= 10'000) std::snprintf(buf, sizeof buf, "%.1f k", d / 1e3);
  else std::snprintf(buf, sizeof buf, "%lld", static_cast<long long>(v));
  return buf;
}

/// Bytes in binary units, as the configs write them: "448 B", "37.0 KiB", "3.06 MiB", "1.23 GiB".
std::string bytes(std::int64_t v) {
  char buf[32];
  const double d = static_cast<double>(v);
  if (v >= (std::int64_t{1} << 40)) std::snprintf(buf, sizeof buf, "%.2f TiB", d / (1LL << 40));
  else if (v >= (1 << 30)) std::snprintf(buf, sizeof buf, "%.2f GiB", d / (1 << 30));
  else if (v >= (1 << 20)) std::snprintf(buf, sizeof buf, "%.2f MiB", d / (1 << 20));
  else if (v >= (1 << 10)) std::snprintf(buf, sizeof buf, "%.1f KiB", d / (1 << 10));
  else std::snprintf(buf, sizeof buf, "%lld B", static_cast<long long>(v));
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
  // Text columns as wide as their longest cell (torchvision's layer names run to 50 characters).
  std::vector<std::array<std::string, 10>> rows = {{"layer", "op", "input shape", "output shape",
                                                    "MACs", "vector ops", "params", "weights",
                                                    "output", "partition dims"}};
  const ParameterOwners owners(g);
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    const OpCost c = op_cost(g, id, owners);
    rows.push_back({n.name, n.op_label(), input_shapes(g, id), shape_str(n.output.shape),
                    si(c.macs), si(c.vector_ops), si(c.params),
                    bytes(c.weight_bytes + fixed_input_bytes(g, id)), bytes(c.output_bytes),
                    legal_part_dims(g, id).str()});
  }
  std::array<std::size_t, 10> width{};
  for (const auto& row : rows)
    for (std::size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  std::string out = "network " + g.name() + "\n";
  for (const auto& row : rows) {
    std::string line;
    for (std::size_t i = 0; i < 4; ++i) line += row[i] + std::string(width[i] - row[i].size() + 2, ' ');
    for (std::size_t i = 4; i < 9; ++i)  // numbers right-aligned
      line += std::string(std::max<std::size_t>(width[i], 10) - row[i].size(), ' ') + row[i] + "  ";
    out += line + row[9] + "\n";
  }
  const GraphTotals t = graph_totals(g);
  const auto ids = g.node_ids();
  const bool training = std::any_of(ids.begin(), ids.end(), [&](NodeId id) {
    return g.node(id).kind == OpKind::WeightUpdate;
  });
  return out + "total: " + std::to_string(t.layers) + (t.layers == 1 ? " layer, " : " layers, ") +
         si(t.macs) + " MACs (" + std::to_string(t.macs) + "), " + si(t.vector_ops) +
         " vector ops (element-wise), " + si(t.params) + " params (" + std::to_string(t.params) +
         "), " + bytes(t.weight_bytes) +
         (training ? " of weights and optimizer state held (the forward weights once, every "
                     "input gradient's and update's copy)"
                   : " of weights") +
         (t.fixed_bytes > 0
              ? " and " + bytes(t.fixed_bytes) +
                    " of fixed constants the layers read (masks, indices: in their weights column)"
              : "") +
         ", " + bytes(t.activation_bytes) + " of activations (the layers' outputs summed" +
         (training ? "; the updates write in place" : "") + ")\n";
}

std::string graph_json(const Graph& g) {
  using nlohmann::json;
  const GraphTotals t = graph_totals(g);
  json layers = json::array();
  const ParameterOwners owners(g);
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    const OpCost c = op_cost(g, id, owners);
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
                      {"weight_bytes", c.weight_bytes}, {"fixed_bytes", fixed_input_bytes(g, id)},
                      {"input_bytes", c.input_bytes},
                      {"output_bytes", c.output_bytes}, {"partition_dims", dims}});
  }
  json outputs = json::array();
  for (NodeId o : g.outputs()) outputs.push_back(g.node(o).name);
  // The inputs' element size(s), in bytes: the byte totals and columns follow from them.
  const std::set<int> sizes = input_element_sizes(g);
  const json elem_bytes =
      sizes.size() == 1 ? json(*sizes.begin()) : json(std::vector<int>(sizes.begin(), sizes.end()));
  json j = {{"network", g.name()},
            {"elem_bytes", elem_bytes},
            {"total_macs", t.macs},
            {"total_params", t.params},
            {"total_weight_bytes", t.weight_bytes},
            {"total_activation_bytes", t.activation_bytes},
            {"total_fixed_bytes", t.fixed_bytes},
            {"num_layers", t.layers},
            {"layers", layers},
            {"outputs", outputs}};
  return json_text(j, 2) + "\n";
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
