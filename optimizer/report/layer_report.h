// SPDX-License-Identifier: MIT
#pragma once
// Human and machine views of a shape-inferred graph: the per-layer table, JSON and Graphviz.
#include <string>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// Per-layer table (operator, input and output shapes, MACs, parameters, weight and activation
/// bytes, legal partition dimensions) in topological order, with totals. Input and Constant
/// nodes are not layers and are not listed.
std::string layer_table(const Graph& graph);

/// JSON: network, total_macs, total_params, total_weight_bytes, total_activation_bytes,
/// num_layers, layers[{name, op, inputs, input_shapes, output_shape, macs, params,
/// weight_bytes, input_bytes, output_bytes, partition_dims}], outputs.
std::string graph_json(const Graph& graph);

/// Graphviz dot, one box per layer labelled with operator and output shape.
std::string graph_dot(const Graph& graph);

}  // namespace nocflow::optimizer
