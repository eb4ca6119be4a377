// SPDX-License-Identifier: MIT
#pragma once
// Operator nodes of the graph IR. A node has one output tensor; edges carry it to consumers.
#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "optimizer/graph/op_kind.h"

namespace nocflow::optimizer {

using Shape = std::vector<std::int64_t>;

/// A tensor's metadata. Never holds weight data; `value` holds the contents of small integer
/// tensors that shape arithmetic computes at compile time (Shape → Gather → Concat → Reshape).
struct Tensor {
  Shape shape;
  int elem_bytes = 4;
  std::optional<std::vector<std::int64_t>> value;

  std::int64_t numel() const;
  std::int64_t bytes() const { return numel() * elem_bytes; }
  bool operator==(const Tensor& o) const {
    return shape == o.shape && elem_bytes == o.elem_bytes && value == o.value;
  }
};

/// "[1,3,224,224]"
std::string shape_str(const Shape& s);

struct FusedPart;

/// Attributes of every operator kind in one plain struct; each kind reads only its own fields
/// (listed next to each; ConvTranspose and the convolution gradients read Conv's). Value
/// semantics, compared and hashed whole by CSE.
struct OpAttrs {
  std::int64_t out_channels = 0;  ///< Conv: output channels K; Gemm: output features
  std::int64_t in_channels = 0;   ///< Conv: C (0: from input); Gemm: input features (0: from input)
  std::array<std::int64_t, 2> kernel{1, 1};    ///< Conv, pools: kh, kw
  std::array<std::int64_t, 2> stride{1, 1};    ///< Conv, pools
  std::array<std::int64_t, 2> dilation{1, 1};  ///< Conv
  std::array<std::int64_t, 4> pads{0, 0, 0, 0};  ///< Conv, pools: top, left, bottom, right
  std::array<std::int64_t, 2> output_padding{0, 0};  ///< ConvTranspose: rows, columns added
  std::int64_t groups = 1;                     ///< Conv (groups == C: depthwise)
  bool bias = false;                           ///< Conv, Gemm
  bool shift = true;  ///< LayerNorm: adds a shift (ONNX's B; none with PyTorch's bias=False)
  bool ceil_mode = false;                      ///< pools
  bool count_include_pad = false;              ///< AvgPool
  bool fmod = false;  ///< Mod: remainder of the dividend's sign (C), else the divisor's
  std::int64_t axis = 1;        ///< Concat, Softmax, Flatten, Gather; LayerNorm: first normalised axis
  std::vector<std::int64_t> axes;  ///< ReduceMean, Unsqueeze, Squeeze
  bool keepdims = true;            ///< ReduceMean
  Shape shape;                     ///< Input, Constant, RandomUniform: shape; Reshape: target (0 copy, -1 infer)
  std::vector<std::int64_t> perm;  ///< Transpose (empty: reverse)
  double min = -std::numeric_limits<double>::infinity();  ///< Clip
  double max = std::numeric_limits<double>::infinity();   ///< Clip
  double alpha = 0;  ///< HardSigmoid: slope (ONNX default 0.2); LeakyRelu: slope below 0 (0.01)
  double beta = 0;   ///< HardSigmoid: offset (ONNX default 0.5)
  double epsilon = 1e-5;           ///< BatchNorm, LayerNorm
  double ratio = 0.5;              ///< Dropout
  int elem_bytes = 4;              ///< Input, Constant, RandomUniform: bytes per element
  std::vector<std::int64_t> int_data;  ///< Constant: contents when small and integer
  std::vector<double> float_data;      ///< Constant: contents when small and floating
  bool trainable = false;              ///< Constant: a learned parameter (counts as weights)
  /// Constant: nothing but zeros, which a reader gets without holding them (the zeros an
  /// Expand's broadcast Add reads for its shape, the algebra pass's x · 0): no layer holds them
  bool zeros = false;
  std::vector<FusedPart> parts;        ///< Fused: the operators run in one pass, in order
  /// Conv, Gemm, BatchNorm, LayerNorm: identity of the parameter tensors (ONNX initializer
  /// names); "" means the operator owns unshared parameters, so CSE never merges it.
  std::string weights;
  // Training kinds (optimizer/passes/autodiff.h); `shape` is then the gradient's shape.
  OpKind grad_of = OpKind::Identity;  ///< Grad, PoolGrad: the forward operator differentiated;
                                      ///< ConvGradWeight: ConvTranspose's (dY is input 0)
  int grad_input = 0;                 ///< Grad: which forward input the gradient is for
  std::int64_t offset = 0;            ///< Slice: first index along `axis`
  std::int64_t step = 1;              ///< Slice: distance between the indices taken (>= 1)
  std::int64_t params = 0;            ///< WeightUpdate: parameters updated (weights and bias)
  std::string optimizer;              ///< WeightUpdate: sgd | momentum | adam
  // Resize (optimizer/graph/resize.h); `shape` is then the output's height and width.
  // The mode, transformation and rounding are ONNX's attributes of the same names.
  std::vector<double> scales;                                 ///< output over input size, H, W
  std::string mode = "nearest";                               ///< nearest | linear | cubic
  std::string coordinate_transformation_mode = "half_pixel";  ///< as ONNX
  std::string nearest_mode = "round_prefer_floor";            ///< mode nearest only

  bool operator==(const OpAttrs& o) const;
  bool operator!=(const OpAttrs& o) const { return !(*this == o); }
};

/// One operator inside a Fused node. Part 0 reads the node's first `num_inputs` inputs; part i>0
/// reads the previous part's output at input `chain_input` and the node's next `num_inputs`
/// inputs at its other positions.
struct FusedPart {
  std::string name;
  OpKind kind = OpKind::Identity;
  OpAttrs attrs;
  int num_inputs = 0;
  int chain_input = 0;
  std::vector<Tensor> inputs;  ///< filled by shape inference
  Tensor output;               ///< filled by shape inference

  bool operator==(const FusedPart& o) const {
    return kind == o.kind && attrs == o.attrs && num_inputs == o.num_inputs &&
           chain_input == o.chain_input;
  }
};

/// Hash of all attributes (consistent with operator==).
std::size_t hash_attrs(const OpAttrs& a);

struct Node {
  std::string name;
  OpKind kind = OpKind::Identity;
  OpAttrs attrs;
  Tensor output;  ///< filled by shape inference

  /// "Conv" or, for fused nodes, "Conv+BatchNorm+Relu".
  std::string op_label() const;
};

}  // namespace nocflow::optimizer
