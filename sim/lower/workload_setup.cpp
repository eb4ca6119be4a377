// SPDX-License-Identifier: MIT
#include "sim/lower/workload_setup.h"

#include <algorithm>
#include <set>

#include "noc/base/error.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/plan/partition_setup.h"
#include "optimizer/solver/solver.h"
#include "sim/config/hw_loader.h"
#include "sim/config/param.h"

namespace nocflow::sim {

optimizer::HwDesc hw_desc_of(const HwSpec& s, double bnoc) {
  optimizer::HwDesc h;
  h.topology = s.topology;
  h.routing = s.router.routing;
  h.macs_per_cycle = static_cast<double>(s.pe.macs_per_cycle);
  h.adds_per_cycle = static_cast<double>(std::max<std::int64_t>(1, s.pe.adds_per_cycle));
  h.sram_bytes_per_cycle = static_cast<double>(s.pe.sram_bytes_per_cycle);
  h.array_rows = s.pe.array_rows;
  h.array_cols = s.pe.array_cols;
  h.link_bytes_per_cycle = s.link.width_bytes;
  const int route = s.router.lookahead_routing ? 0 : s.router.routing_delay;
  // Speculation starts SA in VA's last cycle (noc/router/router.cpp, grant_vc).
  const int alloc =
      s.router.vc_alloc_delay + s.router.sw_alloc_delay - (s.router.speculative ? 1 : 0);
  h.router_pipeline_cycles = route + alloc + s.router.st_delay;
  h.link_latency_cycles = s.link.latency;
  h.mac_pj = s.energy.mac_pj;
  h.hop_pj_per_byte = s.energy.hop_pj_per_byte;
  h.sram_pj_per_byte = s.energy.sram_pj_per_byte;
  h.sram_bytes = s.pe.sram_bytes;
  h.bnoc_bytes_per_cycle = bnoc;
  h.vc_buffer_flits = std::max(1, s.router.buffer_depth);
  h.credit_loop_cycles = 2 * s.link.latency + s.router.sw_alloc_delay + s.router.st_delay + 1;
  h.vcs = std::max(1, s.router.vcs);
  h.ni_channels = std::max(1, s.ni.channels);
  h.all_gather = s.lowering.all_gather == "ring"   ? optimizer::HwDesc::AllGather::Ring
                 : s.lowering.all_gather == "auto" ? optimizer::HwDesc::AllGather::Auto
                                                   : optimizer::HwDesc::AllGather::Direct;
  h.balanced_splits = s.partition.splits == "balanced";
  return h;
}

std::string element_size_note(const optimizer::Graph& graph, const HwSpec& spec) {
  std::set<int> sizes;
  for (optimizer::NodeId id : graph.node_ids())
    if (graph.node(id).kind == optimizer::OpKind::Input)
      sizes.insert(graph.node(id).output.elem_bytes);
  if (sizes.empty() || (sizes.size() == 1 && *sizes.begin() == spec.data.width_bytes)) return "";
  std::string list;
  for (int b : sizes) list += (list.empty() ? "" : ", ") + std::to_string(b);
  return "note: the network's inputs have " + list +
         "-byte elements (from its file), not data.width_bytes " +
         std::to_string(spec.data.width_bytes) +
         ", which only zoo networks take; the run uses the file's";
}

optimizer::Graph prepare_network(const std::string& network, std::int64_t batch, const HwSpec& spec,
                                 const std::string& passes, const std::string& train) {
  if (batch < 0) throw InputError("--batch: must be at least 1");
  optimizer::Graph graph = optimizer::load_network(network, optimizer::ZooOptions{batch, spec.data.width_bytes});
  const optimizer::TrainingOptions training{train};
  optimizer::run_passes(graph, passes, train.empty() ? nullptr : &training);
  return graph;
}

SolvedPlan solve_plan(const optimizer::Graph& graph, const optimizer::HwDesc& hw,
                      const std::string& solver, const std::string& cost_model, int threads,
                      bool placement_search, const optimizer::TabulationProgress& progress) {
  const auto model = optimizer::make_cost_model(cost_model, hw, threads);
  const std::unique_ptr<optimizer::Solver> method = optimizer::make_solver(solver);
  const optimizer::PartitionSetup s = optimizer::setup_partition(
      graph, hw, *model, {false, true, true, placement_search, progress, method->edge_tables()});
  const optimizer::SolveResult r = method->solve(s.problem, {60, "flow", "", false});
  return {optimizer::make_plan(s, r.choice, hw, *model, solver), s.tabulate_seconds, r.seconds};
}

}  // namespace nocflow::sim
