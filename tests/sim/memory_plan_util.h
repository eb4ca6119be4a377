// SPDX-License-Identifier: MIT
#pragma once
// What the memory-plan tests share: the 2x2 mesh and plans of chosen choices on it.
#include <string>
#include <vector>

#include "optimizer/partition/placement.h"
#include "optimizer/partition/workload.h"
#include "optimizer/plan/plan.h"
#include "sim/config/hw_loader.h"

namespace nocflow::sim {

namespace opt = optimizer;
inline const std::string kDir = std::string(NOCFLOW_SOURCE_DIR);

inline HwSpec mesh2x2() {
  return load_hw_config(kDir + "/configs/hw/mesh4x4.yaml", {"topology.rows=2", "topology.cols=2"});
}

/// A plan for a mesh: layer i of `w` under `choices[i]`, placed as optimize places it.
inline opt::Plan plan_on(const opt::PeGrid& grid, const opt::Workload& w,
                         const std::vector<std::string>& choices) {
  opt::Plan plan;
  plan.pes = grid.num_pes();
  plan.topology = "mesh " + std::to_string(grid.rows) + "x" + std::to_string(grid.cols);
  for (std::size_t i = 0; i < w.layers.size(); ++i) {
    const opt::Choice c = opt::parse_choice(choices[i], "test");
    plan.layers.push_back({w.layers[i].name, w.layers[i].op, c, opt::place(c, grid).pe, 0, 0});
  }
  return plan;
}

inline opt::Plan plan_2x2(const opt::Workload& w, const std::vector<std::string>& choices) {
  return plan_on(opt::PeGrid{true, 2, 2}, w, choices);
}

}  // namespace nocflow::sim
