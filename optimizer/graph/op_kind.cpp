// SPDX-License-Identifier: MIT
#include "optimizer/graph/op_kind.h"

#include <algorithm>
#include <array>
#include <cctype>

namespace nocflow::optimizer {
namespace {

constexpr int kAny = -1;

/// A kind only autodiff builds: no YAML key, deterministic, never an activation.
constexpr OpInfo training(OpKind kind, std::string_view name, int min_inputs, int max_inputs) {
  return {kind, name, "", min_inputs, max_inputs, false, true, false, true};
}

// Indexed by OpKind; the order must match the enum (checked in op_info).
const std::array kTable = {
    OpInfo{OpKind::Input, "Input", "input", 0, 0},
    OpInfo{OpKind::Constant, "Constant", "constant", 0, 0},
    OpInfo{OpKind::RandomUniform, "RandomUniform", "random_uniform", 0, 0, false, false},
    OpInfo{OpKind::Conv, "Conv", "conv", 1, 1},
    OpInfo{OpKind::ConvTranspose, "ConvTranspose", "conv_transpose", 1, 1},
    OpInfo{OpKind::Gemm, "Gemm", "gemm", 1, 1},
    OpInfo{OpKind::MatMul, "MatMul", "matmul", 2, 2},
    OpInfo{OpKind::MaxPool, "MaxPool", "maxpool", 1, 1},
    OpInfo{OpKind::AvgPool, "AvgPool", "avgpool", 1, 1},
    OpInfo{OpKind::GlobalAvgPool, "GlobalAvgPool", "global_avgpool", 1, 1},
    OpInfo{OpKind::Resize, "Resize", "resize", 1, 2},  // ONNX's sizes until folded
    OpInfo{OpKind::Add, "Add", "add", 2, 2, true},
    OpInfo{OpKind::Sub, "Sub", "sub", 2, 2},
    OpInfo{OpKind::Mul, "Mul", "mul", 2, 2, true},
    OpInfo{OpKind::Div, "Div", "div", 2, 2},
    OpInfo{OpKind::Pow, "Pow", "pow", 2, 2},
    OpInfo{OpKind::Mod, "Mod", "mod", 2, 2},
    OpInfo{OpKind::PRelu, "PRelu", "prelu", 2, 2},  // x, its slopes (broadcast to x)
    OpInfo{OpKind::Relu, "Relu", "relu", 1, 1, false, true, true},
    OpInfo{OpKind::Clip, "Clip", "clip", 1, 1, false, true, true},
    OpInfo{OpKind::Sigmoid, "Sigmoid", "sigmoid", 1, 1, false, true, true},
    OpInfo{OpKind::Tanh, "Tanh", "tanh", 1, 1, false, true, true},
    OpInfo{OpKind::Gelu, "Gelu", "gelu", 1, 1, false, true, true},
    OpInfo{OpKind::Erf, "Erf", "erf", 1, 1},
    OpInfo{OpKind::Sqrt, "Sqrt", "sqrt", 1, 1},
    OpInfo{OpKind::Exp, "Exp", "exp", 1, 1},
    OpInfo{OpKind::HardSigmoid, "HardSigmoid", "hard_sigmoid", 1, 1, false, true, true},
    OpInfo{OpKind::HardSwish, "HardSwish", "hard_swish", 1, 1, false, true, true},
    OpInfo{OpKind::LeakyRelu, "LeakyRelu", "leaky_relu", 1, 1, false, true, true},
    OpInfo{OpKind::BatchNorm, "BatchNorm", "batchnorm", 1, 1},
    OpInfo{OpKind::LayerNorm, "LayerNorm", "layernorm", 1, 1},
    OpInfo{OpKind::Softmax, "Softmax", "softmax", 1, 1},
    OpInfo{OpKind::ReduceMean, "ReduceMean", "reduce_mean", 1, 1},
    OpInfo{OpKind::Concat, "Concat", "concat", 1, kAny},
    OpInfo{OpKind::Reshape, "Reshape", "reshape", 1, 2},
    OpInfo{OpKind::Flatten, "Flatten", "flatten", 1, 1},
    OpInfo{OpKind::Transpose, "Transpose", "transpose", 1, 1},
    OpInfo{OpKind::Identity, "Identity", "identity", 1, 1},
    OpInfo{OpKind::Dropout, "Dropout", "dropout", 1, 1, false, false},
    OpInfo{OpKind::Shape, "Shape", "shape", 1, 1},
    OpInfo{OpKind::Gather, "Gather", "gather", 2, 2},
    OpInfo{OpKind::Unsqueeze, "Unsqueeze", "unsqueeze", 1, 2},
    OpInfo{OpKind::Squeeze, "Squeeze", "squeeze", 1, 2},
    OpInfo{OpKind::Cast, "Cast", "cast", 1, 1},
    OpInfo{OpKind::Equal, "Equal", "equal", 2, 2, true},
    OpInfo{OpKind::Where, "Where", "where", 3, 3},
    OpInfo{OpKind::Expand, "Expand", "expand", 2, 2},
    training(OpKind::ConvGradInput, "ConvGradInput", 1, 1),
    training(OpKind::ConvGradWeight, "ConvGradWeight", 2, 2),
    training(OpKind::ConvTransposeGradInput, "ConvTransposeGradInput", 1, 1),
    training(OpKind::GemmGradInput, "GemmGradInput", 1, 1),
    training(OpKind::GemmGradWeight, "GemmGradWeight", 2, 2),
    training(OpKind::PoolGrad, "PoolGrad", 1, 2),
    training(OpKind::Grad, "Grad", 1, 3),
    training(OpKind::Slice, "Slice", 1, 5),
    training(OpKind::LossGrad, "LossGrad", 1, 1),
    training(OpKind::WeightUpdate, "WeightUpdate", 1, 1),
    OpInfo{OpKind::Fused, "Fused", "fused", 1, kAny},
};

struct Alias {
  std::string_view alias;
  OpKind kind;
};
constexpr std::array kAliases = {
    Alias{"fc", OpKind::Gemm},          Alias{"linear", OpKind::Gemm},
    Alias{"fully_connected", OpKind::Gemm}, Alias{"batch_norm", OpKind::BatchNorm},
    Alias{"bn", OpKind::BatchNorm},     Alias{"layer_norm", OpKind::LayerNorm},
    Alias{"relu6", OpKind::Clip},       Alias{"global_average_pool", OpKind::GlobalAvgPool},
    Alias{"average_pool", OpKind::AvgPool}, Alias{"max_pool", OpKind::MaxPool},
};

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

const OpInfo& op_info(OpKind kind) {
  const auto& info = kTable.at(static_cast<std::size_t>(kind));
  static_assert(kTable.size() == static_cast<std::size_t>(OpKind::Fused) + 1,
                "op table out of sync with OpKind");
  return info;
}

std::string input_count_text(int min, int max) {
  const std::string lo = std::to_string(min);
  if (max == min) return lo;
  return max < 0 ? lo + " or more" : lo + " to " + std::to_string(max);
}

std::optional<OpKind> op_kind_from_key(std::string_view key) {
  const std::string k = lower(key);
  for (const auto& info : kTable)
    if (!info.generated && (info.key == k || lower(info.name) == k)) return info.kind;
  for (const auto& a : kAliases)
    if (a.alias == k) return a.kind;
  return std::nullopt;
}

std::vector<std::string> op_keys() {
  std::vector<std::string> out;
  for (const auto& info : kTable)
    if (info.kind != OpKind::Fused && !info.generated) out.emplace_back(info.key);
  for (const auto& a : kAliases) out.emplace_back(a.alias);
  return out;
}

bool is_elementwise_binary(OpKind kind) {
  switch (kind) {
    case OpKind::Add: case OpKind::Sub: case OpKind::Mul: case OpKind::Div: case OpKind::Pow:
    case OpKind::Mod: case OpKind::PRelu:
      return true;
    default: return false;
  }
}

bool is_elementwise_unary(OpKind kind) {
  switch (kind) {
    case OpKind::Relu: case OpKind::Clip: case OpKind::Sigmoid: case OpKind::Tanh:
    case OpKind::Gelu: case OpKind::Erf: case OpKind::Sqrt: case OpKind::Exp: case OpKind::Cast:
    case OpKind::HardSigmoid: case OpKind::HardSwish: case OpKind::LeakyRelu:
    case OpKind::Identity: case OpKind::Dropout:
      return true;
    default: return false;
  }
}

}  // namespace nocflow::optimizer
