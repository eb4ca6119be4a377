// SPDX-License-Identifier: MIT
// Operator fusion (seed 003) and batch-norm folding.
//
// fuse: from each Conv, ConvTranspose or Gemm anchor (in topological order), a depth-first walk
// along the single consumer grows the group by the pattern
//     anchor [BatchNorm] [activation] [element-wise Add/Mul/Sub/Div/PRelu tail [activation]]
// A node joins only if the previous member's output has no other consumer and is no graph
// output (the fused node has one output), and only if the group stays contractible: no path
// may leave the group and come back (checked with topological timestamps). Groups never
// overlap; each becomes one Fused node named after its anchor, also when its tail was a graph
// output (the output is then listed under the anchor's name; the tail's part keeps its own).
//
// Before growing groups, fuse takes an Add of a per-channel constant right after a bias-free
// anchor (ONNX MatMul + Add, as PyTorch exports a Linear layer on a 3-D tensor) into the anchor
// as its bias, as a Gemm with a bias is imported: a bias costs no vector ops, where a fused Add
// (a tail) would be applied to the whole block by every INPP member.
//
// bnfold: a BatchNorm whose input is such an anchor used only by it is folded into that
// operator's weights and bias (inference).
#include "optimizer/passes/fusion.h"

#include <algorithm>
#include <unordered_set>

#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {

std::vector<std::size_t> topological_timestamps(const Graph& g) {
  const auto order = g.topological_order();
  std::size_t max_id = 0;
  for (NodeId id : order) max_id = std::max<std::size_t>(max_id, id);
  std::vector<std::size_t> ts(max_id + 1, 0);
  for (std::size_t i = 0; i < order.size(); ++i) ts[order[i]] = i;
  return ts;
}

bool fusion_creates_cycle(const Graph& g, const std::vector<NodeId>& group,
                          const std::vector<std::size_t>& ts) {
  const std::unordered_set<NodeId> members(group.begin(), group.end());
  std::size_t earliest = ts[group.front()];
  for (NodeId m : group) earliest = std::min(earliest, ts[m]);
  // Walk backwards from every external producer of a member; only nodes later than the
  // earliest member can lie on a path that starts inside the group.
  std::vector<NodeId> stack;
  std::unordered_set<NodeId> visited;
  for (NodeId m : group)
    for (NodeId in : g.inputs(m))
      if (!members.count(in) && ts[in] > earliest && visited.insert(in).second) stack.push_back(in);
  while (!stack.empty()) {
    const NodeId at = stack.back();
    stack.pop_back();
    for (NodeId in : g.inputs(at)) {
      if (members.count(in)) return true;
      if (ts[in] > earliest && visited.insert(in).second) stack.push_back(in);
    }
  }
  return false;
}

namespace {

enum class Stage { Anchor, Norm, Act, Tail, TailAct };

bool is_anchor(OpKind k) {
  return k == OpKind::Conv || k == OpKind::ConvTranspose || k == OpKind::Gemm;
}
/// The axis of an anchor's output channels: a Gemm's last, a convolution's 1.
std::size_t channel_axis(const Node& anchor) {
  return anchor.kind == OpKind::Gemm ? anchor.output.shape.size() - 1 : 1;
}
bool is_tail(OpKind k) {
  return k == OpKind::Add || k == OpKind::Mul || k == OpKind::Sub || k == OpKind::Div ||
         k == OpKind::PRelu;
}

/// The stage `next` would put the group in, or nullopt if it cannot follow `stage`.
std::optional<Stage> advance(Stage stage, OpKind next) {
  if (next == OpKind::BatchNorm && stage == Stage::Anchor) return Stage::Norm;
  if (op_info(next).activation && (stage == Stage::Anchor || stage == Stage::Norm))
    return Stage::Act;
  if (is_tail(next) && stage != Stage::Tail && stage != Stage::TailAct) return Stage::Tail;
  if (op_info(next).activation && stage == Stage::Tail) return Stage::TailAct;
  return std::nullopt;
}

class Fusion final : public Pass {
 public:
  std::string_view name() const override { return "fuse"; }
  std::string_view description() const override {
    return "fuse conv/gemm + batch norm + activation + element-wise tail";
  }

  bool run(Graph& g) override {
    bool changed = false;
    for (NodeId id : g.topological_order())
      if (g.node(id).kind == OpKind::Add) changed = take_bias(g, id) || changed;
    // Computed once: a fused node takes its last member's place, which keeps the order
    // topological (only the last member has readers outside the group; every member's other
    // producers come before it).
    std::vector<std::size_t> ts = topological_timestamps(g);
    for (NodeId anchor : g.topological_order()) {
      if (!g.contains(anchor) || !is_anchor(g.node(anchor).kind)) continue;
      std::vector<NodeId> group = grow(g, anchor, ts);
      if (group.size() < 2) continue;
      const NodeId fused = contract(g, group);
      if (fused >= ts.size()) ts.resize(fused + 1);
      ts[fused] = ts[group.back()];
      changed = true;
    }
    return changed;
  }

 private:
  /// Add `id` of an anchor without a bias, its only reader, and a trainable constant of one
  /// value per output channel (shape [K] after a Gemm, [K, 1, 1] after a convolution, leading
  /// 1s allowed) becomes the anchor's bias.
  static bool take_bias(Graph& g, NodeId id) {
    const std::vector<NodeId> ins = g.inputs(id);
    for (int side = 0; side < 2; ++side) {
      const NodeId anchor = ins[static_cast<std::size_t>(side)];
      const NodeId bias = ins[static_cast<std::size_t>(1 - side)];
      Node& p = g.node(anchor);
      const Node& k = g.node(bias);
      // A parameter (trainable: an ONNX Constant node's value is not one, and would then be
      // counted as one) that only this Add reads (a bias shared by several layers is counted
      // once, at its first reader).
      if (!is_anchor(p.kind) || p.attrs.bias || g.num_uses(anchor) != 1 || g.is_output(anchor) ||
          k.kind != OpKind::Constant || !k.attrs.trainable || g.num_uses(bias) != 1 ||
          g.is_output(bias) || g.node(id).output.shape != p.output.shape)
        continue;
      const Shape& out = p.output.shape;
      const std::size_t channel = channel_axis(p);
      const Shape& b = k.output.shape;
      // Aligned to the right against the output (broadcasting), b must reach the channel axis
      // and hold K there and 1 everywhere else.
      bool per_channel =
          out.size() > channel && b.size() <= out.size() && b.size() >= out.size() - channel;
      for (std::size_t i = 0; per_channel && i < b.size(); ++i) {
        const std::size_t axis = out.size() - b.size() + i;
        per_channel = b[i] == (axis == channel ? out[channel] : 1);
      }
      if (!per_channel) continue;
      p.attrs.bias = true;
      if (!p.attrs.weights.empty()) p.attrs.weights += "|" + k.name;
      g.replace_all_uses(id, anchor);
      g.remove_node(id);
      g.remove_node(bias);  // now the anchor's
      return true;
    }
    return false;
  }

  static std::vector<NodeId> grow(const Graph& g, NodeId anchor, const std::vector<std::size_t>& ts) {
    std::vector<NodeId> group{anchor};
    Stage stage = Stage::Anchor;
    NodeId last = anchor;
    while (true) {
      if (g.is_output(last) || g.num_uses(last) != 1) break;
      const Use use = g.uses(last).front();
      const Node& next = g.node(use.node);
      auto to = advance(stage, next.kind);
      if (!to) break;
      group.push_back(use.node);
      if (fusion_creates_cycle(g, group, ts)) {
        group.pop_back();
        break;
      }
      stage = *to;
      last = use.node;
    }
    return group;
  }

  /// Replaces the chain `group` by one Fused node named after the anchor; returns its id.
  static NodeId contract(Graph& g, const std::vector<NodeId>& group) {
    Node fused;
    fused.kind = OpKind::Fused;
    std::vector<NodeId> inputs;
    for (std::size_t i = 0; i < group.size(); ++i) {
      const Node& m = g.node(group[i]);
      FusedPart part;
      part.name = m.name;
      part.kind = m.kind;
      part.attrs = m.attrs;
      part.chain_input = i == 0 ? 0 : -1;
      const auto ins = g.inputs(group[i]);
      for (std::size_t k = 0; k < ins.size(); ++k) {
        if (i > 0 && ins[k] == group[i - 1] && part.chain_input < 0) {
          part.chain_input = static_cast<int>(k);
          continue;
        }
        inputs.push_back(ins[k]);
        ++part.num_inputs;
      }
      fused.attrs.parts.push_back(std::move(part));
    }
    const std::string anchor_name = g.node(group.front()).name;
    fused.name = g.unique_name(anchor_name + ".fused");
    const NodeId id = g.add_node(std::move(fused), inputs);
    g.replace_all_uses(group.back(), id);
    for (NodeId m : group) g.remove_node(m);
    g.rename(id, anchor_name);
    return id;
  }
};

class BatchNormFolding final : public Pass {
 public:
  std::string_view name() const override { return "bnfold"; }
  std::string_view description() const override {
    return "fold batch norm into the preceding conv/gemm";
  }

  bool run(Graph& g) override {
    bool changed = false;
    for (NodeId id : g.topological_order()) {
      if (g.node(id).kind != OpKind::BatchNorm) continue;
      const NodeId producer = g.input(id, 0);
      Node& p = g.node(producer);
      // A batch norm scales axis 1: only an anchor whose output channels are there folds it (a
      // Gemm of rank 3 has its features last; the norm's scale varies across its rows).
      if (!is_anchor(p.kind) || g.num_uses(producer) != 1 || g.is_output(producer) ||
          channel_axis(p) != 1)
        continue;
      p.attrs.bias = true;  // the scale goes into the weights, the shift into the bias
      // ... so the folded weights are the batch norm's as well: two convolutions reading one
      // initializer differ once each has folded its own (CSE, parameter sharing).
      if (!p.attrs.weights.empty()) {
        const Node& bn = g.node(id);
        p.attrs.weights += "|" + (bn.attrs.weights.empty() ? bn.name : bn.attrs.weights);
      }
      g.replace_all_uses(id, producer);
      g.remove_node(id);
      changed = true;
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_fusion() { return std::make_unique<Fusion>(); }
std::unique_ptr<Pass> make_batchnorm_folding() { return std::make_unique<BatchNormFolding>(); }

}  // namespace nocflow::optimizer
