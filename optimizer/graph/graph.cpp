// SPDX-License-Identifier: MIT
#include "optimizer/graph/graph.h"

#include <algorithm>
#include <boost/graph/adjacency_list.hpp>
#include <functional>
#include <queue>
#include <stdexcept>
#include <unordered_map>

#include "noc/base/error.h"
#include "noc/base/text_input.h"

namespace nocflow::optimizer {

// Topology lives in Boost (listS vertices: descriptors survive removals); node payloads live in
// `nodes`, indexed by NodeId.
struct Graph::Impl {
  struct VertexProp {
    NodeId id = 0;
  };
  struct EdgeProp {
    int index = 0;  ///< consumer input slot
  };
  using BGraph = boost::adjacency_list<boost::vecS, boost::listS, boost::bidirectionalS,
                                       VertexProp, EdgeProp>;
  using Vertex = BGraph::vertex_descriptor;
  using Edge = BGraph::edge_descriptor;

  BGraph g;
  std::vector<std::optional<Node>> nodes;
  std::vector<Vertex> vertex;
  std::unordered_map<std::string, NodeId> by_name;
  std::size_t live = 0;

  Vertex v(NodeId id) const { return vertex[id]; }
  NodeId id_of(Vertex x) const { return g[x].id; }
  int in_count(NodeId id) const { return static_cast<int>(boost::in_degree(v(id), g)); }
  std::optional<Edge> in_edge_at(NodeId id, int index) const {
    for (auto [it, end] = boost::in_edges(v(id), g); it != end; ++it)
      if (g[*it].index == index) return *it;
    return std::nullopt;
  }
};

namespace {
[[noreturn]] void no_node(NodeId id) {
  throw std::out_of_range("graph: no node with id " + std::to_string(id));
}
}  // namespace

Graph::Graph(std::string name) : impl_(std::make_unique<Impl>()) {
  set_name(std::move(name));
}

void Graph::set_name(std::string name) {
  check_utf8(name, "network name '" + name + "'");
  name_ = std::move(name);
}
Graph::~Graph() = default;
Graph::Graph(Graph&&) noexcept = default;
Graph& Graph::operator=(Graph&&) noexcept = default;

Graph::Graph(const Graph& other) : name_(other.name_), impl_(std::make_unique<Impl>()) {
  // Rebuild with the same ids: vertices first, then edges.
  auto& me = *impl_;
  const auto& o = *other.impl_;
  me.nodes = o.nodes;
  me.by_name = o.by_name;
  me.live = o.live;
  me.vertex.assign(o.vertex.size(), Impl::BGraph::null_vertex());
  for (NodeId id = 0; id < o.nodes.size(); ++id)
    if (o.nodes[id]) me.vertex[id] = boost::add_vertex(Impl::VertexProp{id}, me.g);
  for (auto [it, end] = boost::edges(o.g); it != end; ++it)
    boost::add_edge(me.vertex[o.id_of(boost::source(*it, o.g))],
                    me.vertex[o.id_of(boost::target(*it, o.g))], o.g[*it], me.g);
  outputs_ = other.outputs_;
  notes_ = other.notes_;
}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *this = Graph(other);
  return *this;
}

NodeId Graph::add_node(Node node, const std::vector<NodeId>& inputs) {
  auto& m = *impl_;
  if (node.name.empty()) node.name = unique_name(op_info(node.kind).key);
  check_utf8(node.name, "node name '" + node.name + "'");
  if (m.by_name.count(node.name))
    throw InputError("duplicate node name '" + node.name + "'");
  for (NodeId in : inputs)
    if (!contains(in))
      throw InputError("node '" + node.name + "': input id " + std::to_string(in) + " not in graph");
  const auto id = static_cast<NodeId>(m.nodes.size());
  m.by_name.emplace(node.name, id);
  m.nodes.emplace_back(std::move(node));
  m.vertex.push_back(boost::add_vertex(Impl::VertexProp{id}, m.g));
  ++m.live;
  for (std::size_t i = 0; i < inputs.size(); ++i)
    boost::add_edge(m.v(inputs[i]), m.v(id), Impl::EdgeProp{static_cast<int>(i)}, m.g);
  return id;
}

void Graph::remove_node(NodeId id) {
  auto& m = *impl_;
  if (!contains(id)) no_node(id);
  boost::clear_vertex(m.v(id), m.g);
  boost::remove_vertex(m.v(id), m.g);
  m.vertex[id] = Impl::BGraph::null_vertex();
  m.by_name.erase(m.nodes[id]->name);
  m.nodes[id].reset();
  --m.live;
  outputs_.erase(std::remove(outputs_.begin(), outputs_.end(), id), outputs_.end());
}

bool Graph::contains(NodeId id) const { return id < impl_->nodes.size() && impl_->nodes[id]; }

const Node& Graph::node(NodeId id) const {
  if (!contains(id)) no_node(id);
  return *impl_->nodes[id];
}

Node& Graph::node(NodeId id) {
  if (!contains(id)) no_node(id);
  return *impl_->nodes[id];
}

std::optional<NodeId> Graph::find(std::string_view name) const {
  auto it = impl_->by_name.find(std::string(name));
  if (it == impl_->by_name.end()) return std::nullopt;
  return it->second;
}

void Graph::rename(NodeId id, std::string name) {
  auto& m = *impl_;
  Node& n = node(id);
  if (n.name == name) return;
  check_utf8(name, "node name '" + name + "'");
  if (m.by_name.count(name)) throw InputError("duplicate node name '" + name + "'");
  m.by_name.erase(n.name);
  m.by_name.emplace(name, id);
  n.name = std::move(name);
}

std::string Graph::unique_name(std::string_view base) const {
  std::string b(base);
  if (!impl_->by_name.count(b)) return b;
  for (std::size_t i = 2;; ++i) {
    std::string candidate = b + "_" + std::to_string(i);
    if (!impl_->by_name.count(candidate)) return candidate;
  }
}

std::size_t Graph::num_nodes() const { return impl_->live; }

std::vector<NodeId> Graph::node_ids() const {
  std::vector<NodeId> out;
  out.reserve(impl_->live);
  for (NodeId id = 0; id < impl_->nodes.size(); ++id)
    if (impl_->nodes[id]) out.push_back(id);
  return out;
}

std::vector<NodeId> Graph::inputs(NodeId id) const {
  const auto& m = *impl_;
  if (!contains(id)) no_node(id);
  std::vector<NodeId> out(static_cast<std::size_t>(m.in_count(id)));
  for (auto [it, end] = boost::in_edges(m.v(id), m.g); it != end; ++it)
    out.at(static_cast<std::size_t>(m.g[*it].index)) = m.id_of(boost::source(*it, m.g));
  return out;
}

NodeId Graph::input(NodeId id, int index) const {
  const auto& m = *impl_;
  if (!contains(id)) no_node(id);
  auto e = m.in_edge_at(id, index);
  if (!e) throw std::out_of_range("graph: node '" + node(id).name + "' has no input " +
                                  std::to_string(index));
  return m.id_of(boost::source(*e, m.g));
}

std::vector<Use> Graph::uses(NodeId id) const {
  const auto& m = *impl_;
  if (!contains(id)) no_node(id);
  std::vector<Use> out;
  for (auto [it, end] = boost::out_edges(m.v(id), m.g); it != end; ++it)
    out.push_back({m.id_of(boost::target(*it, m.g)), m.g[*it].index});
  std::sort(out.begin(), out.end(), [](const Use& a, const Use& b) {
    return a.node != b.node ? a.node < b.node : a.index < b.index;
  });
  return out;
}

std::size_t Graph::num_uses(NodeId id) const {
  if (!contains(id)) no_node(id);
  return boost::out_degree(impl_->v(id), impl_->g);
}

void Graph::add_input(NodeId dst, NodeId src) {
  auto& m = *impl_;
  if (!contains(dst)) no_node(dst);
  if (!contains(src)) no_node(src);
  boost::add_edge(m.v(src), m.v(dst), Impl::EdgeProp{m.in_count(dst)}, m.g);
}

void Graph::set_input(NodeId dst, int index, NodeId src) {
  auto& m = *impl_;
  if (!contains(src)) no_node(src);
  auto e = m.in_edge_at(dst, index);
  if (!e) throw std::out_of_range("graph: set_input: no input " + std::to_string(index));
  boost::remove_edge(*e, m.g);
  boost::add_edge(m.v(src), m.v(dst), Impl::EdgeProp{index}, m.g);
}

void Graph::remove_input(NodeId dst, int index) {
  auto& m = *impl_;
  auto e = m.in_edge_at(dst, index);
  if (!e) throw std::out_of_range("graph: remove_input: no input " + std::to_string(index));
  boost::remove_edge(*e, m.g);
  for (auto [it, end] = boost::in_edges(m.v(dst), m.g); it != end; ++it)
    if (m.g[*it].index > index) --m.g[*it].index;
}

void Graph::set_inputs(NodeId dst, const std::vector<NodeId>& srcs) {
  auto& m = *impl_;
  if (!contains(dst)) no_node(dst);
  for (NodeId s : srcs)
    if (!contains(s)) no_node(s);
  boost::clear_in_edges(m.v(dst), m.g);
  for (std::size_t i = 0; i < srcs.size(); ++i)
    boost::add_edge(m.v(srcs[i]), m.v(dst), Impl::EdgeProp{static_cast<int>(i)}, m.g);
}

void Graph::replace_uses(NodeId from, NodeId to) {
  if (from == to) return;
  for (const Use& u : uses(from)) set_input(u.node, u.index, to);
}

void Graph::replace_all_uses(NodeId from, NodeId to) {
  if (from == to) return;
  replace_uses(from, to);
  for (auto& o : outputs_)
    if (o == from) o = to;
  // A node listed twice as an output after the rewrite stays listed once.
  std::vector<NodeId> unique;
  for (NodeId o : outputs_)
    if (std::find(unique.begin(), unique.end(), o) == unique.end()) unique.push_back(o);
  outputs_ = std::move(unique);
}

void Graph::set_outputs(std::vector<NodeId> outputs) {
  for (NodeId o : outputs)
    if (!contains(o)) no_node(o);
  outputs_ = std::move(outputs);
}

bool Graph::is_output(NodeId id) const {
  return std::find(outputs_.begin(), outputs_.end(), id) != outputs_.end();
}

void Graph::set_sinks_as_outputs() {
  outputs_.clear();
  for (NodeId id : node_ids())
    if (num_uses(id) == 0) outputs_.push_back(id);
}

std::vector<NodeId> Graph::topological_order() const {
  const auto& m = *impl_;
  std::vector<std::size_t> pending(m.nodes.size(), 0);
  std::priority_queue<NodeId, std::vector<NodeId>, std::greater<>> ready;
  for (NodeId id : node_ids()) {
    pending[id] = boost::in_degree(m.v(id), m.g);
    if (pending[id] == 0) ready.push(id);
  }
  std::vector<NodeId> order;
  order.reserve(m.live);
  while (!ready.empty()) {
    const NodeId id = ready.top();
    ready.pop();
    order.push_back(id);
    for (auto [it, end] = boost::out_edges(m.v(id), m.g); it != end; ++it)
      if (--pending[m.id_of(boost::target(*it, m.g))] == 0)
        ready.push(m.id_of(boost::target(*it, m.g)));
  }
  if (order.size() == m.live) return order;

  // Some node never became ready. Walk back through unfinished producers until a node repeats:
  // that node lies on a cycle (the unfinished nodes are cycles plus what hangs below them).
  NodeId at = 0;
  for (NodeId id : node_ids())
    if (pending[id] > 0) {
      at = id;
      break;
    }
  std::vector<int> seen_at(m.nodes.size(), -1);
  std::vector<NodeId> path;
  while (seen_at[at] < 0) {
    seen_at[at] = static_cast<int>(path.size());
    path.push_back(at);
    for (auto [it, end] = boost::in_edges(m.v(at), m.g); it != end; ++it) {
      const NodeId src = m.id_of(boost::source(*it, m.g));
      if (pending[src] > 0) {
        at = src;
        break;
      }
    }
  }
  // path[k+1] produces path[k]: read the loop backwards to print it in data-flow order.
  std::string cycle = node(at).name;
  for (std::size_t i = path.size() - 1; i > static_cast<std::size_t>(seen_at[at]); --i)
    cycle += " -> " + node(path[i]).name;
  cycle += " -> " + node(at).name;
  throw InputError("graph '" + name_ + "' has a cycle through node '" + node(at).name +
                   "': " + cycle);
}

std::set<int> input_element_sizes(const Graph& graph) {
  std::set<int> sizes;
  for (NodeId id : graph.node_ids())
    if (graph.node(id).kind == OpKind::Input) sizes.insert(graph.node(id).output.elem_bytes);
  return sizes;
}

std::vector<bool> upstream(const Graph& g, std::vector<NodeId> roots) {
  const std::vector<NodeId> ids = g.node_ids();
  std::vector<bool> marked(ids.empty() ? 0 : ids.back() + 1, false);
  auto mark = [&](NodeId id) {
    if (marked[id]) return false;
    marked[id] = true;
    return true;
  };
  std::vector<NodeId> todo;
  for (NodeId r : roots)
    if (mark(r)) todo.push_back(r);
  while (!todo.empty()) {
    const NodeId id = todo.back();
    todo.pop_back();
    for (NodeId in : g.inputs(id))
      if (mark(in)) todo.push_back(in);
  }
  return marked;
}

}  // namespace nocflow::optimizer
