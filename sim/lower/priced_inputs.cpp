// SPDX-License-Identifier: MIT
#include "sim/lower/priced_inputs.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <set>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/cost/paper_calibration.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/passes/pass_manager.h"
#include "sim/config/hw_loader.h"
#include "sim/config/param.h"

namespace nocflow::sim {
namespace {

/// one_line_summary as plans written before priced_for have it (session 21 and earlier): no
/// pipeline, array or SRAM, and a crossbar's with its routing.
std::string legacy_one_line_summary(const HwSpec& h) {
  std::ostringstream s;
  s << topology_summary(h) << ", router " << h.router.preset << ": " << h.router.vcs << " VCs x "
    << h.router.buffer_depth << " flits, " << h.router.routing << ", " << h.link.width_bytes
    << " B/flit, link " << h.link.latency << " cycle(s), NI " << h.ni.channels
    << (h.ni.channels == 1 ? " channel, " : " channels, ") << format_value(h.clock.frequency_ghz)
    << " GHz, " << h.pe.macs_per_cycle << " MACs/cycle/PE";
  return s.str();
}

/// one_line_summary as written before session 86: "link 1 cycle(s)".
std::string cycles_as_before_session_86(std::string summary, const HwSpec& h) {
  const std::string link = "link " + counted(h.link.latency, "cycle") + ",";
  if (const std::size_t at = summary.find(link); at != std::string::npos)
    summary.replace(at, link.size(), "link " + std::to_string(h.link.latency) + " cycle(s),");
  return summary;
}

/// Whether two --calibration paths name the same file ("" for none: the same only as "").
bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return a == b;
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea),
             cb = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

/// router.alloc_iterations `then` (a calibration file's) runs as many iterations on this machine
/// as spec's: 1 and 0 (by topology) are one iteration on a mesh router.
bool same_iterations(const std::string& key, const std::string& then, const HwSpec& spec) {
  if (key != "router.alloc_iterations" || then.empty() || then.size() > 9 ||
      !std::all_of(then.begin(), then.end(), [](unsigned char c) { return std::isdigit(c); }))
    return false;
  noc::RouterSpec was = spec.router;
  was.alloc_iterations = std::stoi(then);
  return noc::alloc_iterations_for(was, spec.topology) ==
         noc::alloc_iterations_for(spec.router, spec.topology);
}

}  // namespace

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
      "ni.channels",          "lowering.all_gather"};
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
         p.path.rfind("ni.", 0) == 0 || p.path.rfind("lowering.", 0) == 0) &&
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
      // A key the file does not name (it predates the key) was at its default.
      const YAML::Node was = fitted[key];
      std::string then = "(not set)";
      if (was && was.IsScalar())
        then = was.as<std::string>();
      else if (const Param* p = find_param(key))
        then = format_value(p->default_value);
      if (then != now && !same_iterations(key, then, spec))
        changed += (changed.empty() ? "" : ", ") + key + " " + then + " -> " + now;
    }
  if (!changed.empty())
    notes.push_back(file + " was fitted on other hardware (" + changed +
                    "): its paper B_NoC, latency and router contention may not carry over");
  std::vector<std::string> machines;
  if (const YAML::Node m = scope["machines"]; m && m.IsSequence())
    for (const auto& n : m)
      if (n.IsScalar()) machines.push_back(n.Scalar());  // else no name: no note
  const std::string here = spec.topology.name();
  if (!machines.empty() && std::find(machines.begin(), machines.end(), here) == machines.end()) {
    std::string list;
    for (const auto& n : machines) list += (list.empty() ? "" : ", ") + n;
    notes.push_back(file + "'s paper B_NoC and latency were fitted on " + list + ", not on " +
                    here);
  }
  return notes;
}

std::vector<std::string> apply_calibration(const std::string& file, const HwSpec& spec,
                                           optimizer::HwDesc& hw, bool linkload) {
  optimizer::apply_calibration_file(file, hw);
  if (linkload && !hw.router_slowdown_missing.empty()) throw InputError(hw.router_slowdown_missing);
  std::vector<std::string> notes;
  if (linkload && !hw.router_slowdown)  // a paper-only file: it changed nothing linkload prices
    notes.push_back(file +
                    " has no linkload section: linkload prices without router "
                    "contention, as uncalibrated (nocflow validate --calibrate writes one)");
  for (std::string& note : calibration_notes(file, spec)) notes.push_back(std::move(note));
  return notes;
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
    if (key.rfind("energy.", 0) == 0 || key == "pe.sram_bytes") continue;  // not in the cycles
    const auto it =
        std::find_if(here.begin(), here.end(), [&](const auto& kv) { return kv.first == key; });
    const std::string now = it == here.end() ? "(not set)" : it->second;
    if (now != value) changed += (changed.empty() ? "" : ", ") + key + " " + value + " -> " + now;
  }
  return changed;
}

void record_priced_inputs(optimizer::Plan& plan, const HwSpec& spec, const optimizer::Graph& graph,
                          const std::string& passes) {
  plan.batch = static_cast<int>(network_batch(graph));
  plan.hardware = one_line_summary(spec);
  plan.priced_for = priced_for(spec);
  plan.train = training_optimizer(graph);
  plan.passes = optimizer::canonical_pass_list(passes);
}

std::vector<std::pair<std::string, std::string>> plan_mismatches(const optimizer::Plan& plan,
                                                                 const optimizer::Graph& graph,
                                                                 std::int64_t activation_bytes,
                                                                 const HwSpec& spec) {
  std::vector<std::pair<std::string, std::string>> out;
  const std::int64_t batch = network_batch(graph);
  if (plan.batch > 0 && plan.batch != batch)
    out.emplace_back("batch", "batch " + std::to_string(plan.batch) + ", this run is batch " +
                                  std::to_string(batch));
  else if (plan.activation_bytes > 0 && plan.activation_bytes != activation_bytes)
    out.emplace_back("network", "a network whose layers output " +
                                    std::to_string(plan.activation_bytes) + " bytes, this one's " +
                                    std::to_string(activation_bytes) +
                                    " (other shapes or element size)");
  // Training graphs with other weight updates (a plan for inference against a training graph
  // is refused when the plan is read).
  if (const std::string here = training_optimizer(graph);
      plan.train && !plan.train->empty() && !here.empty() && *plan.train != here)
    out.emplace_back("train", "training with " + *plan.train + ", this run trains with " + here);
  if (!plan.priced_for.empty()) {  // the keys the cost model read, as `optimize` saw them
    if (const std::string changed = priced_for_changes(plan, spec); !changed.empty())
      out.emplace_back("hardware", "other hardware (" + changed + ")");
  } else if (const std::string now = one_line_summary(spec);
             !plan.hardware.empty() && plan.hardware != now &&
             plan.hardware != legacy_one_line_summary(spec) &&
             plan.hardware != cycles_as_before_session_86(now, spec)) {  // before priced_for
    out.emplace_back("hardware", plan.hardware);
  }
  return out;
}

std::string batch_hint(const optimizer::Plan& plan, const optimizer::Graph& graph,
                       const std::string& network) {
  const std::int64_t batch = network_batch(graph);
  if (plan.batch <= 0 || plan.batch == batch) return "";
  // A zoo network takes any batch; a file one that it leaves open (a YAML input's `batch`, an
  // ONNX model's dynamic axis): load it at the plan's to know (this is an error's hint only).
  bool takes = network.rfind("zoo:", 0) == 0;
  if (!takes) try {
      optimizer::load_network(network, optimizer::ZooOptions{plan.batch});
      takes = true;
    } catch (const InputError&) {
    }
  return " (the plan was made for batch " + std::to_string(plan.batch) +
         ", this network has batch " + std::to_string(batch) +
         (takes ? ": add --batch " + std::to_string(plan.batch) : "") + ")";
}

std::string calibration_mismatch(const optimizer::Plan& plan, const std::string& calibration) {
  auto priced = [](const std::string& file) {
    return file.empty() ? std::string("uncalibrated") : "with --calibration " + file;
  };
  std::string then;
  if (plan.bnoc) {  // optimize --bnoc, which simulate does not take
    std::ostringstream bnoc;
    bnoc << *plan.bnoc;
    then = "with --bnoc " + bnoc.str() + " (the paper model's B_NoC, bytes/cycle)";
  } else if (plan.calibration && !same_file(*plan.calibration, calibration)) {
    then = priced(*plan.calibration);
  }
  if (then.empty()) return "";
  return "the plan was priced " + then + ", this run prices its edges " + priced(calibration) +
         ": the predicted total is the plan's, the edge table this run's";
}

}  // namespace nocflow::sim
