// SPDX-License-Identifier: MIT
#include "optimizer/frontend/graph_builder.h"

#include "optimizer/graph/shape_inference.h"

namespace nocflow::optimizer {

GraphBuilder::GraphBuilder(std::string name, int elem_bytes)
    : graph_(std::move(name)), elem_bytes_(elem_bytes) {}

std::string GraphBuilder::name_for(const std::string& given, OpKind kind) const {
  const std::string base = scope_ + (given.empty() ? std::string(op_info(kind).key) : given);
  return graph_.unique_name(base);
}

NodeId GraphBuilder::op(OpKind kind, const OpAttrs& attrs, const std::vector<NodeId>& inputs,
                        const std::string& name) {
  Node n;
  n.name = name_for(name, kind);
  n.kind = kind;
  n.attrs = attrs;
  return graph_.add_node(std::move(n), inputs);
}

NodeId GraphBuilder::input(const Shape& shape, const std::string& name) {
  OpAttrs a;
  a.shape = shape;
  a.elem_bytes = elem_bytes_;
  return op(OpKind::Input, a, {}, name);
}

NodeId GraphBuilder::constant(const Shape& shape, std::vector<double> values,
                              const std::string& name) {
  OpAttrs a;
  a.shape = shape;
  a.elem_bytes = elem_bytes_;
  a.float_data = std::move(values);
  return op(OpKind::Constant, a, {}, name);
}

NodeId GraphBuilder::parameter(const Shape& shape, const std::string& name) {
  OpAttrs a;
  a.shape = shape;
  a.elem_bytes = elem_bytes_;
  a.trainable = true;
  return op(OpKind::Constant, a, {}, name);
}

NodeId GraphBuilder::conv(NodeId x, std::int64_t out_channels, std::int64_t kernel,
                          std::int64_t stride, std::int64_t pad, std::int64_t groups, bool bias,
                          const std::string& name) {
  OpAttrs a;
  a.out_channels = out_channels;
  a.kernel = {kernel, kernel};
  a.stride = {stride, stride};
  const std::int64_t p = pad < 0 ? (kernel - 1) / 2 : pad;
  a.pads = {p, p, p, p};
  a.groups = groups;
  a.bias = bias;
  return op(OpKind::Conv, a, {x}, name);
}

NodeId GraphBuilder::gemm(NodeId x, std::int64_t out_features, bool bias, const std::string& name) {
  OpAttrs a;
  a.out_channels = out_features;
  a.bias = bias;
  return op(OpKind::Gemm, a, {x}, name);
}

NodeId GraphBuilder::matmul(NodeId a, NodeId b, const std::string& name) {
  return op(OpKind::MatMul, {}, {a, b}, name);
}

NodeId GraphBuilder::maxpool(NodeId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                             bool ceil_mode, const std::string& name) {
  OpAttrs a;
  a.kernel = {kernel, kernel};
  a.stride = {stride, stride};
  a.pads = {pad, pad, pad, pad};
  a.ceil_mode = ceil_mode;
  return op(OpKind::MaxPool, a, {x}, name);
}

NodeId GraphBuilder::avgpool(NodeId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad,
                             const std::string& name) {
  OpAttrs a;
  a.kernel = {kernel, kernel};
  a.stride = {stride, stride};
  a.pads = {pad, pad, pad, pad};
  return op(OpKind::AvgPool, a, {x}, name);
}

NodeId GraphBuilder::global_avgpool(NodeId x, const std::string& name) {
  return op(OpKind::GlobalAvgPool, {}, {x}, name);
}

NodeId GraphBuilder::batchnorm(NodeId x, double epsilon, const std::string& name) {
  OpAttrs a;
  a.epsilon = epsilon;
  return op(OpKind::BatchNorm, a, {x}, name);
}

NodeId GraphBuilder::layernorm(NodeId x, double epsilon, const std::string& name) {
  OpAttrs a;
  a.epsilon = epsilon;
  a.axis = -1;
  return op(OpKind::LayerNorm, a, {x}, name);
}

NodeId GraphBuilder::softmax(NodeId x, std::int64_t axis, const std::string& name) {
  OpAttrs a;
  a.axis = axis;
  return op(OpKind::Softmax, a, {x}, name);
}

NodeId GraphBuilder::relu(NodeId x, const std::string& name) { return op(OpKind::Relu, {}, {x}, name); }

NodeId GraphBuilder::relu6(NodeId x, const std::string& name) {
  OpAttrs a;
  a.min = 0;
  a.max = 6;
  return op(OpKind::Clip, a, {x}, name.empty() ? "relu6" : name);
}

NodeId GraphBuilder::gelu(NodeId x, const std::string& name) { return op(OpKind::Gelu, {}, {x}, name); }

NodeId GraphBuilder::dropout(NodeId x, const std::string& name) {
  return op(OpKind::Dropout, {}, {x}, name);
}

NodeId GraphBuilder::binary(OpKind kind, NodeId a, NodeId b, const std::string& name) {
  return op(kind, {}, {a, b}, name);
}

NodeId GraphBuilder::concat(const std::vector<NodeId>& xs, std::int64_t axis, const std::string& name) {
  OpAttrs a;
  a.axis = axis;
  return op(OpKind::Concat, a, xs, name);
}

NodeId GraphBuilder::flatten(NodeId x, std::int64_t axis, const std::string& name) {
  OpAttrs a;
  a.axis = axis;
  return op(OpKind::Flatten, a, {x}, name);
}

NodeId GraphBuilder::reshape(NodeId x, const Shape& shape, const std::string& name) {
  OpAttrs a;
  a.shape = shape;
  return op(OpKind::Reshape, a, {x}, name);
}

NodeId GraphBuilder::transpose(NodeId x, const std::vector<std::int64_t>& perm,
                               const std::string& name) {
  OpAttrs a;
  a.perm = perm;
  return op(OpKind::Transpose, a, {x}, name);
}

Graph GraphBuilder::finish(const std::vector<NodeId>& outputs) {
  if (outputs.empty())
    graph_.set_sinks_as_outputs();
  else
    graph_.set_outputs(outputs);
  infer_shapes(graph_);
  return std::move(graph_);
}

}  // namespace nocflow::optimizer
