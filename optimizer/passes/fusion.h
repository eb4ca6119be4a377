// SPDX-License-Identifier: MIT
#pragma once
// Helpers of the fusion pass, exposed for tests.
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

/// Topological timestamps: ts[id] = position of node id in graph.topological_order(), so that
/// every producer's timestamp is smaller than its consumers' (S2Train, seed 003).
std::vector<std::size_t> topological_timestamps(const Graph& graph);

/// True if contracting `group` into one node would close a cycle, i.e. some path leaves the
/// group and comes back into it. Uses the timestamps to search only nodes later than the
/// group's earliest member.
bool fusion_creates_cycle(const Graph& graph, const std::vector<NodeId>& group,
                          const std::vector<std::size_t>& ts);

}  // namespace nocflow::optimizer
