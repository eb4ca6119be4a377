// SPDX-License-Identifier: MIT
#include "sim/output/run_report.h"

#include <algorithm>
#include <cmath>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <unordered_map>

#include "noc/base/format.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/cost/pe_model.h"
#include "optimizer/plan/plan.h"
#include "sim/lower/workload_setup.h"

namespace nocflow::sim {

namespace opt = optimizer;

namespace {

constexpr const char* kPartialSums = "ALL_REDUCE (INPP partial sums)";  ///< a reduction's type

/// Each edge's simulated time: the network's part, from the first send to the last message's
/// arrival, not from when a receiver started waiting or to when it got round to its receive (a
/// saved activation waits for the backward pass). Barrier replay starts both at the barrier.
/// `skew`: from the first send to the last sending PE's first send, the part of the span spent
/// waiting for producers that finished later (dataflow replay).
struct EdgeTime {
  noc::Cycle span = 0, skew = 0;
};
std::vector<EdgeTime> edge_times(const RunResult& run, std::size_t edges) {
  std::vector<noc::Cycle> first(edges, noc::kNever), last(edges, 0);
  // Each sending PE's first send of each edge (an edge has a few senders of the many PEs).
  std::unordered_map<std::uint64_t, noc::Cycle> pe_first;
  for (const Span& s : run.spans) {
    if (s.edge < 0) continue;
    const auto e = static_cast<std::size_t>(s.edge);
    const bool recv = s.kind == StepKind::Recv;
    if (!recv) {
      first[e] = std::min(first[e], s.start);
      const auto [own, fresh] =
          pe_first.try_emplace(std::uint64_t{e} << 32 | static_cast<std::uint32_t>(s.pe), s.start);
      if (!fresh) own->second = std::min(own->second, s.start);
    }
    last[e] = std::max(last[e], recv ? s.arrived : s.end);
  }
  std::vector<noc::Cycle> ready(first);  // the latest of those, per edge
  for (const auto& [key, cycle] : pe_first) {
    noc::Cycle& r = ready[static_cast<std::size_t>(key >> 32)];
    r = std::max(r, cycle);
  }
  std::vector<EdgeTime> out(edges);
  for (std::size_t e = 0; e < edges; ++e)
    if (first[e] != noc::kNever) out[e] = {last[e] - first[e], ready[e] - first[e]};
  return out;
}

}  // namespace

std::vector<EdgeReport> edge_reports(const opt::Workload& workload, const Lowered& lowered,
                                     const RunResult& run, const opt::HwDesc& hw) {
  const auto paper = opt::make_cost_model("paper", hw);
  const opt::LinkloadModel linkload(hw);
  std::vector<EdgeReport> out(lowered.edges.size());
  const std::vector<EdgeTime> times = edge_times(run, lowered.edges.size());
  for (std::size_t e = 0; e < lowered.edges.size(); ++e) {
    const LoweredEdge& le = lowered.edges[e];
    EdgeReport& r = out[e];
    r.src = le.src;
    r.dst = le.dst;
    r.reduction = le.reduction;
    r.bytes = le.bytes;
    r.simulated_cycles = times[e].span;
    r.senders_skew_cycles = times[e].skew;
    const opt::PlacedLayer& s = lowered.layers[le.src_layer];
    const opt::PlacedLayer& d = lowered.layers[le.dst_layer];
    if (le.reduction) {  // linkload counts it in the layer's cost; paper in its outgoing edges'
      r.type = kPartialSums;
      r.linkload_cycles = linkload.reduction_time(*s.layer, s.choice).cycles();
      continue;
    }
    if (le.stage_input) {  // the models price layers placed from PE 0, not across bands
      r.type = optimizer::kStageInputType;
      continue;
    }
    r.type = opt::to_string(opt::redist_type(*s.layer, s.choice, *d.layer, d.choice));
    r.paper_cycles = paper->edge_cost(workload, workload.edges[e], s.choice, d.choice).cycles;
    r.linkload_cycles = linkload.edge_cost(workload, workload.edges[e], s.choice, d.choice).cycles;
  }
  return out;
}

std::vector<EdgeReport> program_edge_reports(const ProgramSet& programs,
                                             const std::vector<std::string>& edge_names,
                                             const RunResult& run) {
  std::vector<EdgeReport> out(edge_names.size());
  const std::vector<EdgeTime> times = edge_times(run, edge_names.size());
  for (std::size_t e = 0; e < edge_names.size(); ++e) {
    const std::string& name = edge_names[e];
    EdgeReport& r = out[e];
    const auto is_layer = [&](const std::string& n) {
      return std::find(programs.layer_names.begin(), programs.layer_names.end(), n) !=
             programs.layer_names.end();
    };
    const std::string inpp = ":inpp";
    if (name.size() > inpp.size() &&
        name.compare(name.size() - inpp.size(), inpp.size(), inpp) == 0) {
      r.src = r.dst = name.substr(0, name.size() - inpp.size());
      r.reduction = true;
      r.type = kPartialSums;
    } else {
      // SRC->DST, at the arrow whose two sides are layers (names may hold "->"), else the first.
      auto split = name.find("->");
      for (auto arrow = split; arrow != std::string::npos; arrow = name.find("->", arrow + 1))
        if (is_layer(name.substr(0, arrow)) && is_layer(name.substr(arrow + 2))) {
          split = arrow;
          break;
        }
      r.src = name.substr(0, split);
      if (split != std::string::npos) r.dst = name.substr(split + 2);
    }
    r.simulated_cycles = times[e].span;
    r.senders_skew_cycles = times[e].skew;
  }
  for (const auto& pe : programs.pe)
    for (const Step& s : pe)
      if (s.kind == StepKind::Send && s.edge >= 0)
        out[static_cast<std::size_t>(s.edge)].bytes += s.bytes;
  return out;
}

double noc_energy_pj(const RunResult& run, const HwSpec& hw) {
  return static_cast<double>(run.flit_hops) * hw.link.width_bytes * hw.energy.hop_pj_per_byte;
}

Energy run_energy(const opt::Workload& workload, const Lowered& lowered, const RunResult& run,
                  const HwSpec& hw) {
  Energy e;
  for (std::size_t l = 0; l < lowered.layers.size(); ++l) {
    const opt::PlacedLayer& pl = lowered.layers[l];
    const opt::PeWork w = opt::pe_work(*pl.layer, pl.choice, hw_desc_of(hw));
    e.mac_pj += static_cast<double>(workload.layers[l].macs) * hw.energy.mac_pj;
    e.sram_pj += static_cast<double>(w.sram_bytes) * pl.choice.nodes() * hw.energy.sram_pj_per_byte;
  }
  e.noc_pj = noc_energy_pj(run, hw);
  return e;
}

std::string relative_error(double predicted, double simulated) {
  if (predicted < 0 || simulated <= 0) return "";
  std::ostringstream o;
  o << std::fixed << std::setprecision(4) << (predicted - simulated) / simulated;
  return o.str();
}

void write_layers_csv(std::ostream& out, const Lowered* lowered,
                      const std::vector<LayerStats>& layers) {
  out << "layer,op,choice,pes,start_cycle,end_cycle,compute_cycles,communication_cycles,idle_cycles\n";
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const LayerStats& s = layers[l];
    const opt::PlacedLayer* pl = lowered ? &lowered->layers[l] : nullptr;
    out << csv_field(s.name) << "," << (pl ? csv_field(pl->layer->op) : "") << ","
        << (pl ? csv_field(pl->choice.str()) : "") << "," << (pl ? pl->choice.nodes() : s.pes)
        << "," << s.start << "," << s.end << "," << s.compute << "," << s.communication << ","
        << s.idle << "\n";
  }
}

void write_transfers_csv(std::ostream& out, const std::vector<EdgeReport>& edges) {
  out << "src,dst,type,bytes,predicted_paper_cycles,predicted_linkload_cycles,simulated_cycles,"
         "senders_skew_cycles,relative_error_paper,relative_error_linkload\n";
  // Predictions to 0.01 cycle (a calibrated B_NoC makes 17-digit quotients): the 4-digit
  // errors recompute from them.
  const auto cycles = [](double c) { return shortest(std::round(c * 100) / 100); };
  for (const EdgeReport& r : edges) {
    out << csv_field(r.src) << "," << csv_field(r.dst) << "," << csv_field(r.type) << "," << r.bytes
        << ",";
    if (r.paper_cycles >= 0) out << cycles(r.paper_cycles);
    out << ",";
    if (r.linkload_cycles >= 0) out << cycles(r.linkload_cycles);
    out << "," << r.simulated_cycles << "," << r.senders_skew_cycles << ","
        << relative_error(r.paper_cycles, r.simulated_cycles) << ","
        << relative_error(r.linkload_cycles, r.simulated_cycles) << "\n";
  }
}

void write_links_csv(std::ostream& out, const RunResult& run, int width_bytes) {
  out << "from,to,flits,bytes,utilisation_flits_per_cycle" << noc::kSpanHeader << "\n";
  out << std::fixed << std::setprecision(6);
  for (const auto& l : run.links) {
    out << csv_field(l.from) << "," << csv_field(l.to) << "," << l.flits << ","
        << l.flits * width_bytes << "," << l.utilisation;
    noc::write_span_fields(out, l);
    out << "\n";
  }
}

void print_transfers_table(std::ostream& out, const std::vector<EdgeReport>& edges) {
  if (edges.empty()) {
    out << "  transfers        none (no layer reads another's output, no INPP reduction)\n";
    return;
  }
  // One PE, or a plan that keeps every layer where its input is: a table of zeros says nothing.
  if (std::all_of(edges.begin(), edges.end(),
                  [](const EdgeReport& e) { return e.bytes == 0 && e.simulated_cycles == 0; })) {
    out << "  transfers        " << edges.size()
        << (edges.size() == 1 ? " edge moves" : " edges move")
        << " nothing: every layer's input is where it runs (transfers.csv lists them)\n";
    return;
  }
  std::vector<const EdgeReport*> shown;
  for (const auto& e : edges) shown.push_back(&e);
  std::stable_sort(shown.begin(), shown.end(),
                   [](auto* x, auto* y) { return x->simulated_cycles > y->simulated_cycles; });
  if (shown.size() > 12) shown.resize(12);
  auto name_of = [](const EdgeReport& e) {
    return e.reduction ? e.src + ":inpp" : e.src + " -> " + e.dst;
  };
  std::size_t width = 4;  // the names' column, up to 80 characters; longer names lose their middle
  for (const EdgeReport* e : shown)
    width = std::max(width, std::min<std::size_t>(80, name_of(*e).size()));
  auto shorten = [width](const std::string& s) {
    if (s.size() <= width) return s;
    const std::size_t head = (width - 3) / 2;
    return s.substr(0, head) + "..." + s.substr(s.size() - (width - 3 - head));
  };
  const auto reductions =
      std::count_if(edges.begin(), edges.end(), [](const EdgeReport& e) { return e.reduction; });
  out << "  transfers (" << edges.size() - static_cast<std::size_t>(reductions) << " layer edges"
      << (reductions ? " and " + std::to_string(reductions) +
                           (reductions == 1 ? " INPP reduction" : " INPP reductions")
                     : "")
      << "; the " << shown.size() << " longest; cycles; err(ll) = linkload / simulated - 1):\n"
      << "    " << std::left << std::setw(static_cast<int>(width) + 1) << "edge" << std::setw(12)
      << "type" << std::right << std::setw(11) << "bytes" << std::setw(10) << "paper"
      << std::setw(10) << "linkload" << std::setw(10) << "simulated" << std::setw(7) << "skew"
      << std::setw(9) << "err(ll)" << "\n";
  // The seed prices NONE at nothing and LOCAL as a local copy of 1 % of the tensor; an exact
  // transfer list can move more between PEs (halos, all-gathers among OUTP peers): marked, so
  // that its bytes do not look like an error.
  auto seed_calls_free = [](const EdgeReport& e) {
    return !e.reduction && e.bytes > 0 && (e.type == "NONE" || e.type == "LOCAL");
  };
  for (const EdgeReport* e : shown) {
    const std::string type = e->reduction ? "ALL_REDUCE" : e->type + (seed_calls_free(*e) ? "*" : "");
    out << "    " << std::left << std::setw(static_cast<int>(width) + 1) << shorten(name_of(*e))
        << std::setw(12) << type << std::right << std::setw(11) << e->bytes << std::setw(10)
        << (e->paper_cycles >= 0 ? fixed(e->paper_cycles, 0) : "-") << std::setw(10)
        << (e->linkload_cycles >= 0 ? fixed(e->linkload_cycles, 0) : "-") << std::setw(10)
        << e->simulated_cycles << std::setw(7) << e->senders_skew_cycles << std::setw(9)
        << (e->linkload_cycles >= 0 && e->simulated_cycles > 0
                ? signed_percent(e->linkload_cycles / static_cast<double>(e->simulated_cycles) - 1)
                : "")
        << "\n";
  }
  if (std::any_of(shown.begin(), shown.end(), [](const EdgeReport* e) { return e->senders_skew_cycles > 0; }))
    out << "    skew: of the simulated cycles, those before the last sender's first send (its producer\n"
           "      finished later); the models price an edge whose senders start together\n";
  if (std::any_of(shown.begin(), shown.end(), [&](const EdgeReport* e) { return seed_calls_free(*e); }))
    out << "    * the seed's Type function prices NONE at nothing and LOCAL as a local copy of 1 % of the\n"
           "      tensor; the exact transfers move these bytes between PEs (halo rows, all-gathers, ...)\n";
}

}  // namespace nocflow::sim
