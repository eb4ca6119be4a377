// SPDX-License-Identifier: MIT
#include "sim/lower/workload_setup.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "noc/base/error.h"
#include "optimizer/cost/paper_calibration.h"
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
  return h;
}

std::vector<std::pair<std::string, std::string>> priced_for(const HwSpec& spec) {
  static const std::set<std::string> read = {
      "topology.kind",        "topology.rows",           "topology.cols",
      "topology.ports",       "router.routing",          "pe.macs_per_cycle",
      "pe.adds_per_cycle",    "pe.sram_bytes_per_cycle", "pe.array_rows",
      "pe.array_cols",        "link.width_bytes",        "router.lookahead_routing",
      "router.routing_delay", "router.vc_alloc_delay",   "router.sw_alloc_delay",
      "router.speculative",   "router.st_delay",         "link.latency",
      "energy.mac_pj",        "energy.hop_pj_per_byte",  "energy.sram_pj_per_byte",
      "pe.sram_bytes",        "router.buffer_depth",     "router.vcs",
      "ni.channels"};
  std::vector<std::pair<std::string, std::string>> out;
  for (const Param& p : hw_params()) {
    if (!read.count(p.path) || (p.applies && !p.applies(spec))) continue;
    if (p.path == "router.routing_delay" && spec.router.lookahead_routing)
      continue;  // as hw_desc_of
    out.emplace_back(p.path, format_value(p.get(spec)));
  }
  return out;
}

std::vector<std::pair<std::string, std::string>> calibrated_for(const HwSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Param& p : hw_params())
    if ((p.path.rfind("router.", 0) == 0 || p.path.rfind("link.", 0) == 0 ||
         p.path.rfind("ni.", 0) == 0) &&
        (!p.applies || p.applies(spec)))
      out.emplace_back(p.path, format_value(p.get(spec)));
  return out;
}

std::string calibration_scope_yaml(const std::vector<std::string>& machines, const HwSpec& base) {
  YAML::Emitter y;
  y << YAML::BeginMap << YAML::Key << "fitted_for" << YAML::Value << YAML::BeginMap;
  y << YAML::Key << "machines" << YAML::Value << YAML::Flow << machines;
  y << YAML::Key << "hardware" << YAML::Value << YAML::Flow << YAML::BeginMap;
  for (const auto& [key, value] : calibrated_for(base))
    y << YAML::Key << key << YAML::Value << value;
  y << YAML::EndMap << YAML::EndMap << YAML::EndMap;
  return std::string("# the hardware fitted on: nocflow notes where another differs\n") +
         y.c_str() + "\n";
}

std::vector<std::string> calibration_notes(const std::string& file, const HwSpec& spec) {
  const YAML::Node scope = YAML::LoadFile(file)["fitted_for"];  // read before: a readable file
  if (!scope || !scope.IsMap()) return {};
  std::vector<std::string> notes;
  std::string changed;
  if (const YAML::Node fitted = scope["hardware"]; fitted && fitted.IsMap())
    for (const auto& [key, now] : calibrated_for(spec)) {
      const YAML::Node was = fitted[key];
      const std::string then = was && was.IsScalar() ? was.as<std::string>() : "(not set)";
      if (then != now) changed += (changed.empty() ? "" : ", ") + key + " " + then + " -> " + now;
    }
  if (!changed.empty())
    notes.push_back(file + " was fitted on other hardware (" + changed +
                    "): its paper B_NoC, latency and router contention may not carry over");
  std::vector<std::string> machines;
  if (const YAML::Node m = scope["machines"]; m && m.IsSequence())
    for (const auto& n : m) machines.push_back(n.as<std::string>());
  const std::string here = spec.topology.name();
  if (!machines.empty() && std::find(machines.begin(), machines.end(), here) == machines.end()) {
    std::string list;
    for (const auto& n : machines) list += (list.empty() ? "" : ", ") + n;
    notes.push_back(file + "'s paper B_NoC and latency were fitted on " + list + ", not on " +
                    here);
  }
  return notes;
}

void apply_calibration(const std::string& file, const HwSpec& spec, optimizer::HwDesc& hw,
                       std::ostream& out) {
  optimizer::apply_calibration_file(file, hw);
  for (const std::string& note : calibration_notes(file, spec)) out << "  note: " << note << "\n";
}

std::string training_optimizer(const optimizer::Graph& graph) {
  for (optimizer::NodeId id : graph.node_ids())
    if (const optimizer::Node& n = graph.node(id); n.kind == optimizer::OpKind::WeightUpdate)
      return n.attrs.optimizer;
  return "";
}

std::int64_t network_batch(const optimizer::Graph& graph) {
  for (optimizer::NodeId id : graph.node_ids()) {
    const optimizer::Node& n = graph.node(id);
    if (n.kind == optimizer::OpKind::Input && !n.output.shape.empty()) return n.output.shape[0];
  }
  return 1;
}

std::string priced_for_changes(const optimizer::Plan& plan, const HwSpec& spec) {
  const auto here = priced_for(spec);
  std::string changed;
  for (const auto& [key, value] : plan.priced_for) {
    const auto it =
        std::find_if(here.begin(), here.end(), [&](const auto& kv) { return kv.first == key; });
    const std::string now = it == here.end() ? "(not set)" : it->second;
    if (now != value) changed += (changed.empty() ? "" : ", ") + key + " " + value + " -> " + now;
  }
  return changed;
}

void record_priced_inputs(optimizer::Plan& plan, const HwSpec& spec,
                          const optimizer::Graph& graph) {
  plan.batch = static_cast<int>(network_batch(graph));
  plan.hardware = one_line_summary(spec);
  plan.priced_for = priced_for(spec);
  plan.train = training_optimizer(graph);
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
  const optimizer::PartitionSetup s = optimizer::setup_partition(
      graph, hw, *model, {false, true, true, placement_search, progress});
  const optimizer::SolveResult r = optimizer::make_solver(solver)->solve(s.problem, {60, "flow", "", false});
  return {optimizer::make_plan(s, r.choice, hw, *model, solver), s.tabulate_seconds, r.seconds};
}

}  // namespace nocflow::sim
