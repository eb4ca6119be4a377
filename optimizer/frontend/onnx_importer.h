// SPDX-License-Identifier: MIT
#pragma once
// The ONNX importer, shared by onnx_import.cpp (graph inputs, constants, values, the check
// against ONNX's shapes) and onnx_import_ops.cpp (one rule per ONNX operator). Everyone else
// calls import_onnx (onnx_import.h).
#include <onnx/onnx_pb.h>

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer::onnx_import_detail {

/// Bytes per element of an ONNX data type; 0 for one without a fixed size (UNDEFINED, STRING)
/// or unknown to this ONNX version.
int elem_bytes_of(int dtype);

/// Constants of more elements are never read (only their shapes), nor kept in the graph.
inline constexpr std::int64_t kMaxInlineElements = 4096;
/// Compile-time tensors computed while importing (an attention mask) keep their values up to
/// this many elements; a larger result keeps only its shape.
inline constexpr std::int64_t kMaxFoldElements = std::int64_t{1} << 20;
/// All the values computed while importing, summed: a model of many folded tensors (each within
/// kMaxFoldElements) is refused rather than held in memory without bound.
inline constexpr std::int64_t kMaxFoldedTotal = std::int64_t{1} << 24;

/// A compile-time tensor: an initializer, a Constant node's value or one computed from them
/// while importing. Contents are read only for small tensors stored inline; integer and
/// boolean values are in `ints`, floating-point ones in `floats`.
struct ConstInfo {
  Shape dims;
  int dtype = onnx::TensorProto::FLOAT;
  bool from_initializer = false;
  std::vector<std::int64_t> ints;
  std::vector<double> floats;
  std::optional<NodeId> node;  ///< materialised Constant node, once an operator needs one
};

ConstInfo const_from(const onnx::TensorProto& t, bool initializer);

/// Whether values of ONNX type `dtype` are held in ConstInfo::floats (else in ints).
bool is_floating(int dtype);
/// Whether every value of `c` is known and it is not a learned parameter: what folding reads.
bool foldable(const ConstInfo& c);

class Importer {
 public:
  /// `float_bytes` > 0: floating-point tensors take this many bytes, not their type's.
  Importer(std::string path, onnx::ModelProto& model, int float_bytes = 0);

  /// The graph, shape-inferred by nocflow's rules (ONNX's own inference is not needed).
  Graph build();

  /// Compares `graph` (what build() returned) with the shapes ONNX inference recorded.
  void check_against_onnx(const Graph& graph) const;

 private:
  [[noreturn]] void fail(const onnx::NodeProto& n, const std::string& what) const;
  static std::string label(const onnx::NodeProto& n);
  /// The layer of a Split's output `i`: "NAME_i" for a named node, else the output tensor's own
  /// name (an unnamed Split into a and b gave layers a_0 and a_1: b named none).
  static std::string split_part_name(const onnx::NodeProto& n, int i);

  void add_input(const onnx::ValueInfoProto& in);
  /// The node producing tensor `name`, materialising a constant as a Constant node.
  NodeId value(const std::string& name, const std::string& user);
  /// Input `index` of `n` if it is a compile-time tensor, else null.
  const ConstInfo* constant(const onnx::NodeProto& n, int index) const;
  const ConstInfo& need_constant(const onnx::NodeProto& n, int index, const char* what) const;

  static const onnx::AttributeProto* attr(const onnx::NodeProto& n, const char* name);
  std::int64_t attr_int(const onnx::NodeProto& n, const char* name, std::int64_t def) const;
  /// A 0/1 attribute; any other value is refused.
  bool attr_flag(const onnx::NodeProto& n, const char* name, bool def) const;
  double attr_float(const onnx::NodeProto& n, const char* name, double def) const;
  std::vector<std::int64_t> attr_ints(const onnx::NodeProto& n, const char* name) const;
  /// Refuses `n` when it is an operator, or has an attribute, that the model's opset does not
  /// have (onnx_import_attrs.cpp, with the attribute readers above).
  void check_opset(const onnx::NodeProto& n) const;
  /// Refuses `n` where ONNX's own check of it against its operator at the model's opset fails:
  /// an attribute the operator lacks or given twice, too many inputs or outputs (ignored
  /// before). Run after the node's import, whose refusals say more where both apply.
  void check_schema(const onnx::NodeProto& n) const;

  /// Adds node `n` as `kind` reading the inputs at `operand_indices`.
  void emit(const onnx::NodeProto& n, OpKind kind, const OpAttrs& a,
            const std::vector<int>& operand_indices);
  /// `n`'s output is the compile-time tensor `c`.
  void alias(const onnx::NodeProto& n, const ConstInfo& c);

  // onnx_import_ops.cpp
  void import_node(const onnx::NodeProto& n);
  /// `name`: absent (empty) or `size` values, each at least `min`.
  std::vector<std::int64_t> window_ints(const onnx::NodeProto& n, const char* name,
                                        std::size_t size, std::int64_t min) const;
  /// Kernel, stride, pads, dilation of a 2-D window operator, checked here: ONNX's own shape
  /// inference divides by the strides and indexes by these lengths unchecked.
  void window_attrs(const onnx::NodeProto& n, OpAttrs& a, const Shape& kernel) const;
  /// "W|B": the names of the parameter inputs from `first` on, which CSE compares.
  static std::string weight_names(const onnx::NodeProto& n, int first);
  /// A constant-mode Pad of H and W by a constant amount: an alias of its input when it pads
  /// nothing, else kept in pads_ for the Conv or pool that reads it (fold_pad).
  void import_pad(const onnx::NodeProto& n);
  /// Refuses Pad `n`, whose `pads` pad other axes than H and W of an N×C×H×W tensor, saying
  /// which axes of what it pads and what reads it.
  [[noreturn]] void refuse_pad_axes(const onnx::NodeProto& n, const std::vector<std::int64_t>& p);
  /// Adds the pads of a Pad that feeds window operator `n` to its own: zeros counted in an
  /// average, as the explicit padding was.
  void fold_pad(const onnx::NodeProto& n, OpAttrs& a) const;
  /// `n` computed here when its inputs are compile-time tensors whose values are known, or when
  /// it is the Shape of a tensor whose shape is (onnx_import_fold.cpp): its output becomes a
  /// constant. False: `n` is left to import.
  bool fold_constant(const onnx::NodeProto& n);
  /// Data movement on compile-time tensors (Concat, Reshape, Slice, Transpose, Squeeze,
  /// Unsqueeze, Gather, Expand, Cast); null when `n` is none of these or cannot be folded.
  std::optional<ConstInfo> fold_movement(const onnx::NodeProto& n,
                                         const std::vector<const ConstInfo*>& in) const;
  /// Arithmetic on compile-time tensors (onnx_import_fold_math.cpp): Add, Sub, Mul, Div, Mod,
  /// Equal, Not, Where, Range, ScatterND; null when `n` is none of these or cannot be folded.
  std::optional<ConstInfo> fold_math(const onnx::NodeProto& n,
                                     const std::vector<const ConstInfo*>& in) const;
  /// The shape of tensor `name` as far as the import knows it: a compile-time tensor's, or that
  /// nocflow's shape rules give the node producing it (null where they fail: build() reports it).
  std::optional<Shape> known_shape(const std::string& name);
  /// A new Constant node named after `name`: the int64 value [v] (a Slice's bound, an axis).
  NodeId int_constant(const std::string& name, std::int64_t v);
  /// A Split: one Slice per output, of the sizes given or of equal parts (their bounds shape
  /// arithmetic on the axis's length, folded once it is known).
  void import_split(const onnx::NodeProto& n);
  void import_equal_split(const onnx::NodeProto& n, std::int64_t axis);
  /// An Einsum that is a batched product: a MatMul of its operands, transposed as needed.
  void import_einsum(const onnx::NodeProto& n);
  /// An Expand of a weight or a tensor of run time: to a bigger shape, a broadcast Add of zeros.
  void import_expand(const onnx::NodeProto& n);
  /// A Softmax before opset 13, over the axes from its axis on (a Reshape to 2-D around it).
  void import_coerced_softmax(const onnx::NodeProto& n, const OpAttrs& a);
  /// ConstantOfShape of a constant shape: a compile-time tensor of that shape, every element the
  /// `value` attribute's (a float zero by default).
  void import_constant_of_shape(const onnx::NodeProto& n);
  /// Resize (opset 11 on) of H and W: scales taken as attributes, sizes kept as an operand
  /// (often shape arithmetic) for shape inference to fold.
  void import_resize(const onnx::NodeProto& n);

  /// Bytes of an element of ONNX data type `dtype` in this import (float_bytes_ for floats).
  int elem_bytes(int dtype) const;

  std::string path_;
  onnx::ModelProto& model_;
  Graph graph_;
  int float_bytes_ = 0;
  std::int64_t opset_ = 13;
  std::unordered_map<std::string, ConstInfo> consts_;
  std::int64_t folded_elements_ = 0;  ///< values held by alias() (kMaxFoldedTotal)
  std::unordered_map<std::string, NodeId> values_;
  /// Nodes [0, inferred_) have been through shape inference while importing; known_[id] says
  /// whether it gave node id its output.
  NodeId inferred_ = 0;
  std::vector<bool> known_;
  /// Every output name of the nodes imported so far, with its node (single assignment).
  std::unordered_map<std::string, std::string> produced_;
  /// Outputs of Pad nodes, folded into the window operator that reads them.
  struct Pad {
    std::string source, node;
    std::array<std::int64_t, 4> pads;  ///< top, left, bottom, right
  };
  std::unordered_map<std::string, Pad> pads_;
  /// Split nodes, whose sizes must add up to their axis (checked after shape inference).
  struct Split {
    std::string node;
    NodeId input;
    std::int64_t axis, total;  ///< total: the sizes' sum (0 for equal parts)
    std::int64_t parts = 0;    ///< equal parts: how many (they divide the axis unless `uneven`)
    bool uneven = false;       ///< opset 18's num_outputs: the last part may be smaller
  };
  std::vector<Split> splits_;
};

}  // namespace nocflow::optimizer::onnx_import_detail
