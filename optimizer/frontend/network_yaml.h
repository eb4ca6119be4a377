// SPDX-License-Identifier: MIT
#pragma once
// Network YAML (format and examples: configs/networks/README.md). A list of layers, each taking
// the previous layer as input unless it names its inputs, so chains are short and DAGs explicit.
// A file starting with `format: nocflow-graph-1` is a saved graph instead (io/graph_file.h).
#include <string>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// Loads and shape-infers a network. Throws InputError naming file:line:col and the key for
/// unknown keys or operators, wrong value types, unknown input names and shape errors. An
/// input's leading dimension written `batch` takes `batch` (0: not given, 1).
Graph load_network_yaml(const std::string& path, std::int64_t batch = 0);
/// Same from text (`origin` names it in messages).
Graph parse_network_yaml(const std::string& text, const std::string& origin, std::int64_t batch = 0);

}  // namespace nocflow::optimizer
