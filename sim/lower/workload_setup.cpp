// SPDX-License-Identifier: MIT
#include "sim/lower/workload_setup.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "noc/base/error.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/partition/choice.h"
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

std::string element_size_note(const optimizer::Graph& graph, const HwSpec& spec,
                              const std::string& network) {
  if (spec.data.onnx_float_bytes() > 0 && optimizer::is_onnx_file(network)) return "";
  const std::set<int> sizes = optimizer::input_element_sizes(graph);
  if (sizes.empty() || (sizes.size() == 1 && *sizes.begin() == spec.data.width_bytes)) return "";
  std::string list;
  for (int b : sizes) list += (list.empty() ? "" : ", ") + std::to_string(b);
  return "note: the network's inputs have " + list +
         "-byte elements (from its file), not data.width_bytes " +
         std::to_string(spec.data.width_bytes) +
         ", which only zoo networks take (and an ONNX model's floats under data.onnx_floats: "
         "width); the run uses the file's";
}

std::string single_pe_note(const optimizer::Workload& workload, const optimizer::Plan& plan,
                           const HwSpec& spec) {
  if (spec.partition.splits != "divisors") return "";
  std::unordered_map<std::string, const optimizer::PlanLayer*> planned;
  for (const optimizer::PlanLayer& l : plan.layers) planned.emplace(l.name, &l);
  const auto split = [](const std::vector<optimizer::Choice>& cs) {
    return std::any_of(cs.begin(), cs.end(),
                       [](const optimizer::Choice& c) { return c.nodes() > 1; });
  };
  int count = 0;
  std::map<std::int64_t, int> sizes;  // of the dimensions balanced blocks would split: PEs
  for (const optimizer::Layer& layer : workload.layers) {
    const auto it = planned.find(layer.name);
    if (it == planned.end() || it->second->choice.nodes() != 1) continue;
    if (layer.macs == 0 && layer.vector_ops == 0) continue;
    const int stage = it->second->stage;
    const int pes = stage >= 0 && stage < static_cast<int>(plan.stages.size())
                        ? plan.stages[static_cast<std::size_t>(stage)].pes
                        : plan.pes;
    if (pes < 2 || split(optimizer::enumerate_choices(layer, {pes, false, false}))) continue;
    const auto balanced = optimizer::enumerate_choices(layer, {pes, false, true});
    if (!split(balanced)) continue;  // nothing splits it at all
    ++count;
    for (const optimizer::Choice& c : balanced)
      for (optimizer::PartDim d : optimizer::kAllPartDims)
        if (c.factor(d) > 1) {
          const auto [at, fresh] = sizes.emplace(optimizer::dim_size(layer, d), pes);
          if (!fresh) at->second = std::min(at->second, pes);
        }
  }
  if (count == 0) return "";
  const auto prime = [](std::int64_t n) {
    for (std::int64_t k = 2; k * k <= n; ++k)
      if (n % k == 0) return false;
    return n > 1;
  };
  std::string why;
  int listed = 0;
  for (const auto& [size, pes] : sizes) {
    if (listed == 3) {
      why += "; " + std::to_string(sizes.size() - 3) + " more sizes";
      break;
    }
    why += (listed++ ? "; " : "") + std::to_string(size) +
           (prime(size) ? " is prime" : " has no divisor from 2 to " + std::to_string(pes));
  }
  const bool one = count == 1;
  return std::to_string(count) + (one ? " layer runs" : " layers run") +
         " on one PE since no divisor of " + (one ? "its" : "their") + " dimensions splits " +
         (one ? "it" : "them") + " (" + why +
         "); --set partition.splits=balanced offers uneven blocks";
}

optimizer::Graph prepare_network(const std::string& network, std::int64_t batch, const HwSpec& spec,
                                 const std::string& passes, const std::string& train) {
  if (batch < 0) throw InputError("--batch: must be at least 1");
  optimizer::Graph graph = optimizer::load_network(
      network, optimizer::ZooOptions{batch, spec.data.width_bytes, spec.data.onnx_float_bytes()});
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
