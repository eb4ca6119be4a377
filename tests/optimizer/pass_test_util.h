// SPDX-License-Identifier: MIT
#pragma once
// What the pass tests ask of a graph and of a pass run's statistics.
#include <cstddef>
#include <stdexcept>
#include <string>
#include <vector>

#include "optimizer/passes/pass_manager.h"

namespace nocflow::optimizer {

inline std::size_t count(const Graph& g, OpKind k) {
  std::size_t n = 0;
  for (NodeId id : g.node_ids()) n += g.node(id).kind == k;
  return n;
}

inline const PassStat& stat(const std::vector<PassStat>& s, const std::string& pass,
                            int round = 1) {
  for (const auto& x : s)
    if (x.pass == pass && x.round == round) return x;
  throw std::runtime_error("no stat");
}

}  // namespace nocflow::optimizer
