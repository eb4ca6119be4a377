// SPDX-License-Identifier: MIT
#include "optimizer/plan/pipeline.h"

#include <algorithm>
#include <chrono>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/plan/stage_pricer.h"

namespace nocflow::optimizer {

int pipeline_units(const HwDesc& hw) {
  return hw.mesh() ? hw.topology.rows : hw.topology.ports;
}
int pes_per_unit(const HwDesc& hw) {
  return hw.mesh() ? hw.topology.cols : 1;
}

void check_pipeline_options(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                            const PipelineOptions& o) {
  make_solver(o.solver);
  make_cost_model(cost_model, hw);
  if (o.micro_batches < 1)
    throw InputError("--micro-batches: must be at least 1 (got " + std::to_string(o.micro_batches) +
                     ")");
  const int units = pipeline_units(hw), n = static_cast<int>(build_workload(graph).layers.size());
  if (o.stages < 1 || o.stages > std::min(units, n))
    throw InputError("--stages: " + std::to_string(o.stages) + " stages need as many " +
                     (hw.mesh() ? "mesh rows" : "crossbar ports") + " and layers; " +
                     hw.topology.name() + " has " + counted(units, hw.mesh() ? "row" : "port") +
                     ", " + graph.name() + " has " + counted(n, "layer") + " (1 to " +
                     std::to_string(std::min(units, n)) + ")");
}

namespace {

/// Each layer's choice in `split`, as its stage was priced (StagePricer::solve keeps it).
std::vector<Choice> split_choices(StagePricer& pricer, const StageSplit& split) {
  std::vector<Choice> chosen;
  for (int s = 0; s < split.stages(); ++s) {
    const StagePricer::Solved st = pricer.solve(split.begin[s], split.begin[s + 1], split.units[s]);
    for (std::size_t v = 0; v < st.setup.choices.size(); ++v)
      chosen.push_back(st.setup.choices[v][static_cast<std::size_t>(st.result.choice[v])]);
  }
  return chosen;
}

/// Per workload edge whose producer's stage pays it in `split` (producer_pays), the copies of
/// its tensor its consumer's choice there needs (1 for every other edge); empty unless some
/// such stage sends more than one, on `sent` edges.
std::vector<double> copies_sent(const Workload& w, StagePricer& pricer, const StageSplit& split,
                                int& sent) {
  const std::vector<Choice> chosen = split_choices(pricer, split);
  std::vector<int> end_of(w.layers.size());  // the end of each layer's stage
  for (int s = 0; s < split.stages(); ++s)
    for (int l = split.begin[s]; l < split.begin[s + 1]; ++l)
      end_of[static_cast<std::size_t>(l)] = split.begin[s + 1];
  std::vector<double> copies(w.edges.size(), 1.0);
  sent = 0;
  for (std::size_t i = 0; i < w.edges.size(); ++i) {
    const LayerEdge& e = w.edges[i];
    const int end = end_of[static_cast<std::size_t>(e.src)];
    if (e.dst < end || !producer_pays(e, end)) continue;  // not a producer's stage's to send
    const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
    const Choice& c = chosen[static_cast<std::size_t>(e.dst)];
    if (const auto once = static_cast<double>(dst.inputs[static_cast<std::size_t>(e.input)].bytes);
        once > 0)
      copies[i] = std::max(1.0, input_share(dst, e.input, c) * c.nodes() / once);
    sent += copies[i] > 1;
  }
  return sent > 0 ? copies : std::vector<double>{};
}

}  // namespace

PipelineResult solve_pipeline(const Graph& graph, const HwDesc& hw, const std::string& cost_model,
                              const PipelineOptions& o) {
  const auto t0 = std::chrono::steady_clock::now();
  check_pipeline_options(graph, hw, cost_model, o);  // before any work
  const Workload w = build_workload(graph);
  const int units = pipeline_units(hw), n = static_cast<int>(w.layers.size());
  StagePricer pricer(w, hw, o, cost_model);
  PipelineResult out;
  const auto split = [&] {
    return split_min_max_units(
        n, o.stages, units,
        [&](int first, int end, int q, double cutoff) {
          return pricer.cost(first, end, q, cutoff);
        },
        [&](int first, int end, int q) { return pricer.lower_bound(first, end, q); });
  };
  try {
    out.split = split();
    // The copies of an edge between stages slow the stage that sends them, which cannot know
    // how many its consumer's choice needs: the split found, its choices tell, and the stages
    // are split again with the producers paying them.
    if (std::vector<double> copies = copies_sent(w, pricer, out.split, out.copied_edges);
        !copies.empty()) {
      pricer.reprice(copies);
      out.first_split = std::move(out.split);
      out.split = split();
      out.copies = std::move(copies);
    }
  } catch (const InputError& e) {
    std::string why = pricer.why;
    // A layer that fits a band on none of its choices fits no stage there, and a narrower band
    // needs more SRAM: an even split's band, the widest every stage can have at once, says
    // what the pipeline needs (the first failing band, one unit, asked for more).
    if (const int even = units / o.stages; why.empty() && even >= 1)
      why = pricer.band(even).why_not();
    for (const auto& b : pricer.bands)
      if (why.empty() && b) why = b->why_not();
    throw InputError(std::string(e.what()) + (why.empty() ? "" : "; for example: " + why));
  }
  out.whole_machine_cycles = pricer.cost(0, n, units).cost;
  {
    const int even = units / o.stages;
    std::vector<double> times;
    for (int l = 0; l < n; ++l) times.push_back(pricer.lower_bound(l, l + 1, even));
    out.balanced = split_balanced(times, o.stages);
    for (int s = 0; s < o.stages; ++s) {
      const int q = even + (s < units % o.stages);
      out.balanced.units.push_back(q);
      out.balanced.cost[static_cast<std::size_t>(s)] =
          pricer
              .cost(out.balanced.begin[static_cast<std::size_t>(s)],
                    out.balanced.begin[static_cast<std::size_t>(s) + 1], q)
              .cost;
    }
  }

  // The plan: each stage's own plan on its band (as priced), moved to the band's PEs, then its
  // stage inputs.
  Plan& plan = out.plan;
  plan.network = graph.name();
  plan.cost_model = cost_model;
  plan.solver = "pipeline/" + o.solver;
  plan.pes = hw.num_pes();
  plan.topology = hw.topology.name();
  plan.micro_batches = o.micro_batches;
  plan.resident_weights = o.resident_weights;
  int first_pe = 0;
  const std::vector<Choice> chosen = split_choices(pricer, out.split);
  std::vector<int> stage_of(w.layers.size(), 0);
  for (int s = 0; s < out.split.stages(); ++s)
    for (int l = out.split.begin[s]; l < out.split.begin[s + 1]; ++l)
      stage_of[static_cast<std::size_t>(l)] = s;
  for (int s = 0; s < out.split.stages(); ++s) {
    const int first = out.split.begin[s], end = out.split.begin[s + 1], q = out.split.units[s];
    Band& b = pricer.tabulated(q);
    StagePricer::Solved st = pricer.solve(first, end, q);
    if (const auto it = pricer.resident_fits.find({first, end, q});
        it != pricer.resident_fits.end() && !it->second.note.empty())
      out.notes.push_back("stage " + std::to_string(s) + ": " + it->second.note);
    Plan part = make_plan(st.setup, st.result.choice, b.hw, *b.model, plan.solver);
    out.resident_bytes.push_back(StagePricer::stage_bytes(st.setup, st.result.choice));
    for (PlanLayer& l : part.layers) {
      for (int& pe : l.pes) pe += first_pe;
      l.stage = s;
      plan.layers.push_back(std::move(l));
    }
    for (PlanEdge& e : part.edges) plan.edges.push_back(std::move(e));
    plan.compute_cycles += part.compute_cycles;
    plan.redistribution_cycles += part.redistribution_cycles;
    plan.energy_pj += part.energy_pj;
    plan.activation_bytes += part.activation_bytes;
    for (std::size_t i = 0; i < w.edges.size(); ++i) {
      const LayerEdge& e = w.edges[i];
      if (e.src >= first || e.dst < first || e.dst >= end) continue;  // not this stage's input
      const Layer& src = w.layers[static_cast<std::size_t>(e.src)];
      const Layer& dst = w.layers[static_cast<std::size_t>(e.dst)];
      const Choice& c = chosen[static_cast<std::size_t>(e.dst)];
      // The cycles of the stage that pays it (crossing_payer), as priced there.
      const int producer_stage = stage_of[static_cast<std::size_t>(e.src)];
      const int producer_end = out.split.begin[producer_stage + 1];
      double cycles = 0;
      switch (crossing_payer(e, producer_end, first)) {
        case CrossingPayer::Consumer:
          cycles = pricer.stage_input_cycles(src, dst, e.input, c, q);
          break;
        case CrossingPayer::Producer:
          cycles = pricer.output_cycles(i, chosen[static_cast<std::size_t>(e.src)]) +
                   pricer.copies_cycles(i, c);
          break;
        case CrossingPayer::Neither:
          cycles = pricer.copies_cycles(i, c);
          break;
      }
      // Energy: every consumer PE's share (copies of what is not split) over the mean route.
      const double bytes = input_share(dst, e.input, c) * c.nodes();
      const double pj = bytes * stage_input_hops(hw, q) * hw.hop_pj_per_byte;
      plan.edges.push_back({src.name, dst.name, e.input, kStageInputType, bytes, cycles, pj});
      plan.redistribution_cycles += cycles;
      plan.energy_pj += pj;
    }
    const int pes = q * pes_per_unit(hw);
    plan.stages.push_back({w.layers[static_cast<std::size_t>(first)].name,
                           w.layers[static_cast<std::size_t>(end - 1)].name, q, first_pe, pes,
                           out.split.cost[static_cast<std::size_t>(s)]});
    first_pe += pes;
  }
  out.ranges_priced = pricer.priced;
  out.ranges_stopped = pricer.stopped;
  // Layers are in workload order (stages are contiguous); edges stage by stage.
  plan.pipeline_cycles = out.split.pipeline_cost(o.micro_batches);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace nocflow::optimizer
