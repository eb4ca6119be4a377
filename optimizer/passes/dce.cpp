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
    std::vector<bool> live;
    std::vector<NodeId> worklist(g.outputs().begin(), g.outputs().end());
    auto mark = [&](NodeId id) {
      if (id >= live.size()) live.resize(id + 1, false);
      if (live[id]) return false;
      live[id] = true;
      return true;
    };
    for (NodeId o : g.outputs()) mark(o);
    for (NodeId id : g.node_ids())
      if (g.node(id).kind == OpKind::WeightUpdate && mark(id)) worklist.push_back(id);
    while (!worklist.empty()) {
      const NodeId id = worklist.back();
      worklist.pop_back();
      for (NodeId in : g.inputs(id))
        if (mark(in)) worklist.push_back(in);
    }
    bool changed = false;
    for (NodeId id : g.node_ids()) {
      if ((id < live.size() && live[id]) || g.node(id).kind == OpKind::Input) continue;
      g.remove_node(id);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_dce() { return std::make_unique<Dce>(); }

}  // namespace nocflow::optimizer
