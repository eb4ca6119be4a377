// SPDX-License-Identifier: MIT
#include "optimizer/plan/partition_setup.h"

#include <chrono>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "noc/base/error.h"

namespace nocflow::optimizer {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::string dims_text(const Layer& l) {
  std::string s;
  for (PartDim d : kAllPartDims)
    s += std::string(s.empty() ? "" : ", ") + std::string(to_string(d)) + " " + std::to_string(dim_size(l, d));
  return s + "; legal: " + l.legal.str();
}

/// Identifies an edge's cost table: equal signatures give equal tables for any cost model,
/// because both models read only the producer's layer data, the consumer node's operator,
/// attributes and tensor shapes, the input slot and the two choice lists.
std::string edge_signature(const Workload& w, const LayerEdge& e,
                           const std::vector<std::vector<Choice>>& choices) {
  std::ostringstream o;
  const Layer& pl = w.layers[static_cast<std::size_t>(e.src)];
  const Layer& cl = w.layers[static_cast<std::size_t>(e.dst)];
  const Node& cn = w.graph->node(cl.id);
  o << pl.op << shape_str({pl.out.begin(), pl.out.end()}) << pl.reduction << '/' << pl.elem_bytes << '/'
    << pl.kernel[0] << pl.kernel[1] << pl.stride[0] << pl.stride[1] << pl.macs << '/' << pl.output_bytes
    << '|' << cl.op << static_cast<int>(cn.kind) << '/' << hash_attrs(cn.attrs) << '/'
    << shape_str(cn.output.shape) << '/' << e.input << '/';
  for (NodeId in : w.graph->inputs(cl.id)) o << shape_str(w.graph->node(in).output.shape);
  for (int side : {e.src, e.dst}) {
    o << '|';
    for (const Choice& c : choices[static_cast<std::size_t>(side)])
      for (int f : c.f) o << f << (c.rows_placement ? ';' : ',');
  }
  return o.str();
}

}  // namespace

Problem tabulate(const Workload& w, const std::vector<std::vector<Choice>>& choices,
                 const CostModel& model, const HwDesc& hw, bool memory_limit,
                 const TabulationProgress& progress, EdgeTables edge_tables, bool require_fit) {
  Problem p;
  p.max_pes = hw.num_pes();
  if (memory_limit) p.memory_limit = static_cast<double>(hw.sram_bytes);
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    const Layer& layer = w.layers[l];
    p.names.push_back(layer.name);
    auto& node = p.node.emplace_back();
    auto& mem = p.memory.emplace_back();
    auto& pes = p.pes.emplace_back();
    for (const Choice& c : choices[l]) {
      node.push_back(model.layer_cost(layer, c).cycles);
      mem.push_back(layer_memory_bytes(layer, c));
      pes.push_back(c.nodes());
    }
  }
  if (require_fit) check_memory_feasible(p);  // before the edges, which take seconds on 16x16
  if (edge_tables == EdgeTables::None) return p;
  if (edge_tables == EdgeTables::Rows) {
    // Each row from the model when asked: the workload's edges and the choices are copied
    // (PartitionSetup moves with its problem), the model and the graph referred to.
    struct Inputs {
      Workload workload;
      std::vector<std::vector<Choice>> choices;
    };
    const auto in = std::make_shared<const Inputs>(Inputs{w, choices});
    for (std::size_t k = 0; k < w.edges.size(); ++k) {
      const LayerEdge& e = w.edges[k];
      const auto nv = static_cast<int>(choices[static_cast<std::size_t>(e.dst)].size());
      p.edges.push_back({e.src, e.dst, nv, {}, [in, &model, k](int i) {
                           const LayerEdge& edge = in->workload.edges[k];
                           const auto& cu = in->choices[static_cast<std::size_t>(edge.src)];
                           return model.edge_cycles_table(
                               in->workload, edge, {cu[static_cast<std::size_t>(i)]},
                               in->choices[static_cast<std::size_t>(edge.dst)]);
                         }});
    }
    return p;
  }
  // First each edge's twin, the first edge with its signature (itself if none came before):
  // progress then knows how many entries there are to compute.
  std::unordered_map<std::string, std::size_t> seen;  // signature → first edge with it
  std::vector<std::size_t> twin(w.edges.size());
  TabulationStatus status;
  status.edges = w.edges.size();
  for (std::size_t k = 0; k < w.edges.size(); ++k) {
    const LayerEdge& e = w.edges[k];
    twin[k] = seen.emplace(edge_signature(w, e, choices), k).first->second;
    if (twin[k] == k)
      status.entries += static_cast<double>(choices[static_cast<std::size_t>(e.src)].size()) *
                        static_cast<double>(choices[static_cast<std::size_t>(e.dst)].size());
  }
  std::mutex reporting;  // a table's rows are reported from the threads that compute them
  const CostModel::EntriesDone rows_done = [&](std::size_t entries) {
    const std::lock_guard<std::mutex> lock(reporting);
    status.entries_done += static_cast<double>(entries);
    progress(status);
  };
  for (std::size_t k = 0; k < w.edges.size(); ++k, ++status.edges_done) {
    const LayerEdge& e = w.edges[k];
    if (progress) progress(status);
    if (twin[k] != k) {
      Problem::Edge copy = p.edges[twin[k]];
      copy.u = e.src;
      copy.v = e.dst;
      p.edges.push_back(std::move(copy));
      continue;
    }
    const auto& cu = choices[static_cast<std::size_t>(e.src)];
    const auto& cv = choices[static_cast<std::size_t>(e.dst)];
    p.edges.push_back({e.src, e.dst, static_cast<int>(cv.size()),
                       model.edge_cycles_table(w, e, cu, cv, progress ? rows_done : nullptr)});
  }
  return p;
}

PartitionSetup setup_partition(const Graph& graph, const HwDesc& hw, const CostModel& model,
                               const SetupOptions& o) {
  PartitionSetup s;
  s.workload = build_workload(graph);
  const ChoiceOptions co{hw.num_pes(), o.exact, hw.balanced_splits};
  for (const Layer& l : s.workload.layers) {
    auto cs = enumerate_choices(l, co);
    if (o.placement_search) cs = with_rows_placements(cs, hw.grid());
    if (cs.empty())
      throw InputError("layer '" + l.name + "' (" + l.op + ") has no partition choice using " +
                       (o.exact ? "exactly " : "at most ") + std::to_string(hw.num_pes()) +
                       " PEs: factors must divide its dimensions (" + dims_text(l) + ")" +
                       (hw.balanced_splits ? "" : ", or set partition.splits: balanced"));
    s.choices_before += cs.size();
    s.choices.push_back(std::move(cs));
  }
  auto t0 = Clock::now();
  s.problem = tabulate(s.workload, s.choices, model, hw, o.memory_limit, o.progress, o.edge_tables,
                       o.require_fit);
  s.tabulate_seconds = since(t0);
  if (o.prune && o.edge_tables == EdgeTables::Full) {
    t0 = Clock::now();
    PrunedProblem pruned = prune_dominated(s.problem);
    for (std::size_t l = 0; l < s.choices.size(); ++l) {
      std::vector<Choice> kept;
      for (int i : pruned.kept[l]) kept.push_back(s.choices[l][static_cast<std::size_t>(i)]);
      s.choices[l] = std::move(kept);
    }
    s.problem = std::move(pruned.problem);
    s.prune_seconds = since(t0);
  }
  for (const auto& cs : s.choices) s.choices_after += cs.size();
  return s;
}

}  // namespace nocflow::optimizer
