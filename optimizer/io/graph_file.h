// SPDX-License-Identifier: MIT
#pragma once
// The graph IR as a file: every node with its operator, inputs, non-default attributes (fused
// nodes with their parts) and output shape, so that a graph after passes or autodiff is saved
// (`nocflow inspect --save FILE`) and read back wherever a network is (`--network FILE`). A
// YAML file is one when it starts with `format: nocflow-graph-1`; the other keys are
// documented in configs/networks/README.md ("Graph files").
#include <yaml-cpp/yaml.h>

#include <string>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

inline constexpr const char* kGraphFormat = "nocflow-graph-1";

/// The graph as YAML, nodes in topological order.
std::string graph_yaml(const Graph& graph);

/// Reads what graph_yaml wrote (`origin` names the file in messages). Shape inference runs again
/// and must give every node the output the file records. Throws InputError naming file:line:col
/// and key for unknown keys or operators, wrong types, unknown inputs and shape mismatches.
Graph read_graph_yaml(const YAML::Node& root, const std::string& origin);

}  // namespace nocflow::optimizer
