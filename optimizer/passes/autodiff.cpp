// SPDX-License-Identifier: MIT
#include "optimizer/passes/autodiff.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer {
namespace {

bool has_own_params(const Node& n) {
  switch (n.kind) {
    case OpKind::Conv:
    case OpKind::ConvTranspose:
    case OpKind::Gemm:
    case OpKind::BatchNorm:
    case OpKind::LayerNorm:
      return true;
    case OpKind::Constant:
      return n.attrs.trainable;
    default:
      return false;
  }
}

std::size_t axis_index(std::int64_t axis, std::size_t rank) {
  return static_cast<std::size_t>(axis < 0 ? axis + static_cast<std::int64_t>(rank) : axis);
}

/// `shape` with every axis but those in [from, to) set to 1 (per-channel parameter gradients).
Shape keep_axes(const Shape& shape, std::size_t from, std::size_t to) {
  Shape s(shape.size(), 1);
  for (std::size_t i = from; i < to && i < shape.size(); ++i) s[i] = shape[i];
  return s;
}

class Autodiff {
 public:
  Autodiff(const Graph& forward, const TrainingOptions& o)
      : g_(forward), options_(o), owners_(forward) {}

  Graph run() {
    const std::vector<NodeId> order = g_.topological_order();
    bool any_params = false;
    for (NodeId id : order) {
      const Node& n = g_.node(id);
      if (n.kind == OpKind::Fused)
        throw InputError("--train: layer '" + n.name +
                         "' is fused: the graph was fused before training (a graph file that "
                         "`inspect --save` wrote after the default passes holds fused layers); "
                         "train the original network, or one saved with --passes none");
      bool needs = has_own_params(n);
      any_params = any_params || needs;
      for (NodeId in : g_.inputs(id)) needs = needs || needs_grad_[in];
      needs_grad_[id] = needs && !n.output.value;  // shape arithmetic has no gradient
      if (has_own_params(n)) ++sharers_[owners_(id)];
    }
    if (!any_params)
      throw InputError("autodiff: network '" + g_.name() + "' has no learned parameters to train");
    for (NodeId out : g_.outputs())
      if (needs_grad_[out])
        grads_[out].push_back(add(OpKind::LossGrad, g_.node(out).name + ".loss_grad", {}, {out}));
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      auto found = grads_.find(*it);
      if (found == grads_.end()) continue;  // no path to the loss
      backward(*it, sum(*it, found->second));
    }
    // Parameters several layers share: their gradients summed, one update (owners in node order).
    for (auto& [owner, dws] : shared_dw_)
      update_now(owner, sum(owner, dws));
    g_.set_outputs(updates_);
    infer_shapes(g_);
    return std::move(g_);
  }

 private:
  // References into the graph: valid only until the next add().
  const Node& node(NodeId id) const { return g_.node(id); }
  const Shape& shape(NodeId id) const { return g_.node(id).output.shape; }

  NodeId add(OpKind kind, const std::string& name, OpAttrs attrs,
             const std::vector<NodeId>& inputs) {
    Node n;
    n.name = g_.unique_name(name);
    n.kind = kind;
    n.attrs = std::move(attrs);
    std::vector<const Tensor*> in;
    for (NodeId i : inputs) in.push_back(&g_.node(i).output);
    try {
      n.output = infer_output(n.kind, n.attrs, in);
    } catch (const InputError& e) {
      throw InputError("autodiff: " + n.name + " (" + std::string(op_name(kind)) +
                       "): " + e.what());
    }
    return g_.add_node(std::move(n), inputs);
  }

  NodeId sum(NodeId tensor, const std::vector<NodeId>& grads) {
    NodeId total = grads.front();
    for (std::size_t i = 1; i < grads.size(); ++i)
      total = add(OpKind::Add, node(tensor).name + ".gradsum", {}, {total, grads[i]});
    return total;
  }

  void contribute(NodeId tensor, NodeId grad) { grads_[tensor].push_back(grad); }

  /// The update of `fwd`'s parameters by `dw`, or its share of one if other layers hold them too.
  void update(NodeId fwd, NodeId dw) {
    const NodeId owner = owners_(fwd);
    if (sharers_[owner] > 1)
      shared_dw_[owner].push_back(dw);
    else
      update_now(fwd, dw);
  }

  void update_now(NodeId fwd, NodeId dw) {
    OpAttrs a;
    a.params = own_cost(g_, fwd).params;
    a.optimizer = options_.optimizer;
    updates_.push_back(add(OpKind::WeightUpdate, node(fwd).name + ".update", a, {dw}));
  }

  /// A Grad node of `fwd` for input `input`, shaped like that input (summed over axes the
  /// forward operator broadcast it along; reshaped back when it had a lower rank).
  NodeId grad(NodeId fwd, int input, const std::string& name, const std::vector<NodeId>& reads) {
    const Shape want = shape(g_.input(fwd, input));  // copies: adding nodes moves them
    const std::size_t dy_rank = shape(reads.front()).size();
    OpAttrs a = node(fwd).attrs;
    a.grad_of = node(fwd).kind;
    a.grad_input = input;
    a.shape = want;
    if (want.size() < dy_rank) a.shape.insert(a.shape.begin(), dy_rank - want.size(), 1);
    const NodeId d = add(OpKind::Grad, name, a, reads);
    if (a.shape == want) return d;
    OpAttrs r;
    r.shape = want;
    return add(OpKind::Reshape, name + ".reshape", r, {d});
  }

  NodeId transpose_last_two(NodeId x, const std::string& name) {
    OpAttrs a;
    const std::size_t rank = shape(x).size();
    for (std::size_t i = 0; i < rank; ++i) a.perm.push_back(static_cast<std::int64_t>(i));
    std::swap(a.perm[rank - 1], a.perm[rank - 2]);
    return add(OpKind::Transpose, name, a, {x});
  }

  void backward(NodeId id, NodeId dy) {
    const Node n = node(id);  // a copy: adding nodes moves the graph's node storage
    const std::vector<NodeId> in = g_.inputs(id);
    std::vector<int> wanted;
    for (std::size_t i = 0; i < in.size(); ++i)
      if (needs_grad_[in[i]]) wanted.push_back(static_cast<int>(i));
    // NAME.grad for an input's gradient, NAME.wgrad for a weight's (a trainable Constant
    // operand: a MatMul's weight matrix, a PReLU's slope), as for Conv and Gemm; the operand's
    // index follows where more than one of its kind is wanted.
    auto is_weight = [&](int i) {
      const Node& x = node(in[static_cast<std::size_t>(i)]);
      return x.kind == OpKind::Constant && x.attrs.trainable;
    };
    auto name = [&](int i) {
      const auto alike = std::count_if(wanted.begin(), wanted.end(),
                                       [&](int j) { return is_weight(j) == is_weight(i); });
      return n.name + (is_weight(i) ? ".wgrad" : ".grad") + (alike > 1 ? std::to_string(i) : "");
    };
    auto wants = [&](int i) { return std::find(wanted.begin(), wanted.end(), i) != wanted.end(); };
    // An element-wise binary operator: each wanted operand's Grad, reading `reads0` or `reads1`.
    auto binary = [&](const std::vector<NodeId>& reads0, const std::vector<NodeId>& reads1) {
      for (int i : wanted) contribute(in[i], grad(id, i, name(i), i == 0 ? reads0 : reads1));
    };
    const OpAttrs& a = n.attrs;
    switch (n.kind) {
      case OpKind::Input:
        return;
      case OpKind::Constant:
        update(id, dy);
        return;
      case OpKind::Conv: {
        if (wants(0)) {
          OpAttrs d = a;
          d.shape = shape(in[0]);
          contribute(in[0], add(OpKind::ConvGradInput, name(0), d, {dy}));
        }
        update(id, add(OpKind::ConvGradWeight, n.name + ".wgrad", a, {in[0], dy}));
        return;
      }
      case OpKind::ConvTranspose: {
        if (wants(0)) {  // dX: dY convolved with the same weights
          OpAttrs d = a;
          d.shape = shape(in[0]);
          contribute(in[0], add(OpKind::ConvTransposeGradInput, name(0), d, {dy}));
        }
        // dW: the weight gradient of the convolution from dY's space to X's, which the weights
        // (C × K/groups × kh × kw) are the kernel of; the bias gradient sums dY, its input 0
        // here (grad_of tells op_cost)
        OpAttrs w = a;
        w.out_channels = shape(in[0])[1];
        w.in_channels = a.out_channels;
        w.grad_of = OpKind::ConvTranspose;
        w.output_padding = {0, 0};
        update(id, add(OpKind::ConvGradWeight, n.name + ".wgrad", w, {dy, in[0]}));
        return;
      }
      case OpKind::Gemm: {
        if (wants(0)) {
          OpAttrs d = a;
          d.in_channels = shape(in[0]).back();
          contribute(in[0], add(OpKind::GemmGradInput, name(0), d, {dy}));
        }
        update(id, add(OpKind::GemmGradWeight, n.name + ".wgrad", a, {in[0], dy}));
        return;
      }
      case OpKind::MatMul: {  // C = A·B: dA = dC·Bᵀ, dB = Aᵀ·dC
        const std::vector<std::int64_t> sa = shape(in[0]), sb = shape(in[1]);
        const std::size_t rank_a = sa.size(), rank_b = sb.size();
        // Batch axes (all but the last two) on which an operand of the output's rank is 1 where
        // the output is not: broadcast, so its gradient sums over them.
        auto broadcast = [&](const std::vector<std::int64_t>& s) {
          for (std::size_t k = 0; k + 2 < s.size() && s.size() == n.output.shape.size(); ++k)
            if (s[k] == 1 && n.output.shape[k] > 1) return true;
          return false;
        };
        const bool b_all_ones = rank_b > 2 && std::all_of(sb.begin(), sb.end() - 2,
                                                          [](std::int64_t v) { return v == 1; });
        if (rank_a > 2 && (rank_b == 2 || (rank_b == rank_a && b_all_ones && !broadcast(sa)))) {
          // X [.., S, D] · W [D, F] (or [1, .., 1, D, F]), W shared by every row
          if (wants(0))  // dX = dY · Wᵀ, W broadcast as in the forward operator
            contribute(in[0], add(OpKind::MatMul, name(0), {},
                                  {dy, transpose_last_two(in[1], name(0) + ".t")}));
          if (wants(1)) {  // dW = Σ over the rows of Xᵀ · dY: the rows flattened into one
            OpAttrs rows;
            rows.shape = {-1, sa.back()};
            const NodeId x = add(OpKind::Reshape, name(1) + ".x", rows, {in[0]});
            rows.shape = {-1, shape(dy).back()};
            const NodeId d = add(OpKind::Reshape, name(1) + ".dy", rows, {dy});
            NodeId dw =
                add(OpKind::MatMul, name(1), {}, {transpose_last_two(x, name(1) + ".t"), d});
            if (rank_b > 2) {  // back to W's shape, its leading ones
              OpAttrs back;
              back.shape = sb;
              dw = add(OpKind::Reshape, name(1) + ".shape", back, {dw});
            }
            contribute(in[1], dw);
          }
          return;
        }
        // The lower-rank operand (when the ranks differ) or one with a batch axis of 1 is
        // broadcast: refused where its gradient is needed (the other's follows as batched).
        const bool a_broadcast = rank_a != rank_b ? rank_a < rank_b : broadcast(sa);
        const bool b_broadcast = rank_a != rank_b ? rank_b < rank_a : broadcast(sb);
        if ((wants(0) && a_broadcast) || (wants(1) && b_broadcast)) {
          const bool first = wants(0) && a_broadcast;
          throw InputError("--train: layer '" + n.name + "' (MatMul) multiplies " + shape_str(sa) +
                           " by " + shape_str(sb) + ", broadcasting its " +
                           (first ? "first" : "second") +
                           " operand over a batch axis, which autodiff does not differentiate "
                           "yet (inference runs)");
        }
        if (wants(0))
          contribute(in[0], add(OpKind::MatMul, name(0), {},
                                {dy, transpose_last_two(in[1], name(0) + ".t")}));
        if (wants(1))
          contribute(in[1], add(OpKind::MatMul, name(1), {},
                                {transpose_last_two(in[0], name(1) + ".t"), dy}));
        return;
      }
      case OpKind::MaxPool:
      case OpKind::AvgPool:
      case OpKind::GlobalAvgPool:
      case OpKind::ReduceMean: {
        if (n.kind == OpKind::ReduceMean && !a.keepdims) {  // dY with its reduced axes back
          OpAttrs kept = a;  // the forward rule's shape with keepdims
          kept.keepdims = true;
          OpAttrs r;
          r.shape = infer_output(OpKind::ReduceMean, kept, {&g_.node(in[0]).output}).shape;
          dy = add(OpKind::Reshape, n.name + ".keepdims", r, {dy});
        }
        OpAttrs d = a;
        d.grad_of = n.kind;
        d.shape = shape(in[0]);
        std::vector<NodeId> reads{dy};
        if (n.kind == OpKind::MaxPool) reads.push_back(in[0]);  // where the maxima were
        contribute(in[0], add(OpKind::PoolGrad, name(0), d, reads));
        return;
      }
      case OpKind::Add:
      case OpKind::Sub:
        for (int i : wanted)
          contribute(in[i], (n.kind == OpKind::Add || i == 0) && shape(in[i]) == shape(id)
                                ? dy  // a residual connection: no operator
                                : grad(id, i, name(i), {dy}));
        return;
      case OpKind::Mul:  // da = dy·b, db = dy·a
        return binary({dy, in[1]}, {dy, in[0]});
      case OpKind::Div:  // da = dy/b, db = −dy·y/b
        return binary({dy, in[1]}, {dy, id, in[1]});
      case OpKind::Mod:  // da = dy, db = −dy·⌊a/b⌋
        return binary({dy}, {dy, in[0], in[1]});
      case OpKind::PRelu:  // dx = dy where x > 0, else slope·dy; dslope = Σ dy·x where x < 0
        return binary({dy, in[0], in[1]}, {dy, in[0]});
      case OpKind::Pow:  // da = dy·b·a^(b−1), db = dy·y·ln a
        return binary({dy, in[0], in[1]}, {dy, id, in[0]});
      case OpKind::Relu:
      case OpKind::Clip:
      case OpKind::Sigmoid:
      case OpKind::Tanh:
      case OpKind::Exp:
      case OpKind::Sqrt:
      case OpKind::Softmax:  // from the output
        contribute(in[0], grad(id, 0, name(0), {dy, id}));
        return;
      case OpKind::Gelu:
      case OpKind::Erf:
      case OpKind::HardSigmoid:
      case OpKind::HardSwish:
      case OpKind::LeakyRelu:
      case OpKind::BatchNorm:
      case OpKind::LayerNorm:
        if (wants(0)) contribute(in[0], grad(id, 0, name(0), {dy, in[0]}));
        if (n.kind == OpKind::BatchNorm || n.kind == OpKind::LayerNorm) {
          OpAttrs d = a;  // Σ dy·x̂ and Σ dy per parameter: the scale's and the shift's
          d.grad_of = n.kind;
          d.grad_input = 1;
          const Shape& x = shape(in[0]);
          const std::size_t from = n.kind == OpKind::BatchNorm ? 1 : axis_index(a.axis, x.size());
          d.shape = keep_axes(x, from, n.kind == OpKind::BatchNorm ? 2 : x.size());
          // The two, scale's and shift's, side by side on the leading axis (a layer norm
          // over every axis has none free: its shift's gradient is left out)
          if (from > 0 && (n.kind == OpKind::BatchNorm || a.shift)) d.shape[0] = 2;
          update(id, add(OpKind::Grad, n.name + ".wgrad", d, {dy, in[0]}));
        }
        return;
      case OpKind::Dropout:
        contribute(in[0], grad(id, 0, name(0), {dy}));
        return;
      case OpKind::Where:  // dx = dy where the condition holds, else 0; dy the other way round
        for (int i : wanted)  // the condition, booleans, has none (its Equal none either)
          if (i > 0) contribute(in[i], grad(id, i, name(i), {dy, in[0]}));
        return;
      case OpKind::Gather:  // dtable: each dy row added onto the row its index picked
        if (wants(0)) {      // the indices, integers, have none
          OpAttrs d = a;
          d.grad_of = n.kind;
          d.grad_input = 0;
          d.shape = shape(in[0]);
          contribute(in[0], add(OpKind::Grad, name(0), d, {dy, in[1]}));
        }
        return;
      case OpKind::Identity:
      case OpKind::Cast:
        contribute(in[0], dy);
        return;
      case OpKind::Concat: {
        std::int64_t offset = 0;
        const std::size_t axis = axis_index(a.axis, shape(id).size());
        for (std::size_t i = 0; i < in.size(); ++i) {
          if (wants(static_cast<int>(i))) {
            OpAttrs d;
            d.axis = static_cast<std::int64_t>(axis);
            d.offset = offset;
            d.shape = shape(in[i]);
            contribute(in[i], add(OpKind::Slice, name(static_cast<int>(i)), d, {dy}));
          }
          offset += shape(in[i])[axis];
        }
        return;
      }
      case OpKind::Resize:   // each dY value added onto the inputs it was read from
      case OpKind::Slice: {  // dY in its place along the axis, zeros around it (slice_backward)
        OpAttrs d = a;
        d.grad_of = n.kind;
        d.grad_input = 0;
        d.shape = shape(in[0]);
        contribute(in[0], add(OpKind::Grad, name(0), d, {dy}));
        return;
      }
      case OpKind::Reshape:
      case OpKind::Flatten:
      case OpKind::Squeeze:
      case OpKind::Unsqueeze: {
        OpAttrs d;
        d.shape = shape(in[0]);
        contribute(in[0], add(OpKind::Reshape, name(0), d, {dy}));
        return;
      }
      case OpKind::Transpose: {
        OpAttrs d;
        const std::size_t rank = shape(id).size();
        d.perm.assign(rank, 0);
        for (std::size_t i = 0; i < rank; ++i) {
          const auto p = a.perm.empty() ? static_cast<std::int64_t>(rank - 1 - i) : a.perm[i];
          d.perm[static_cast<std::size_t>(p)] = static_cast<std::int64_t>(i);
        }
        contribute(in[0], add(OpKind::Transpose, name(0), d, {dy}));
        return;
      }
      default:
        throw InputError("autodiff: no gradient for " + n.name + " (" +
                         std::string(op_name(n.kind)) + ")");
    }
  }

  Graph g_;
  TrainingOptions options_;
  const ParameterOwners owners_;  ///< of the forward graph's layers, all update() asks of
  std::unordered_map<NodeId, bool> needs_grad_;
  std::unordered_map<NodeId, std::vector<NodeId>> grads_;
  std::vector<NodeId> updates_;
  std::unordered_map<NodeId, int> sharers_;  ///< by parameter owner: layers holding its parameters
  std::map<NodeId, std::vector<NodeId>> shared_dw_;  ///< by owner: gradients of shared parameters
};

}  // namespace

const std::vector<std::string>& optimizer_names() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> out;
    for (const OptimizerInfo& o : optimizers()) out.emplace_back(o.name);
    return out;
  }();
  return names;
}

constexpr std::string_view kTrainingSuffix = ".train";

bool is_training_graph_name(std::string_view name) {
  return name.size() > kTrainingSuffix.size() &&
         name.substr(name.size() - kTrainingSuffix.size()) == kTrainingSuffix;
}

Graph training_graph(const Graph& forward, const TrainingOptions& options) {
  if (!find_optimizer(options.optimizer))
    throw InputError(unknown_name_message("optimizer", options.optimizer, optimizer_names()));
  Graph g = Autodiff(forward, options).run();
  g.set_name(forward.name() + std::string(kTrainingSuffix));
  return g;
}

}  // namespace nocflow::optimizer
