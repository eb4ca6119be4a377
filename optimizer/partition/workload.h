// SPDX-License-Identifier: MIT
#pragma once
// The optimizer's view of a shape-inferred graph: its layers (every node but Input and
// Constant, in topological order) and the layer-to-layer edges along which activations flow.
// Data nodes (network inputs, constants) are assumed to sit wherever they are needed: edges
// from them are not part of the problem.
#include <string>
#include <vector>

#include "optimizer/graph/graph.h"
#include "optimizer/partition/box.h"
#include "optimizer/partition/part_dim.h"

namespace nocflow::optimizer {

struct Layer {
  NodeId id = 0;
  std::string name;
  std::string op;                 ///< "Conv" or "Conv+Relu"
  Dims4 out{1, 1, 1, 1};          ///< output tensor as N×C×H×W (view4)
  std::int64_t reduction = 1;     ///< size of the INPP dimension (input channels per group)
  std::int64_t macs = 0;
  std::int64_t vector_ops = 0;
  /// Of vector_ops, those of a fused layer's parts after its head (batch norm, activations,
  /// element-wise tail): under INPP every member applies them to the whole reduced block.
  std::int64_t tail_vector_ops = 0;
  std::int64_t weight_bytes = 0;
  /// Of weight_bytes, those a fused layer's tail holds (an unfolded BatchNorm's scale and shift,
  /// PRelu slopes): split by OUTP like the rest, but whole in every INPP member.
  std::int64_t tail_weight_bytes = 0;
  bool weights_like_output = false;  ///< WeightUpdate: weights and state split like its output
  /// Gather of a constant table: holds its share but reads only the rows its indices pick, as
  /// many bytes as its output (pe_work's SRAM traffic).
  bool lookup = false;
  /// One input slot: the bytes the whole layer reads of it (0 for a constant; a 1×1 stride-2
  /// convolution reads a quarter of its input, a Slice its slice) and the partition dimensions that
  /// split what each PE reads of it: those along which half the output needs less of it
  /// (input_region). A convolution's input is not split by OUTP, a depthwise one's and a fused
  /// residual's are; a MatMul's second operand is not split by OFMP_H.
  struct Input {
    std::int64_t bytes = 0;
    PartDimSet splits;
    /// A fixed constant's bytes (holds_fixed_data: a mask), split as an input is but held with
    /// the weights: preloaded, never sent (layer_shares).
    std::int64_t held_bytes = 0;
    int elem_bytes = 4;  ///< of the tensor read: bytes and held_bytes are whole elements of it
  };
  std::vector<Input> inputs;  ///< by input slot
  /// Activations read from other layers and network inputs.
  std::int64_t input_bytes() const {
    std::int64_t sum = 0;
    for (const Input& in : inputs) sum += in.bytes;
    return sum;
  }
  std::int64_t output_bytes = 0;
  int elem_bytes = 4;
  PartDimSet legal;
  /// Per dimension (by PartDim), the factors a choice may give it when not every divisor of its
  /// size will do (relayouts: partition/relayout.h); empty: every divisor.
  std::array<std::vector<std::int64_t>, 5> factors;
  /// Spatial window of the layer's first windowed operator (conv, pool), for η_halo.
  std::array<std::int64_t, 2> kernel{1, 1};
  /// The MAC array's mapping (pe_model.h): the output axis on its rows (output channels; a
  /// Gemm's or MatMul's features, its last axis: view W beyond rank 3) and
  /// the reduction elements per unit of `reduction` beyond the kernel window. A weight
  /// gradient puts the forward output channels (view axis N) on the rows and sums over the
  /// batch (`reduction`, split by INPP) times the positions of each sample.
  int array_rows_axis = kC;
  std::int64_t reduction_span = 1;
  std::array<std::int64_t, 2> stride{1, 1};
};

/// Producer layer `src` feeds input slot `input` of consumer layer `dst` (indices into layers).
struct LayerEdge {
  int src = 0;
  int dst = 0;
  int input = 0;
};

struct Workload {
  const Graph* graph = nullptr;  ///< not owned; must outlive the workload
  std::vector<Layer> layers;     ///< topological order
  std::vector<LayerEdge> edges;  ///< ordered by (dst, input)
};

/// Throws InputError if the graph has no layer.
Workload build_workload(const Graph& graph);

/// The layers' output bytes, summed (what a plan records it was priced for).
std::int64_t activation_bytes(const Workload& workload);

}  // namespace nocflow::optimizer
