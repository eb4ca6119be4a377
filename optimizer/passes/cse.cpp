// SPDX-License-Identifier: MIT
// Common-subexpression elimination by structural hashing (seed 002): visit nodes in
// topological order, key each by (opcode, canonical inputs, attributes) — commutative operands
// sorted — and redirect the uses of a node equal to one already seen to that one; the
// duplicates are left dead for DCE (a duplicate that is a graph output beside the value it
// duplicates stays, so that every output keeps its name). Inputs, constants whose contents are
// unknown (weights), non-deterministic operators (dropout, random generators) and their
// gradients are never merged, nor are operators whose parameters are their own (two
// convolutions of equal shape have different weights unless they name the same initializers),
// their input gradients (which read those weights) or weight updates (each writes its own).
#include <algorithm>
#include <unordered_map>

#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {
namespace {

struct Key {
  OpKind kind;
  std::vector<NodeId> inputs;
  const Node* node;

  bool operator==(const Key& o) const {
    return kind == o.kind && inputs == o.inputs && node->attrs == o.node->attrs &&
           node->output.shape == o.node->output.shape;
  }
};

struct KeyHash {
  std::size_t operator()(const Key& k) const {
    std::size_t h = static_cast<std::size_t>(k.kind) * 0x9e3779b97f4a7c15ULL;
    for (NodeId in : k.inputs) h = (h ^ in) * 0x100000001b3ULL;
    return h ^ (hash_attrs(k.node->attrs) << 1);
  }
};

/// Reads parameters of its own that are not an input: a learned operator, or the gradient of
/// one with respect to its input (which reads the same weights, named in the attributes it
/// copied: two of equal shape fed the same dY differ unless their forward operators share).
bool owns_parameters(OpKind k, const OpAttrs& a) {
  const bool learned = k == OpKind::Conv || k == OpKind::ConvTranspose || k == OpKind::Gemm ||
                       k == OpKind::BatchNorm || k == OpKind::LayerNorm;
  const bool reads_learned = k == OpKind::ConvGradInput || k == OpKind::ConvTransposeGradInput ||
                             k == OpKind::GemmGradInput ||
                             (k == OpKind::Grad && (a.grad_of == OpKind::BatchNorm ||
                                                    a.grad_of == OpKind::LayerNorm));
  return (learned || reads_learned) && a.weights.empty();
}

bool mergeable(const Node& n) {
  if (!op_info(n.kind).deterministic || n.kind == OpKind::Input) return false;
  // Each update writes its own layer's parameters, whatever gradient it reads.
  if (n.kind == OpKind::WeightUpdate) return false;
  // A dropout's gradient applies that dropout's mask, which it does not read as an input.
  if (n.kind == OpKind::Grad && !op_info(n.attrs.grad_of).deterministic) return false;
  if (owns_parameters(n.kind, n.attrs)) return false;
  for (const FusedPart& p : n.attrs.parts)
    if (owns_parameters(p.kind, p.attrs)) return false;
  if (n.kind == OpKind::Constant)
    return !n.attrs.trainable && (!n.attrs.int_data.empty() || !n.attrs.float_data.empty());
  return true;
}

class Cse final : public Pass {
 public:
  std::string_view name() const override { return "cse"; }
  std::string_view description() const override { return "merge structurally equal operators"; }

  bool run(Graph& g) override {
    std::unordered_map<Key, NodeId, KeyHash> seen;
    bool changed = false;
    for (NodeId id : g.topological_order()) {
      const Node& n = g.node(id);
      if (!mergeable(n)) continue;
      Key key{n.kind, g.inputs(id), &n};
      if (op_info(n.kind).commutative) std::sort(key.inputs.begin(), key.inputs.end());
      auto [it, inserted] = seen.emplace(key, id);
      if (inserted) continue;
      if (g.is_output(id) && g.is_output(it->second)) {
        // Two outputs of one value: an output is a node, so each keeps its own (and its name);
        // only the duplicate's uses move.
        if (g.num_uses(id) == 0) continue;
        g.replace_uses(id, it->second);
      } else {
        if (g.num_uses(id) == 0 && !g.is_output(id)) continue;
        // Rewire only: the duplicate is now dead (or gone, an output whose name the kept one
        // takes) and DCE sweeps it with whatever fed only it.
        forward_value(g, id, it->second);
      }
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_cse() { return std::make_unique<Cse>(); }

}  // namespace nocflow::optimizer
