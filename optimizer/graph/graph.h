// SPDX-License-Identifier: MIT
#pragma once
// The graph IR: a DAG of operator nodes (Node) whose single output tensor flows along edges to
// the consumers' numbered input slots. Built on Boost.Graph (a bidirectional adjacency list
// with stable vertex descriptors); Boost types never leave graph.cpp.
//
// Contract: node ids are stable and never reused while the graph lives; a node's inputs are
// always numbered 0..n-1 without holes; names are unique. The graph's outputs are the roots of
// liveness (DCE) and the tensors a run must produce.
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "optimizer/graph/node.h"

namespace nocflow::optimizer {

using NodeId = std::uint32_t;

/// A consumer slot: input `index` of node `node`.
struct Use {
  NodeId node;
  int index;
  bool operator==(const Use& o) const { return node == o.node && index == o.index; }
};

class Graph {
 public:
  explicit Graph(std::string name = "network");
  ~Graph();
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) noexcept;
  Graph& operator=(Graph&&) noexcept;

  const std::string& name() const { return name_; }
  /// Throws InputError unless the name is UTF-8 (it is written to JSON), as add_node and
  /// rename do for node names.
  void set_name(std::string name);

  /// What the front end noted while reading the network that a run should say, one line each
  /// without "note: " (an ONNX opset newer than the importer reads): facts, not errors. Passes
  /// and autodiff keep them; commands print them.
  const std::vector<std::string>& notes() const { return notes_; }
  void add_note(std::string note) { notes_.push_back(std::move(note)); }

  /// Adds a node reading `inputs` in order. Throws InputError if the name is taken or not
  /// UTF-8, or an input does not exist.
  NodeId add_node(Node node, const std::vector<NodeId>& inputs = {});
  /// Removes the node and all its edges (its consumers lose that input: fix them first).
  void remove_node(NodeId id);

  bool contains(NodeId id) const;
  const Node& node(NodeId id) const;
  Node& node(NodeId id);
  std::optional<NodeId> find(std::string_view name) const;
  /// Renames a node; throws InputError if the name is taken.
  void rename(NodeId id, std::string name);
  /// A name not yet used, built from `base` ("conv" → "conv_2").
  std::string unique_name(std::string_view base) const;

  std::size_t num_nodes() const;
  /// Every live node id in increasing order.
  std::vector<NodeId> node_ids() const;

  /// Producers of the node's inputs, by input index.
  std::vector<NodeId> inputs(NodeId id) const;
  NodeId input(NodeId id, int index) const;
  /// Every slot that reads the node's output, ordered by (consumer id, index).
  std::vector<Use> uses(NodeId id) const;
  std::size_t num_uses(NodeId id) const;

  /// Appends an input to `dst`.
  void add_input(NodeId dst, NodeId src);
  /// Rewires input `index` of `dst` to read `src`.
  void set_input(NodeId dst, int index, NodeId src);
  /// Removes input `index` of `dst`; later inputs move down by one.
  void remove_input(NodeId dst, int index);
  /// Replaces `dst`'s inputs with `srcs`.
  void set_inputs(NodeId dst, const std::vector<NodeId>& srcs);
  /// Every use of `from` now reads `to`; the outputs stay as they are.
  void replace_uses(NodeId from, NodeId to);
  /// Every use of `from` (and its place in the outputs) now reads `to`.
  void replace_all_uses(NodeId from, NodeId to);

  const std::vector<NodeId>& outputs() const { return outputs_; }
  void set_outputs(std::vector<NodeId> outputs);
  bool is_output(NodeId id) const;
  /// Marks every node without consumers as an output (used when a network names none).
  void set_sinks_as_outputs();

  /// Nodes in a deterministic topological order (ties broken by smaller id). Throws InputError
  /// naming a node on a cycle if there is one.
  std::vector<NodeId> topological_order() const;

 private:
  struct Impl;
  std::string name_;
  std::unique_ptr<Impl> impl_;
  std::vector<NodeId> outputs_;
  std::vector<std::string> notes_;
};

/// The element sizes (bytes) of the graph's inputs: what its byte figures follow from.
std::set<int> input_element_sizes(const Graph& graph);

/// `roots` and every node they read, directly or not: true at their ids, in a vector indexed by
/// node id (as long as the largest live id + 1).
std::vector<bool> upstream(const Graph& graph, std::vector<NodeId> roots);

}  // namespace nocflow::optimizer
