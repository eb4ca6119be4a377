// SPDX-License-Identifier: MIT
#pragma once
// Operator kinds of the graph IR and their static properties (one table in op_kind.cpp).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace nocflow::optimizer {

// clang-format off
enum class OpKind : std::uint8_t {
  // sources
  Input, Constant, RandomUniform,
  // compute
  Conv, ConvTranspose, Gemm, MatMul,
  // pooling and resampling
  MaxPool, AvgPool, GlobalAvgPool, Resize,
  // element-wise binary (numpy broadcasting)
  Add, Sub, Mul, Div, Pow, Mod, PRelu,
  // element-wise unary / activations
  Relu, Clip, Sigmoid, Tanh, Gelu, Erf, Sqrt, Exp, HardSigmoid, HardSwish, LeakyRelu,
  // normalisation and reductions
  BatchNorm, LayerNorm, Softmax, ReduceMean,
  // data movement
  Concat, Reshape, Flatten, Transpose, Identity, Dropout,
  // shape arithmetic (values known at compile time; folded by the constfold pass)
  Shape, Gather, Unsqueeze, Squeeze, Cast, Equal, Where, Expand,
  // training (built by autodiff, optimizer/passes/autodiff.h; never read from a network file,
  // but for Slice, which ONNX Slice imports as)
  ConvGradInput, ConvGradWeight, ConvTransposeGradInput, GemmGradInput, GemmGradWeight, PoolGrad,
  Grad, Slice, LossGrad, WeightUpdate,
  // several operators run in one pass on a PE (fusion pass)
  Fused,
};
// clang-format on

/// Static facts about one operator kind.
struct OpInfo {
  OpKind kind;
  std::string_view name;       ///< display name, as in ONNX where one exists ("Conv")
  std::string_view key;        ///< YAML key ("conv"; none for generated kinds)
  int min_inputs;
  int max_inputs;              ///< -1: any number
  bool commutative = false;    ///< binary op whose operands may be swapped (CSE sorts them)
  bool deterministic = true;   ///< false: never merged by CSE (dropout, random generators)
  bool activation = false;     ///< unary element-wise, may end a fused group
  bool generated = false;      ///< built by autodiff only: no YAML key, no ONNX operator
};

const OpInfo& op_info(OpKind kind);
/// Between `min` and `max` inputs (max -1: any number): "1", "2 or more", "1 to 3".
std::string input_count_text(int min, int max);
inline std::string_view op_name(OpKind kind) { return op_info(kind).name; }

/// Kind by YAML key or display name (case-insensitive, also aliases such as "fc", "linear");
/// never a generated (training) kind.
std::optional<OpKind> op_kind_from_key(std::string_view key);
/// Every YAML key, for "did you mean" messages.
std::vector<std::string> op_keys();

bool is_elementwise_binary(OpKind kind);
bool is_elementwise_unary(OpKind kind);

}  // namespace nocflow::optimizer
