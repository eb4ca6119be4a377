// SPDX-License-Identifier: MIT
// What a plan's replay measured, as `nocflow simulate` writes and prints it (replay_summary.h).
#include "sim/output/replay_summary.h"

#include <algorithm>
#include <iomanip>

#include "noc/base/format.h"
#include "sim/output/build_id.h"

namespace nocflow::sim {

namespace opt = nocflow::optimizer;

/// The console's traffic and simulation lines.
void print_traffic(std::ostream& out, const RunResult& r) {
  out << "  traffic          " << counted(r.messages, "message") << ", "
      << counted(r.packets, "packet") << ", " << counted(r.flits, "flit") << ", "
      << counted(r.bytes, "byte") << "; every message received once, network drained\n"
      << "  simulation       " << fixed(r.wall_seconds, 3) << " s wall, "
      << fixed(r.wall_seconds > 0 ? r.flits / r.wall_seconds / 1e6 : 0, 2) << " M flits/s\n";
}

/// The units of add_traffic's fields, into summary.json's "units".
void add_traffic_units(nlohmann::ordered_json& units) {
  units["messages / packets / flits"] = "counts over the run (flits of link.width_bytes each)";
  units["bytes"] = "bytes";
  units["flit_hops"] =
      "flits x hops (router-to-router links; 1 on a crossbar); NoC energy = flit_hops x link "
      "width x energy.hop_pj_per_byte";
  units["steps"] = "program steps the PEs ran (compute, send, receive, reduce, barrier)";
  units["wall_seconds"] = "seconds (wall clock; varies run to run, with flits_per_second)";
}

/// The run's traffic and wall time into summary.json.
void add_traffic(nlohmann::ordered_json& j, const RunResult& r) {
  j["messages"] = r.messages;
  j["packets"] = r.packets;
  j["flits"] = r.flits;
  j["bytes"] = r.bytes;
  j["flit_hops"] = r.flit_hops;
  j["steps"] = r.spans.size();
  j["wall_seconds"] = r.wall_seconds;
  j["flits_per_second"] = r.wall_seconds > 0 ? static_cast<double>(r.flits) / r.wall_seconds : 0;
}

Measured measure(RunResult run, const opt::Workload& workload, const Lowered& lowered,
                 const opt::Plan& replayed, const opt::HwDesc& hw, const HwSpec& spec,
                 ExecMode mode) {
  Measured m;
  m.layers = layer_stats(run, lowered.programs.layer_names);
  m.totals = run_totals(run);
  m.edges = edge_reports(workload, lowered, run, hw);
  m.energy = run_energy(workload, lowered, run, spec);
  m.seconds = static_cast<double>(run.total_cycles) / (spec.clock.frequency_ghz * 1e9);
  m.memory = plan_memory(lowered, workload);
  m.fullest_pe =
      static_cast<std::size_t>(std::max_element(m.memory.begin(), m.memory.end(),
                                                [](const PeMemoryPlan& x, const PeMemoryPlan& y) {
                                                  return x.peak_bytes < y.peak_bytes;
                                                }) -
                               m.memory.begin());
  m.in_use = run_memory(m.memory, lowered.programs, run.spans);
  if (replayed.pipelined())
    m.pipeline =
        pipeline_run(replayed, workload, m.layers, mode == ExecMode::Barrier ? &run : nullptr);
  m.run = std::move(run);
  return m;
}

nlohmann::ordered_json train_json(const std::string& train) {
  return train.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(train);
}

/// summary.json. `stale`: why the plan's predicted total does not apply to this run.
nlohmann::ordered_json summary_json(const ReplaySource& a, const std::string& network,
                                    const opt::Plan& plan, const std::vector<std::string>& stale,
                                    const HwSpec& spec, const Measured& m) {
  const RunResult& r = m.run;
  const PeMemoryPlan& fullest = m.fullest();
  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();  // the version and commit that wrote it
  j["network"] = network;
  j["batch"] = a.batch;
  j["train"] = train_json(a.train);
  j["mode"] = a.mode;
  j["plan"] = a.plan_file.empty() ? "solved: " + a.solved_by : a.plan_file;
  j["total_cycles"] = r.total_cycles;
  j["total_seconds"] = m.seconds;
  j["compute_cycles"] = m.totals.compute;
  j["communication_cycles"] = m.totals.communication;
  j["predicted_total_cycles"] = plan.predicted_cycles();
  j["predicted_by"] = plan.cost_model;
  // Empty when the plan's total applies to this run; else why not (batch, network, train,
  // hardware: the notes printed).
  j["predicted_total_does_not_apply"] = stale;
  // With --plan the total is the plan file's, priced when it was made; --calibration then
  // applies to the transfer table only.
  j["predicted_total_from"] = a.plan_file.empty()       ? "this solve"
                              : a.micro_batches_changed ? "the plan file's stages"
                                                        : "the plan file";
  j["calibration"] =
      a.calibration;  // of the predictions (and of the solve without --plan); empty: none
  j["energy_pj"] = {{"mac", m.energy.mac_pj},
                    {"sram", m.energy.sram_pj},
                    {"noc", m.energy.noc_pj},
                    {"total", m.energy.total()}};
  j["memory_plan"] = {{"peak_bytes", fullest.peak_bytes},
                      {"pe", m.fullest_pe},
                      {"live_peak_bytes", fullest.live_peak_bytes},
                      {"no_reuse_bytes", fullest.no_reuse_bytes},
                      {"sram_bytes", spec.pe.sram_bytes},
                      {"fits_sram", fullest.peak_bytes <= spec.pe.sram_bytes}};
  j["memory_in_use"] = {{"peak_bytes", m.in_use.peak_bytes},
                        {"pe", m.in_use.pe},
                        {"cycle", m.in_use.cycle},
                        {"plan_bytes", m.in_use.peak_bytes - m.in_use.early_bytes},
                        {"early_message_bytes", m.in_use.early_bytes},
                        {"early_message_peak_bytes", m.in_use.early_peak_bytes},
                        {"early_message_peak_pe", m.in_use.early_peak_pe},
                        {"fits_sram", m.in_use.peak_bytes <= spec.pe.sram_bytes}};
  if (plan.pipelined()) {
    nlohmann::ordered_json stages = nlohmann::ordered_json::array();
    for (std::size_t s = 0; s < plan.stages.size(); ++s)
      stages.push_back({{"first", plan.stages[s].first},
                        {"last", plan.stages[s].last},
                        {"first_pe", plan.stages[s].first_pe},
                        {"pes", plan.stages[s].pes},
                        {"predicted_cycles", plan.stages[s].cycles},
                        {"simulated_cycles", m.pipeline.stage_cycles[s]}});
    j["pipeline"] = {
        {"micro_batches", plan.micro_batches},
        {"interval_cycles", plan.micro_batches > 1 ? nlohmann::ordered_json(m.pipeline.interval)
                                                   : nlohmann::ordered_json()},
        {"stages", stages}};
  }
  add_traffic(j, r);
  j["units"] = {
      {"*_cycles", "clock cycles"},
      {"total_seconds", "seconds of simulated time"},
      {"energy_pj", "picojoules"},
      {"pipeline",
       "cycles per micro-batch and stage: predicted, and simulated as the mean over micro-batches "
       "from when the stage could start (its previous micro-batch done, and the inputs from other "
       "stages of one of its first layers there) to the end of its last layer, in barrier replay "
       "its phases between barriers summed (an edge's to the stage that pays it); "
       "interval_cycles: mean cycles between "
       "micro-batches leaving the last stage (null with one micro-batch)"},
      {"memory_plan",
       "bytes of SRAM on the PE whose static memory plan peaks highest (memory.csv): planned "
       "peak, most bytes live at one step, all buffers without reuse; fits_sram: the peak is "
       "within pe.sram_bytes (the run's cycles assume it is, whether or not)"},
      {"memory_in_use",
       "bytes during the run on the PE where most are live at once (peak_bytes, at that cycle): "
       "plan_bytes, the memory plan's live buffers of the step it is in (memory_plan's figures "
       "are another PE's where its packing peaks higher), plus early_message_bytes, messages "
       "complete before the plan counts them (before their buffer's first receive step; a "
       "reduction round's, before its own); early_message_peak_bytes: the most bytes of early "
       "messages at once on one PE; fits_sram: peak_bytes is within pe.sram_bytes"},
      {"compute_cycles / communication_cycles", kRunTotalsUnits}};
  add_traffic_units(j["units"]);
  return j;
}

/// The console's figures of the run: totals, energy, memory, traffic, pipeline stages.
void print_measured(std::ostream& out, const ReplaySource& a, const opt::Plan& plan,
                    const HwSpec& spec, const Measured& m) {
  const RunResult& r = m.run;
  const PeMemoryPlan& fullest = m.fullest();
  const auto [per, unit] = energy_unit(m.energy.total());  // the parts in the total's unit
  out << "  total            " << r.total_cycles << " cycles = " << fixed(m.seconds * 1e6, 3)
      << " us"
      << " (predicted by " << plan.cost_model
      << (a.plan_file.empty()       ? ""
          : a.micro_batches_changed ? " from the plan file's stages"
                                    : " in the plan file")
      << ": " << fixed(plan.predicted_cycles()) << " cycles)\n"
      << run_totals_line(m.totals) << "  energy           " << fixed(m.energy.total() / per, 3)
      << " " << unit << " (MAC " << fixed(m.energy.mac_pj / per, 3) << ", SRAM "
      << fixed(m.energy.sram_pj / per, 3) << ", NoC " << fixed(m.energy.noc_pj / per, 3) << " "
      << unit << ")\n"
      << "  memory plan      " << fullest.peak_bytes << " bytes of SRAM at most (PE "
      << m.fullest_pe << "; " << fullest.live_peak_bytes << " bytes live at once, "
      << fullest.no_reuse_bytes << " bytes without reuse; the PE holds " << spec.pe.sram_bytes
      << " bytes)\n"
      << "  memory in use    " << m.in_use.peak_bytes << " bytes live at once at most (PE "
      << m.in_use.pe << ", cycle " << m.in_use.cycle << "; ";
  if (m.in_use.early_peak_bytes == 0)
    out << "no message arrived before the plan counts it)\n";
  else
    out << m.in_use.early_bytes
        << " bytes of it messages that arrived before the plan counts them; at most "
        << m.in_use.early_peak_bytes << " bytes of such messages at once, PE "
        << m.in_use.early_peak_pe << ")\n";
  print_traffic(out, r);
  if (const std::string note = sram_overflow_note(fullest.peak_bytes, m.fullest_pe, m.in_use, spec.pe.sram_bytes);
      !note.empty())
    out << "  note: " << note << "\n";
  if (plan.pipelined()) {
    double bottleneck = 0;
    for (const auto& st : plan.stages) bottleneck = std::max(bottleneck, st.cycles);
    out << "  pipeline         " << counted(static_cast<std::int64_t>(plan.stages.size()), "stage")
        << ", " << counted(plan.micro_batches, "micro-batch");
    if (plan.micro_batches > 1 && m.pipeline.interval > 0) {
      out << ": one left the last stage every " << fixed(m.pipeline.interval, 0) << " cycles";
      if (a.mode == "barrier")  // one micro-batch after another: no stage overlaps, no bottleneck
        out << " (barrier replay: one micro-batch after another)";
      else if (a.predictions_stale)  // a batch of 3's bottleneck against a batch of 1's interval
        out << " (the plan's predicted bottleneck " << fixed(bottleneck, 0) << " does not apply)";
      else
        out << " (predicted bottleneck " << fixed(bottleneck, 0) << ", error "
            << signed_percent(bottleneck / m.pipeline.interval - 1) << ")";
    }
    out << "\n    stage  " << std::setw(12) << "PEs" << std::setw(14) << "predicted"
        << std::setw(14) << "simulated"
        << "   (cycles per micro-batch; simulated: mean "
        << (a.mode == "barrier" ? "of its phases between barriers summed)\n"
                                : "from when it could start to its end)\n");
    for (std::size_t s = 0; s < plan.stages.size(); ++s) {
      const opt::PlanStage& st = plan.stages[s];
      out << "    " << std::setw(5) << s << "  " << std::setw(12) << st.pe_range() << std::setw(14)
          << fixed(st.cycles, 0) << std::setw(14) << fixed(m.pipeline.stage_cycles[s], 0) << "\n";
    }
  }
}

}  // namespace nocflow::sim
