// SPDX-License-Identifier: MIT
// What a microbenchmark's figures mean (microbench.h): the models' predictions of a case,
// calibrated linkload's router contention fitted per machine, each model's error taken apart
// into latency, load, contention and volume, and the per-type summary of those parts.
#include <algorithm>
#include <cmath>
#include <iomanip>
#include <map>
#include <ostream>
#include <sstream>

#include "noc/base/format.h"
#include "optimizer/cost/linkload_model.h"
#include "sim/validate/microbench.h"

namespace nocflow::sim {

namespace opt = optimizer;

void ErrorStats::add(double predicted, double simulated, bool near_saturation, int id) {
  if (simulated <= 0) {
    ++still;
    return;
  }
  const double e = std::abs(predicted - simulated) / simulated;
  sum_all += e;
  max_all = std::max(max_all, e);
  if (near_saturation) {
    ++near;
    return;
  }
  sum += e;
  if (count == 0 || e > max) {
    worst = id;
    worst_error = (predicted - simulated) / simulated;
  }
  max = std::max(max, e);
  ++count;
}

bool ErrorStats::meets_target() const {
  return count > 0 && mape() <= kTargetMape && max <= kTargetMax;
}

std::string error_percent(int cases, double fraction) {
  return cases ? fixed(100 * fraction, 1) + "%" : "n/a";
}

std::string error_csv(int cases, double fraction) {
  return cases ? shortest(fraction) : "";  // exact, as every figure of validation.csv
}

double BenchResult::linkload_fitted_cycles() const {
  if (rings) return linkload_cycles;  // a ring round is one message per member: not slowed
  opt::HwDesc hw = linkload_hw;
  hw.router_slowdown = router_slowdown;  // set, even to 0: the contention form
  const double slowed = opt::LinkloadModel::drain_flits(linkload_links, hw);
  const double plain = opt::LinkloadModel::drain_flits(linkload_links, linkload_hw);
  return linkload_cycles + (slowed - plain) -
         opt::LinkloadModel::overlap_cycles(linkload_links, hw);
}

double BenchResult::predicted(const std::string& model) const {
  return model == "paper"         ? paper_cycles
         : model == "linkload"    ? linkload_cycles
         : model == "round_robin" ? round_robin_cycles
                                  : linkload_fitted_cycles();
}

double fit_router_slowdown(std::vector<BenchResult>& machine) {
  BenchResult* probe = nullptr;
  for (BenchResult& r : machine) {
    const opt::LinkLoad& l = r.linkload_links;
    // Router-bound, and its busiest router link's drain no shorter than its route's latency:
    // a few flits' contention is within the latency's error (a 9-flit 64 B halo on 4x4 fitted
    // s = 16.0, where 4-64 KiB cases give 0.52).
    if (!r.run || r.rings || r.bench.type == "GROUP_GATHER" || r.simulated_cycles <= 0 ||
        l.messages <= 0 || l.max_router_link_flits <= l.max_endpoint_flits ||
        l.max_router_link_flits / r.linkload_hw.router_link_rate() < r.linkload_latency)
      continue;
    if (!probe || l.max_router_link_flits > probe->linkload_links.max_router_link_flits) probe = &r;
  }
  double s = 0;
  if (probe) {
    // T_sim = linkload_cycles − its drain + L_R (1 + s · scale) / r − midpoint_saving (the
    // drain's overlap when that is the smaller; linkload_cycles = longest route + its drain,
    // L_R / r on a router-bound edge; r the router links' rate, 1 unless the buffers are
    // shorter than the credit loop).
    const opt::LinkLoad& l = probe->linkload_links;
    const opt::HwDesc& hw = probe->linkload_hw;
    const double rate = hw.router_link_rate();
    const double extra = static_cast<double>(probe->simulated_cycles) - probe->linkload_cycles +
                         opt::LinkloadModel::drain_flits(l, hw) - l.max_router_link_flits / rate +
                         opt::LinkloadModel::midpoint_saving(l, hw);
    const double scale = opt::LinkloadModel::slowdown_scale(l, hw.vc_buffer_flits);
    if (scale > 0) s = std::max(0.0, extra * rate / l.max_router_link_flits / scale);
    // Another type's case can move the very same messages (4x4: ALL_GATHER OUTP=16 -> OFMP_W=16
    // and ALL_TO_ALL OFMP_W=16 -> INPP=16 at 1 MiB): it was fitted on too, not predicted.
    const auto same_sends = [&](const BenchResult& r) {
      return r.sends.size() == probe->sends.size() &&
             std::equal(r.sends.begin(), r.sends.end(), probe->sends.begin(),
                        [](const noc::BatchMessage& a, const noc::BatchMessage& b) {
                          return a.src == b.src && a.dst == b.dst && a.bytes == b.bytes &&
                                 a.start == b.start;
                        });
    };
    for (BenchResult& r : machine) r.slowdown_fitted_here = &r == probe || (r.run && same_sends(r));
  }
  for (BenchResult& r : machine) r.router_slowdown = s;
  return s;
}

ErrorParts error_parts(const BenchResult& r, const std::string& model) {
  ErrorParts e;
  e.latency = r.latency(model) - static_cast<double>(r.hop_latency_cycles);
  e.load = r.load(model) - static_cast<double>(r.serialization_cycles());
  e.contention = -static_cast<double>(r.contention_cycles());
  return e;
}

std::string decomposition_csv_header() {
  return "flits_moved,busiest_sender,busiest_sender_bytes,solo_cycles,hop_latency_cycles,"
         "serialization_cycles,contention_cycles,paper_bytes,paper_latency_cycles,"
         "paper_load_cycles,linkload_latency_cycles,linkload_load_cycles";
}

std::string decomposition_csv_columns(const BenchResult& r) {
  std::ostringstream o;
  o << r.flits_moved << "," << r.busiest_sender << "," << r.busiest_sender_bytes << ","
    << r.solo_cycles << "," << r.hop_latency_cycles << "," << r.serialization_cycles() << ","
    << r.contention_cycles() << ",";
  if (r.scores("paper"))  // else empty, as paper_cycles: paper prices no such edge apart
    o << shortest(r.paper_bytes) << "," << shortest(r.paper_latency) << ","
      << shortest(r.load("paper"));
  else
    o << ",,";
  o << "," << shortest(r.linkload_latency) << "," << shortest(r.load("linkload"));
  return o.str();
}

void DecompositionSummary::add(const BenchResult& r) {
  if (r.simulated_cycles <= 0) return;
  const auto t = static_cast<double>(r.simulated_cycles);
  ++cases_[r.bench.type];
  for (const std::string& model : bench_models()) {
    if (!r.scores(model)) continue;
    const ErrorParts e = error_parts(r, model);
    ModelParts& m = parts_[{r.bench.type, model}];
    ++m.cases;
    m.time.hop += static_cast<double>(r.hop_latency_cycles) / t;
    m.time.serialization += static_cast<double>(r.serialization_cycles()) / t;
    m.time.contention += static_cast<double>(r.contention_cycles()) / t;
    m.time.vc_starved += static_cast<double>(r.busiest_router_link_vc_starved) / t;
    m.error += e.total() / t;
    m.latency += e.latency / t;
    m.load += e.load / t;
    m.contention += e.contention / t;
    if (r.bytes_moved > 0) {
      const double bytes = model == "paper" ? r.paper_bytes : static_cast<double>(r.bytes_moved);
      m.volume += bytes / static_cast<double>(r.bytes_moved) - 1;
      ++m.volume_cases;
    }
  }
}

std::string DecompositionSummary::csv_header() {
  return "hop_latency_share,serialization_share,contention_share,mean_error,latency_error,"
         "load_error,missed_contention,volume_error,vc_starved_share";
}

std::string DecompositionSummary::csv_columns(const std::string& type,
                                              const std::string& model) const {
  auto mean = [](double sum, int n) { return n > 0 ? sum / n : 0.0; };
  const auto pi = parts_.find({type, model});
  const ModelParts m = pi == parts_.end() ? ModelParts{} : pi->second;
  const Shares& s = m.time;            // over the cases this model scores, like its errors
  if (m.cases == 0) return ",,,,,,,,";  // no case scored: blank cells, as the other statistics
  const double columns[] = {
      mean(s.hop, m.cases),        mean(s.serialization, m.cases), mean(s.contention, m.cases),
      mean(m.error, m.cases),      mean(m.latency, m.cases),       mean(m.load, m.cases),
      mean(m.contention, m.cases), mean(m.volume, m.volume_cases), mean(s.vc_starved, m.cases)};
  std::string text;
  for (double c : columns) text += (text.empty() ? "" : ",") + shortest(c);
  return text;
}

void DecompositionSummary::print(std::ostream& out, const std::vector<std::string>& types) const {
  auto pct = [](double sum, int n) {
    std::ostringstream o;
    o << std::fixed << std::setprecision(1) << (n > 0 ? 100 * sum / n : 0.0) << "%";
    return o.str();
  };
  out << "\n  where the simulated time goes (mean share, cases below saturation; 'VC-starved', a\n"
         "  cause of contention: the busiest router link idle with every VC held and a packet\n"
         "  waiting), and each model's mean signed error = its latency term - hop latency + its\n"
         "  load term - serialization - contention\n  "
      << std::setw(kTypeWidth + 7) << "" << std::right << std::setw(42) << "---- share of the simulated time ----"
      << std::setw(19) << "" << std::setw(49) << "------- mean signed error and its parts -------" << "\n  "
      << std::left << std::setw(kTypeWidth) << "type" << std::right << std::setw(7) << "cases"
      << std::setw(9) << "hop" << std::setw(9) << "serial" << std::setw(12) << "contention"
      << std::setw(12) << "VC-starved"
      << "   " << std::left << std::setw(16) << "model" << std::right << std::setw(9) << "error"
      << std::setw(10) << "latency" << std::setw(9) << "load" << std::setw(12) << "contention"
      << std::setw(9) << "volume"
      << "\n";
  for (const auto& type : types) {
    const auto ti = cases_.find(type);
    if (ti == cases_.end()) continue;
    bool first = true;
    for (const std::string& model : bench_models()) {
      const auto pi = parts_.find({type, model});
      if (pi == parts_.end() || pi->second.cases == 0) continue;  // paper on AFTER_REDUCE, ...
      const ModelParts& m = pi->second;
      out << "  " << std::left << std::setw(kTypeWidth) << (first ? type : "") << std::right;
      if (first || m.cases != ti->second)  // scored on fewer cases (linkload_fitted): its own
        out << std::setw(7) << m.cases << std::setw(9) << pct(m.time.hop, m.cases) << std::setw(9)
            << pct(m.time.serialization, m.cases) << std::setw(12) << pct(m.time.contention, m.cases)
            << std::setw(12) << pct(m.time.vc_starved, m.cases);
      else
        out << std::setw(49) << "";
      out << "   " << std::left << std::setw(16) << model << std::right << std::setw(9)
          << pct(m.error, m.cases) << std::setw(10) << pct(m.latency, m.cases) << std::setw(9)
          << pct(m.load, m.cases) << std::setw(12) << pct(m.contention, m.cases) << std::setw(9)
          << pct(m.volume, m.volume_cases) << "\n";
      first = false;
    }
  }
}

const std::vector<std::string>& bench_models() {
  static const std::vector<std::string> models = {"paper", "linkload", "linkload_fitted",
                                                  "round_robin"};
  return models;
}

}  // namespace nocflow::sim
