// SPDX-License-Identifier: MIT
// The traversal; the per-operator rules are in shape_rules.cpp and shape_rules_training.cpp.
#include "optimizer/graph/shape_inference.h"

#include "noc/base/error.h"

namespace nocflow::optimizer {

void infer_shapes(Graph& graph) {
  for (NodeId id : graph.topological_order()) infer_node(graph, id);
}

void infer_node(Graph& graph, NodeId id) {
  const std::vector<NodeId> ins = graph.inputs(id);
  std::vector<const Tensor*> tensors;
  tensors.reserve(ins.size());
  for (NodeId in : ins) tensors.push_back(&graph.node(in).output);
  Node& n = graph.node(id);
  const OpInfo& info = op_info(n.kind);
  const int count = static_cast<int>(ins.size());
  if (count < info.min_inputs || (info.max_inputs >= 0 && count > info.max_inputs))
    throw InputError("node '" + n.name + "' (" + n.op_label() + "): takes " +
                     input_count_text(info.min_inputs, info.max_inputs) + " inputs, has " +
                     std::to_string(count));
  try {
    n.output = infer_output(n.kind, n.attrs, tensors);
  } catch (const InputError& e) {
    throw InputError("node '" + n.name + "' (" + n.op_label() + "): " + e.what());
  }
}

}  // namespace nocflow::optimizer
