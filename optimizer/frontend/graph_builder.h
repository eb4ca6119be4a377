// SPDX-License-Identifier: MIT
#pragma once
// Terse construction of graphs in C++ (the zoo and tests): one call per operator, automatic
// unique names ("conv", "conv_2", ...) under an optional scope prefix ("layer1.0.").
#include <string>
#include <vector>

#include "optimizer/graph/graph.h"

namespace nocflow::optimizer {

class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name, int elem_bytes = 4);

  /// Names given to the following nodes start with `prefix` (empty: none).
  void set_scope(std::string prefix) { scope_ = std::move(prefix); }

  NodeId input(const Shape& shape, const std::string& name = "input");
  /// Non-trainable constant of `shape` (masks, scalars).
  NodeId constant(const Shape& shape, std::vector<double> values = {}, const std::string& name = "");
  /// A learned constant of `shape` (weights, an embedding table): its values unknown.
  NodeId parameter(const Shape& shape, const std::string& name = "");
  /// Conv with square kernel; pad -1 means "same" for odd kernels ((k-1)/2 × dilation).
  NodeId conv(NodeId x, std::int64_t out_channels, std::int64_t kernel, std::int64_t stride = 1,
              std::int64_t pad = -1, std::int64_t groups = 1, bool bias = false,
              const std::string& name = "");
  NodeId gemm(NodeId x, std::int64_t out_features, bool bias = true, const std::string& name = "");
  NodeId matmul(NodeId a, NodeId b, const std::string& name = "");
  NodeId maxpool(NodeId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0,
                 bool ceil_mode = false, const std::string& name = "");
  NodeId avgpool(NodeId x, std::int64_t kernel, std::int64_t stride, std::int64_t pad = 0,
                 const std::string& name = "");
  NodeId global_avgpool(NodeId x, const std::string& name = "");
  NodeId batchnorm(NodeId x, double epsilon = 1e-5, const std::string& name = "");
  NodeId layernorm(NodeId x, double epsilon = 1e-5, const std::string& name = "");
  NodeId softmax(NodeId x, std::int64_t axis = -1, const std::string& name = "");
  NodeId relu(NodeId x, const std::string& name = "");
  NodeId relu6(NodeId x, const std::string& name = "");
  NodeId gelu(NodeId x, const std::string& name = "");
  NodeId dropout(NodeId x, const std::string& name = "");
  NodeId binary(OpKind kind, NodeId a, NodeId b, const std::string& name = "");
  NodeId add(NodeId a, NodeId b, const std::string& name = "") { return binary(OpKind::Add, a, b, name); }
  NodeId concat(const std::vector<NodeId>& xs, std::int64_t axis = 1, const std::string& name = "");
  NodeId flatten(NodeId x, std::int64_t axis = 1, const std::string& name = "");
  NodeId reshape(NodeId x, const Shape& shape, const std::string& name = "");
  NodeId transpose(NodeId x, const std::vector<std::int64_t>& perm, const std::string& name = "");
  /// Any operator.
  NodeId op(OpKind kind, const OpAttrs& attrs, const std::vector<NodeId>& inputs,
            const std::string& name = "");

  Graph& graph() { return graph_; }
  /// Sets the outputs (all sinks if empty), runs shape inference and returns the graph.
  Graph finish(const std::vector<NodeId>& outputs = {});

 private:
  std::string name_for(const std::string& given, OpKind kind) const;

  Graph graph_;
  int elem_bytes_;
  std::string scope_;
};

}  // namespace nocflow::optimizer
