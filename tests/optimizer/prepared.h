// SPDX-License-Identifier: MIT
#pragma once
// A zoo network as the optimizer's tests take it: batch 1, 2-byte elements, default passes.
#include <string>

#include "optimizer/frontend/zoo.h"
#include "optimizer/passes/pass_manager.h"

namespace nocflow::optimizer {

inline Graph prepared(const std::string& name) {
  Graph g = zoo_network(name, {1, 2});
  PassManager(parse_pass_list("default")).run(g);
  return g;
}

}  // namespace nocflow::optimizer
