// SPDX-License-Identifier: MIT
#include "sim/output/layer_stats.h"

#include <algorithm>
#include <map>
#include <unordered_map>

#include "optimizer/plan/stage_pricer.h"

namespace nocflow::sim {
namespace {

bool busy(StepKind k) { return k == StepKind::Compute || k == StepKind::Reduce; }

/// A barrier replay's cycles by [micro-batch][stage] (PipelineRun::stage_cycles): each phase,
/// from one barrier's opening to the next's, to the stage of the layer it serves. A compute or
/// a reduction is its layer's; an edge's transfers (the producer's sends, the consumer's
/// receives) the producer's stage's when more of that stage comes after it (it pays them:
/// optimizer::producer_pays), else the consumer's. A phase with no step (an edge that moves
/// nothing) is the previous one's. `n`: layers per micro-batch.
template <class StageOf>
std::vector<std::vector<noc::Cycle>> barrier_phases(const RunResult& run, const StageOf& stage_of,
                                                    std::size_t n, int mbs, std::size_t stages) {
  std::vector<noc::Cycle> opens{0};
  for (const Span& s : run.spans)
    if (s.kind == StepKind::Barrier) opens.push_back(s.end);
  std::sort(opens.begin(), opens.end());
  opens.erase(std::unique(opens.begin(), opens.end()), opens.end());
  // Per phase: the layer computing or reducing, else the edge's producer and consumer.
  struct Phase {
    int layer = -1, src = -1, dst = -1;
  };
  std::vector<Phase> phase(opens.size());
  for (const Span& s : run.spans) {
    if (s.kind == StepKind::Barrier || s.layer < 0) continue;
    Phase& p = phase[static_cast<std::size_t>(
        std::upper_bound(opens.begin(), opens.end(), s.start) - opens.begin() - 1)];
    if (busy(s.kind)) p.layer = s.layer;
    if (s.kind == StepKind::Send) p.src = s.layer;
    if (s.kind == StepKind::Recv) p.dst = s.layer;
  }
  std::vector<std::vector<noc::Cycle>> out(mbs, std::vector<noc::Cycle>(stages, 0));
  int owner = -1;  // the replayed layer whose stage takes the phase
  for (std::size_t j = 0; j < opens.size(); ++j) {
    const Phase& p = phase[j];
    if (p.layer >= 0) {
      owner = p.layer;
    } else if (p.src >= 0 && p.dst >= 0) {
      const auto src = static_cast<std::size_t>(p.src);
      std::size_t end = src + 1;  // of the producer's stage, within its micro-batch
      while (end % n != 0 && stage_of(end) == stage_of(src)) ++end;
      const bool within = stage_of(src) == stage_of(static_cast<std::size_t>(p.dst));
      owner = within || optimizer::producer_pays({p.src, p.dst, 0}, static_cast<int>(end)) ? p.src
                                                                                           : p.dst;
    } else if (p.src >= 0 || p.dst >= 0) {
      owner = std::max(p.src, p.dst);
    }
    const noc::Cycle until = j + 1 < opens.size() ? opens[j + 1] : run.total_cycles;
    const int stage = owner >= 0 ? stage_of(static_cast<std::size_t>(owner)) : -1;
    if (stage >= 0)
      out[static_cast<std::size_t>(owner) / n][static_cast<std::size_t>(stage)] += until - opens[j];
  }
  return out;
}

}  // namespace

std::vector<LayerStats> layer_stats(const RunResult& run, const std::vector<std::string>& names) {
  std::vector<LayerStats> out(names.size());
  struct PeLayer {
    noc::Cycle start = noc::kNever, end = 0, busy = 0, blocked = 0;
  };
  std::vector<std::map<int, PeLayer>> per(names.size());  // layer -> pe -> cycles (reporting only)
  for (const Span& s : run.spans) {
    if (s.layer < 0 || s.layer >= static_cast<int>(names.size())) continue;
    PeLayer& p = per[s.layer][s.pe];
    p.start = std::min(p.start, s.start);
    p.end = std::max(p.end, s.end);
    if (busy(s.kind)) p.busy += s.end - s.start;
    if (s.kind == StepKind::Recv) p.blocked += s.end - s.start;
  }
  for (std::size_t l = 0; l < names.size(); ++l) {
    LayerStats& st = out[l];
    st.name = names[l];
    st.pes = static_cast<int>(per[l].size());
    if (per[l].empty()) continue;
    st.start = noc::kNever;
    const PeLayer* critical = nullptr;
    for (const auto& [pe, p] : per[l]) {
      st.start = std::min(st.start, p.start);
      if (!critical || p.end > critical->end) critical = &p;
    }
    st.end = critical->end;
    st.compute = critical->busy;
    st.communication = critical->blocked;
    st.idle = std::max<noc::Cycle>(0, st.end - st.start - st.compute - st.communication);
  }
  return out;
}

const char* const kRunTotalsUnits =
    "on the run's critical path (summing to total_cycles): computing / moving data (messages "
    "from send to arrival, sends held by a full NI queue, barriers)";

std::string run_totals_line(const RunTotals& t) {
  return "  critical path    " + std::to_string(t.compute) + " cycles computing + " +
         std::to_string(t.communication) + " cycles moving data or at barriers\n";
}

RunTotals run_totals(const RunResult& run) {
  if (run.spans.empty()) return {};
  // Each PE's spans in program order (the order it recorded them), and where each send and
  // barrier arrival is among them.
  std::vector<std::vector<const Span*>> on(run.pe_finish.size());
  std::unordered_map<MessageKey, std::pair<int, std::size_t>, MessageKeyHash> sent;
  std::unordered_map<std::int64_t, std::pair<int, std::size_t>> last_at_barrier;
  for (const Span& s : run.spans) {
    auto& list = on[static_cast<std::size_t>(s.pe)];
    const std::pair<int, std::size_t> at{s.pe, list.size()};
    list.push_back(&s);
    if (s.kind == StepKind::Send) sent.emplace(MessageKey{s.pe, s.peer, s.tag}, at);
    if (s.kind == StepKind::Barrier) {
      auto [it, fresh] = last_at_barrier.emplace(s.tag, at);
      const Span& held = *on[static_cast<std::size_t>(it->second.first)][it->second.second];
      if (!fresh && (s.start > held.start || (s.start == held.start && s.pe < held.pe)))
        it->second = at;
    }
  }
  int pe = 0;  // of the PEs finishing last, the lowest-numbered (strict >)
  for (std::size_t p = 0; p < run.pe_finish.size(); ++p)
    if (run.pe_finish[p] > run.pe_finish[static_cast<std::size_t>(pe)]) pe = static_cast<int>(p);
  RunTotals t;
  noc::Cycle now = run.total_cycles;  // the path is known from here on
  // Steps before `next` on `pe` (a span's index + 1); `now` becomes the first of them to run.
  for (std::size_t next = on[static_cast<std::size_t>(pe)].size(); next > 0;) {
    const Span& s = *on[static_cast<std::size_t>(pe)][next - 1];
    t.communication += now - s.end;                  // none: a PE's steps run back to back
    std::pair<int, std::size_t> from{pe, next - 1};  // where the path goes on
    if (busy(s.kind)) {
      t.compute += s.end - s.start;
    } else if (s.kind == StepKind::Recv && s.end > s.start) {  // waited for its message
      from = sent.at(MessageKey{s.peer, s.pe, s.tag});
    } else if (s.kind == StepKind::Barrier) {
      from = last_at_barrier.at(s.tag);
    }
    const Span& cause = *on[static_cast<std::size_t>(from.first)][from.second];
    // From when the cause began (a send: the message queued) to this step's end.
    if (!busy(s.kind)) t.communication += s.end - cause.start;
    now = cause.start;
    pe = from.first;
    next = from.second;
  }
  t.communication += now;  // none: every PE starts at cycle 0
  return t;
}

PipelineRun pipeline_run(const optimizer::Plan& replayed, const optimizer::Workload& workload,
                         const std::vector<LayerStats>& layers, const RunResult* barrier) {
  const int mbs = replayed.micro_batches;
  const std::size_t n = replayed.layers.size() / static_cast<std::size_t>(mbs);
  const std::size_t stages = replayed.stages.size();
  const auto stage_of = [&](std::size_t layer) { return replayed.layers[layer].stage; };
  // Per layer: the last end of its producers in other stages, and whether it has one in its
  // own (then it is not among the stage's first layers) or any (a layer of the network's input
  // alone, or of constants, could start at 0 wherever it is: it says nothing of the stage).
  std::vector<noc::Cycle> inputs_there(layers.size(), 0);
  std::vector<bool> fed_within(layers.size(), false), fed_at_all(layers.size(), false);
  for (const optimizer::LayerEdge& e : workload.edges) {
    const auto src = static_cast<std::size_t>(e.src), dst = static_cast<std::size_t>(e.dst);
    fed_at_all[dst] = true;
    if (stage_of(src) == stage_of(dst))
      fed_within[dst] = true;
    else
      inputs_there[dst] = std::max(inputs_there[dst], layers[src].end);
  }
  // [micro-batch][stage]: last end of its layers, and when the inputs of its first layers were
  // there (the earliest of them).
  std::vector<std::vector<noc::Cycle>> end(mbs, std::vector<noc::Cycle>(stages, 0));
  std::vector<std::vector<noc::Cycle>> fed(mbs, std::vector<noc::Cycle>(stages, noc::kNever));
  for (std::size_t i = 0; i < replayed.layers.size(); ++i) {
    const int stage = stage_of(i);
    if (stage < 0) continue;
    const std::size_t m = i / n, st = static_cast<std::size_t>(stage);
    end[m][st] = std::max(end[m][st], layers[i].end);
    if (fed_at_all[i] && !fed_within[i]) fed[m][st] = std::min(fed[m][st], inputs_there[i]);
  }
  std::vector<std::vector<noc::Cycle>> phases;
  if (barrier) phases = barrier_phases(*barrier, stage_of, n, mbs, stages);
  PipelineRun out;
  for (std::size_t st = 0; st < stages; ++st) {
    double sum = 0;
    for (int m = 0; m < mbs; ++m) {
      const noc::Cycle free = m > 0 ? end[m - 1][st] : 0;
      const noc::Cycle inputs = fed[m][st] == noc::kNever ? 0 : fed[m][st];  // stage 0
      sum += static_cast<double>(barrier ? phases[m][st] : end[m][st] - std::max(free, inputs));
    }
    out.stage_cycles.push_back(sum / mbs);
  }
  if (mbs > 1)
    out.interval = static_cast<double>(end[mbs - 1][stages - 1] - end[0][stages - 1]) / (mbs - 1);
  return out;
}

}  // namespace nocflow::sim
