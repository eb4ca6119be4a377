// SPDX-License-Identifier: MIT
#include "optimizer/partition/workload.h"

#include <unordered_map>

#include "noc/base/error.h"
#include "optimizer/graph/op_cost.h"

namespace nocflow::optimizer {
namespace {

bool windowed(OpKind k) { return k == OpKind::Conv || k == OpKind::MaxPool || k == OpKind::AvgPool; }

std::int64_t reduction_size(OpKind kind, const OpAttrs& a, const std::vector<const Tensor*>& in) {
  if (in.empty()) return 1;
  const Shape& s = in[0]->shape;
  if (kind == OpKind::Conv) return (s.size() > 1 ? s[1] : 1) / std::max<std::int64_t>(1, a.groups);
  if (kind == OpKind::Gemm || kind == OpKind::MatMul) return s.empty() ? 1 : s.back();
  return 1;
}

void fill_op_details(Layer& l, const Node& n, const std::vector<const Tensor*>& in) {
  if (n.kind != OpKind::Fused) {
    l.reduction = reduction_size(n.kind, n.attrs, in);
    if (windowed(n.kind)) {
      l.kernel = n.attrs.kernel;
      l.stride = n.attrs.stride;
    }
    return;
  }
  bool window_found = false;
  for (std::size_t p = 0; p < n.attrs.parts.size(); ++p) {
    const FusedPart& part = n.attrs.parts[p];
    std::vector<const Tensor*> pin;
    for (const Tensor& t : part.inputs) pin.push_back(&t);
    if (p == 0) l.reduction = reduction_size(part.kind, part.attrs, pin);
    if (!window_found && windowed(part.kind)) {
      l.kernel = part.attrs.kernel;
      l.stride = part.attrs.stride;
      window_found = true;
    }
  }
}

}  // namespace

Workload build_workload(const Graph& g) {
  Workload w;
  w.graph = &g;
  std::unordered_map<NodeId, int> index;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (!is_layer(n)) continue;
    Layer l;
    l.id = id;
    l.name = n.name;
    l.op = n.op_label();
    l.out = view4(n.output.shape);
    const OpCost c = op_cost(g, id);
    l.macs = c.macs;
    l.vector_ops = c.vector_ops;
    l.weight_bytes = c.weight_bytes;
    l.input_bytes = c.input_bytes;
    l.output_bytes = c.output_bytes;
    l.elem_bytes = n.output.elem_bytes;
    l.legal = legal_part_dims(g, id);
    std::vector<const Tensor*> in;
    for (NodeId src : g.inputs(id)) in.push_back(&g.node(src).output);
    fill_op_details(l, n, in);
    index.emplace(id, static_cast<int>(w.layers.size()));
    w.layers.push_back(std::move(l));
  }
  if (w.layers.empty()) throw InputError("network '" + g.name() + "' has no layer to partition");
  for (std::size_t dst = 0; dst < w.layers.size(); ++dst) {
    const auto inputs = g.inputs(w.layers[dst].id);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      auto it = index.find(inputs[i]);
      if (it != index.end())
        w.edges.push_back({it->second, static_cast<int>(dst), static_cast<int>(i)});
    }
  }
  return w;
}

}  // namespace nocflow::optimizer
