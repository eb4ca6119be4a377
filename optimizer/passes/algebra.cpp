// SPDX-License-Identifier: MIT
// Algebraic simplification and reassociation (seed 002). With an operand whose every element
// is known (a constant that is not a learned parameter), x + 0, 0 + x, x − 0, x · 1, 1 · x and
// x / 1 are x, and x · 0 and 0 · x are zeros: a constant, so that what computed x may be dead
// (DCE). Chains of + and of · take one order, the operands sorted by node and added (or
// multiplied) left to right, so that (a + b) + c and a + (c + b) become one chain that CSE can
// merge. Like compilers' fast-math rewrites, these assume finite values in exact arithmetic
// (x · 0 is NaN for an infinite x; reassociating rounds differently).
#include <algorithm>
#include <optional>

#include "optimizer/passes/pass.h"

namespace nocflow::optimizer {
namespace {

/// Zeros up to this many elements are a constant with its contents; larger ones a constant of
/// unknown contents (what the cost model and the simulator see is the same: no layer).
constexpr std::int64_t kKnownZerosMax = 1 << 16;

/// The one value of every element of a constant that is not a learned parameter, if it has one
/// (zeros of unknown contents: 0).
std::optional<double> splat(const Node& n) {
  if (n.kind != OpKind::Constant || n.attrs.trainable) return std::nullopt;
  if (n.attrs.zeros) return 0.0;
  const auto one = [](const auto& v) -> std::optional<double> {
    if (v.empty() || std::any_of(v.begin(), v.end(), [&](auto x) { return x != v.front(); }))
      return std::nullopt;
    return static_cast<double>(v.front());
  };
  if (auto v = one(n.attrs.float_data)) return v;
  return one(n.attrs.int_data);
}

class Algebra final : public Pass {
 public:
  std::string_view name() const override { return "algebra"; }
  std::string_view description() const override {
    return "x + 0, x * 1 -> x; x * 0 -> zeros; chains of + and * in one order";
  }

  bool run(Graph& g) override {
    bool changed = false;
    for (NodeId id : g.topological_order()) {
      if (!g.contains(id)) continue;
      if (const std::optional<NodeId> x = neutral_operand(g, id)) {
        // An output whose operand is an output too stays: each output keeps its own name. A
        // dead one (rewritten in an earlier round, left for DCE) has nothing to move.
        if (g.is_output(id) ? g.is_output(*x) : g.num_uses(id) == 0) continue;
        forward_value(g, id, *x);  // the node is now dead (DCE) or gone
        changed = true;
      } else if (times_zero(g, id)) {
        Node& n = g.node(id);
        OpAttrs a;
        a.shape = n.output.shape;
        a.elem_bytes = n.output.elem_bytes;
        if (n.output.numel() <= kKnownZerosMax)
          a.float_data.assign(static_cast<std::size_t>(n.output.numel()), 0.0);
        a.zeros = true;  // not data a reader holds (is_fixed_data): it is nothing but zeros
        n.kind = OpKind::Constant;
        n.attrs = std::move(a);
        g.set_inputs(id, {});
        changed = true;
      }
    }
    // Chains from their last operator (a chain's inner operators have one use: the next).
    std::vector<NodeId> order = g.topological_order();
    std::reverse(order.begin(), order.end());
    std::vector<bool> done(order.empty() ? 0 : *std::max_element(order.begin(), order.end()) + 1);
    for (NodeId id : order)
      if (!done[id]) changed |= reassociate(g, id, done);
    return changed;
  }

 private:
  /// x where `id` is x + 0, 0 + x, x − 0, x · 1, 1 · x or x / 1 and has x's shape and type.
  static std::optional<NodeId> neutral_operand(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    const bool add = n.kind == OpKind::Add || n.kind == OpKind::Sub;
    if (!add && n.kind != OpKind::Mul && n.kind != OpKind::Div) return std::nullopt;
    const double neutral = add ? 0 : 1;
    const bool commutes = n.kind == OpKind::Add || n.kind == OpKind::Mul;
    for (int k : {1, 0}) {
      if (k == 0 && !commutes) break;
      const NodeId c = g.input(id, k), x = g.input(id, 1 - k);
      if (splat(g.node(c)) == neutral && g.node(x).output.shape == n.output.shape &&
          g.node(x).output.elem_bytes == n.output.elem_bytes)
        return x;
    }
    return std::nullopt;
  }

  /// `id` is x · 0 or 0 · x (zeros whatever x is), and not already a known value.
  static bool times_zero(const Graph& g, NodeId id) {
    const Node& n = g.node(id);
    if (n.kind != OpKind::Mul || n.output.value) return false;
    return splat(g.node(g.input(id, 0))) == 0.0 || splat(g.node(g.input(id, 1))) == 0.0;
  }

  /// Puts the chain of + (or ·) that ends at `id` in one order: its operands (what its
  /// operators read from outside it) sorted by node, the operators, also by node, each adding
  /// the next operand to the one before. Only operators of one shape and type, inner ones used
  /// once and not an output; two operands or fewer: nothing to reorder. Marks the chain done.
  static bool reassociate(Graph& g, NodeId last, std::vector<bool>& done) {
    const Node& root = g.node(last);
    if (root.kind != OpKind::Add && root.kind != OpKind::Mul) return false;
    std::vector<NodeId> ops, operands, stack{last};
    while (!stack.empty()) {
      const NodeId n = stack.back();
      stack.pop_back();
      ops.push_back(n);
      done[n] = true;
      for (NodeId in : g.inputs(n)) {
        const Node& m = g.node(in);
        const bool inner = m.kind == root.kind && g.num_uses(in) == 1 && !g.is_output(in) &&
                           m.output.shape == root.output.shape &&
                           m.output.elem_bytes == root.output.elem_bytes;
        if (inner) {
          stack.push_back(in);
        } else {
          operands.push_back(in);
        }
      }
    }
    if (operands.size() < 3) return false;
    // An operand broadcast to the chain's shape, or of another element size (an operator's
    // is the larger of its inputs'), would change what a partial sum is: not reordered.
    for (NodeId in : operands)
      if (g.node(in).output.shape != root.output.shape ||
          g.node(in).output.elem_bytes != root.output.elem_bytes)
        return false;
    std::sort(operands.begin(), operands.end());
    std::sort(ops.begin(), ops.end());
    ops.erase(std::find(ops.begin(), ops.end(), last));
    ops.push_back(last);  // the chain's value stays where it was used
    bool changed = false;
    NodeId sum = operands[0];
    for (std::size_t i = 0; i < ops.size(); ++i) {
      const std::vector<NodeId> want{sum, operands[i + 1]};
      if (g.inputs(ops[i]) != want) {
        g.set_inputs(ops[i], want);
        changed = true;
      }
      sum = ops[i];
    }
    return changed;
  }
};

}  // namespace

std::unique_ptr<Pass> make_algebra() {
  return std::make_unique<Algebra>();
}

}  // namespace nocflow::optimizer
