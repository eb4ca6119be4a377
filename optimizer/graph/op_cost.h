// SPDX-License-Identifier: MIT
#pragma once
// What one operator costs and how it may be split: MACs, element operations, parameters and
// bytes moved, and the legal partition dimensions (optimizer/partition/part_dim.h).
//
// Counting rules (the same as the published torchvision figures): MACs are the
// multiply-accumulates of Conv, Gemm and MatMul only; normalisation, activation, pooling and
// element-wise arithmetic count as `vector_ops` (approximate element operations). Parameters
// are learned values: conv/gemm weights and biases, batch-norm and layer-norm scale and shift
// (running statistics are not parameters), and trainable Constant tensors.
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "optimizer/graph/graph.h"
#include "optimizer/partition/part_dim.h"

namespace nocflow::optimizer {

struct OpCost {
  std::int64_t macs = 0;          ///< multiply-accumulates
  std::int64_t vector_ops = 0;    ///< element-wise operations
  std::int64_t params = 0;        ///< learned parameters (count)
  std::int64_t weight_bytes = 0;  ///< what the layer keeps: params × element bytes, and the
                                  ///< weights it reads (held constants, a gradient's weights)
  std::int64_t input_bytes = 0;   ///< activations read (inputs that are not Constant nodes)
  std::int64_t output_bytes = 0;  ///< the output tensor
};

/// The layer that holds each node's own parameters: where an ONNX model applies one module
/// twice, layers of one kind read the same initializers (their `weights`), and the first of them
/// in topological order counts them (op_cost's params, one WeightUpdate in training;
/// graph_totals counts them once). Built once per graph (one pass), so that a loop over the
/// graph's layers stays linear; stale once the graph's layers change.
class ParameterOwners {
 public:
  explicit ParameterOwners(const Graph& graph);
  /// The owner of `id`'s parameters: `id` itself when no earlier layer shares them, or for a
  /// node without parameters of its own (or added after this was built).
  NodeId operator()(NodeId id) const;

 private:
  std::unordered_map<NodeId, NodeId> owner_;  // only the nodes that share another's
};

/// Cost of a node of a shape-inferred graph. A layer holds the trainable Constant tensors it
/// reads (an imported bias or scale applied by Add or Mul, a MatMul's weight matrix): they
/// count in every reader's weight bytes, since each reader's PEs keep them, and in the params
/// of the first reader only (the forward operator), so that the params column sums to the total;
/// so do parameters a layer shares with its owner (ParameterOwners).
OpCost op_cost(const Graph& graph, NodeId id, const ParameterOwners& owners);
/// The same for one node; builds the owners (a pass over the graph): in a loop over the layers,
/// build ParameterOwners once and pass it.
OpCost op_cost(const Graph& graph, NodeId id);
/// The same without held Constants: what the node brings itself (a trainable Constant its own
/// tensor), so that summed over a graph every parameter counts once (graph_totals).
OpCost own_cost(const Graph& graph, NodeId id);
/// Cost of one operator given its input tensors and output (used for fused parts too).
OpCost op_cost(OpKind kind, const OpAttrs& attrs, const std::vector<const Tensor*>& inputs,
               const Tensor& output);

/// Partition dimensions along which the node can be split without changing its arithmetic
/// (INPP: its reduction can be split, leaving partial sums). A dimension whose axis has size 1
/// is not legal; a Reshape, Flatten or Transpose splits where some factor's blocks copy only
/// their own elements (partition/relayout.h).
PartDimSet legal_part_dims(const Graph& graph, NodeId id);
PartDimSet legal_part_dims(OpKind kind, const OpAttrs& attrs,
                           const std::vector<const Tensor*>& inputs, const Tensor& output);

/// The optimizer of a WeightUpdate: element operations and state tensors per parameter.
struct OptimizerInfo {
  std::string_view name;
  int ops_per_param = 0;
  int states = 0;
};
/// sgd (2 ops, no state), momentum (4, 1), adam (11, 2).
const std::vector<OptimizerInfo>& optimizers();
/// nullptr for an unknown name.
const OptimizerInfo* find_optimizer(std::string_view name);

/// Input and Constant nodes are data, not layers.
bool is_layer(const Node& node);
/// A Constant that is not learned and that a layer reading it as values (holds_fixed_data)
/// holds as data: a fixed table of more than one element, whatever its type (Swin's attention
/// mask, a causal mask, a Where's condition, a Gather's indices). Not a parameter, so not in
/// op_cost: the layer holds the slice of it that its block reads, preloaded as weights are
/// (Layer::Input::held_bytes). A single value is an immediate of the operation, as Clip's bounds
/// are attributes. Zeros (OpAttrs::zeros: an Expand's broadcast Add's, x · 0 simplified) are
/// nothing to hold.
bool is_fixed_data(const Node& node);
/// Whether `kind` reads its input `input` as a shape, axes or sizes, like an attribute (a
/// Reshape's target, Squeeze's and Unsqueeze's axes, an Expand's shape, a Resize's sizes, an
/// ONNX Slice's starts and ends before folding) rather than as values. A fused layer's parts
/// read values only.
bool is_shape_operand(OpKind kind, int input);
/// Whether layer `reader` holds its input `input` as fixed data: a fixed constant
/// (is_fixed_data) that it reads as values (not is_shape_operand).
bool holds_fixed_data(const Graph& graph, NodeId reader, int input);

struct GraphTotals {
  std::int64_t macs = 0;
  std::int64_t vector_ops = 0;
  std::int64_t params = 0;
  std::int64_t weight_bytes = 0;
  std::int64_t activation_bytes = 0;  ///< sum of layer output bytes
  std::int64_t fixed_bytes = 0;       ///< the fixed constants layers hold (holds_fixed_data), once each
  std::size_t layers = 0;
};
GraphTotals graph_totals(const Graph& graph);

/// Bytes of the fixed constants that layer `id` holds (holds_fixed_data): what it holds besides
/// its weights, whole (a PE holds the part its block reads).
std::int64_t fixed_input_bytes(const Graph& graph, NodeId id);

}  // namespace nocflow::optimizer
