// SPDX-License-Identifier: MIT
// Dead-code elimination by mark and sweep (seed 002): the graph outputs and the operators with
// a side effect (weight updates, which write their layer's parameters) are the roots; a
// worklist marks every producer reachable backwards from them; every unmarked node except the
// network's Input nodes is removed.
#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {
namespace {

class Dce final : public Pass {
 public:
  std::string_view name() const override { return "dce"; }
  std::string_view description() const override { return "remove nodes no output depends on"; }

  bool run(Graph& g) override {
    std::vector<NodeId> roots = g.outputs();
    for (NodeId id : g.node_ids())
      if (g.node(id).kind == OpKind::WeightUpdate) roots.push_back(id);
    const std::vector<bool> live = upstream(g, std::move(roots));
    bool changed = false;
    for (NodeId id : g.node_ids()) {
      if (live[id] || g.node(id).kind == OpKind::Input) continue;
      g.remove_node(id);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dce() { return std::make_unique<Dce>(); }

}  // namespace nocflow::optimizer
