// SPDX-License-Identifier: MIT
#pragma once
// Small ONNX models built with the protobuf API, for import tests.
#include <onnx/onnx_pb.h>

#include <fstream>
#include <string>
#include <vector>

#include "optimizer/frontend/load_network.h"
#include "tests/input_error.h"
#include "tests/scratch.h"

namespace nocflow::optimizer {

/// Nodes of `kind` in `g` (what passes left of an operator).
inline int count_kind(const Graph& g, OpKind kind) {
  int n = 0;
  for (NodeId id : g.node_ids()) n += g.node(id).kind == kind;
  return n;
}

/// A model building block: float tensors "x" (input) and initializers, nodes added by the test.
struct Model {
  onnx::ModelProto m;
  onnx::GraphProto* g;

  explicit Model(const Shape& input) : g(m.mutable_graph()) {
    m.set_ir_version(8);
    m.add_opset_import()->set_version(13);
    g->set_name("g");
    auto* in = g->add_input();
    in->set_name("x");
    in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
    auto* shape = in->mutable_type()->mutable_tensor_type()->mutable_shape();
    for (auto d : input) shape->add_dim()->set_dim_value(d);
  }
  /// A float initializer with dims only: the importer never reads weight data.
  void weight(const std::string& name, const Shape& dims) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (auto d : dims) t->add_dims(d);
  }
  void int64s(const std::string& name, const std::vector<std::int64_t>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_int64_data(v);
  }
  /// A rank-0 int64 initializer (a Gather's single index).
  void int64_scalar(const std::string& name, std::int64_t value) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_int64_data(value);
  }
  void floats(const std::string& name, const std::vector<float>& values) {
    auto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(static_cast<std::int64_t>(values.size()));
    for (auto v : values) t->add_float_data(v);
  }
  onnx::NodeProto* node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::string& output, const std::string& name = "") {
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& i : inputs) n->add_input(i);
    n->add_output(output);
    return n;
  }
  static void ints(onnx::NodeProto* n, const std::string& name,
                   const std::vector<std::int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (auto x : v) a->add_ints(x);
  }
  static void int1(onnx::NodeProto* n, const std::string& name, std::int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  /// Writes the model with graph output `output` (none if empty) and imports it; the error
  /// message or "".
  std::string import(const std::string& file, const std::string& output = "y") {
    const std::string path = write(file, output);
    return nocflow::testing::error_of([&] { load_network(path); });
  }
  /// Writes the model as import() does and loads it (no passes run).
  Graph load(const std::string& file, const std::string& output = "y") {
    return load_network(write(file, output));
  }
  std::string write(const std::string& file, const std::string& output) {
    if (!output.empty()) g->add_output()->set_name(output);
    const std::string path = nocflow::testing::scratch_path("robustness_" + file).string();
    std::ofstream out(path, std::ios::binary);
    m.SerializeToOstream(&out);
    return path;
  }
};

}  // namespace nocflow::optimizer
