// SPDX-License-Identifier: MIT
// `nocflow traffic --find-saturation`: the offered rate where the network saturates, by
// BookSim's latency rule and by the throughput rule (traffic_command.h).
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <sstream>

#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "sim/cli/traffic_command.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"

namespace nocflow::sim::cli {

int find_saturation(const TrafficArgs& a, noc::Network& net, const noc::Advance& advance,
                    Clock::time_point started, int hotspot) {
  using noc::TrafficOptions;
  using noc::TrafficResult;
  // Bisection on the offered rate, to 0.005 flits/node/cycle, for two saturation rules:
  // BookSim's latency rule on its converging runs, and accepted >= 0.95 x offered measured in
  // fixed-length runs (warm-up 3, measurement 2 sample periods), which keep running past
  // saturation.
  struct Probe {
    TrafficResult result;
    int order;  ///< the console's probe number, from 1
  };
  std::map<std::pair<long, bool>, Probe> probes;  // (rate in 1e-5 units, fixed length)
  auto probe = [&](double rate, bool fixed) -> const TrafficResult& {
    const auto key = std::pair{std::lround(rate * 1e5), fixed};
    auto it = probes.find(key);
    if (it != probes.end()) return it->second.result;
    TrafficOptions o = a.traffic;
    o.rate = rate;
    if (fixed) {
      o.warmup_cycles = 3 * o.sample_period;
      o.fixed_cycles = 2 * o.sample_period;
    }
    const TrafficResult r = noc::run_traffic(net, o, advance);
    // Each rule bisects [0, 1] to 0.005 after probing 1.0: at most 9 probes, 18 in all.
    std::cout << "  probe " << probes.size() + 1 << " of at most 18: " << std::fixed
              << std::setprecision(4) << rate << " flits/node/cycle offered"
              << (fixed ? " (fixed length): accepted " : " (converging):   ");
    if (fixed)
      std::cout << r.accepted << " = " << std::setprecision(3) << r.accepted / rate
                << " x offered, the source furthest behind injected " << r.min_source_share
                << " of its load\n";
    else
      std::cout << (r.stable ? "stable,   latency " : "unstable, latency ") << std::setprecision(2)
                << (r.stable ? r.avg_packet_latency : r.unstable_latency) << " cycles\n";
    std::cout.flush();
    const int order = static_cast<int>(probes.size()) + 1;
    return probes.emplace(key, Probe{r, order}).first->second.result;
  };
  // (last rate that passes, first that fails; none if 1.0 passes: without that probe the
  // bisection would report a network that never saturates as saturating at 1.0).
  auto bisect = [&](bool fixed, auto&& ok) -> std::pair<double, std::optional<double>> {
    if (ok(probe(1.0, fixed))) return {1.0, std::nullopt};
    double lo = 0, hi = 1.0;
    while (hi - lo > 0.005) {
      const double mid = std::round((lo + hi) / 2 * 1e4) / 1e4;
      (ok(probe(mid, fixed)) ? lo : hi) = mid;
    }
    return {lo, hi};
  };
  const auto [stable_lo, stable_hi] =
      bisect(false, [](const TrafficResult& r) { return r.stable; });
  const auto [accept_lo, accept_hi] = bisect(true, [&](const TrafficResult& r) {
    return r.accepted >= kAcceptedShare * r.offered &&
           !a_source_fell_behind(r, a.traffic.packet_flits);
  });
  const double wall = seconds_since(started);
  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();    // the version and commit that wrote it
  j["pattern"] = a.traffic.pattern;  // and how the probes ran, as summary.json says it
  if (a.traffic.pattern == "uniform") j["exclude_self"] = a.traffic.pattern_options.exclude_self;
  if (hotspot >= 0) {
    j["hotspot_node"] = hotspot;
    j["hotspot_fraction"] = a.traffic.pattern_options.hotspot_fraction;
  }
  j["packet_flits"] = a.traffic.packet_flits;
  j["seed"] = a.traffic.seed;
  j["sample_period_cycles"] = a.traffic.sample_period;
  auto rate_or_null = [](std::optional<double> r) {
    return r ? nlohmann::ordered_json(*r) : nlohmann::ordered_json();
  };
  j["latency_rule"] = {{"last_stable", stable_lo},
                       {"first_unstable", rate_or_null(stable_hi)},
                       {"description",
                        "BookSim: unstable when mean latency of delivered plus "
                        "in-flight flits passes 500 cycles"}};
  j["throughput_rule"] = {{"last_ok", accept_lo},
                          {"first_saturated", rate_or_null(accept_hi)},
                          {"description",
                           "saturated when accepted < 0.95 x offered, or a source "
                           "injected < 0.95 of its load, in a fixed-length run"}};
  j["resolution_flits_per_node_per_cycle"] = 0.005;
  j["probes"] = nlohmann::ordered_json::array();
  for (const auto& [key, run] : probes) {  // by rate; "order" is the console's probe number
    const TrafficResult& r = run.result;
    nlohmann::ordered_json p = {
        {"offered", r.offered},
        {"run", key.second ? "fixed length" : "converging"},
        {"order", run.order},
        {"stable", r.stable},
        {"avg_packet_latency", measured(r.packets_measured > 0, r.avg_packet_latency)},
        {"accepted", measured(r.measured_cycles > 0, r.accepted)},
        {"min_source_injected_share", measured(key.second, r.min_source_share)}};
    // What the console prints for an unstable converging probe (its packets' mean latency
    // covers only those delivered).
    if (!key.second && !r.stable) p["unstable_latency_estimate"] = r.unstable_latency;
    j["probes"].push_back(p);
  }
  j["wall_seconds"] = wall;
  j["units"] = {{"last_stable / first_unstable / last_ok / first_saturated / offered / accepted",
                 "flits per node per cycle (null: none found below 1)"},
                {"avg_packet_latency", "cycles, creation to tail ejection"},
                {"min_source_injected_share",
                 "fraction: the least any source injected of its offered load (fixed-length "
                 "probes)"},
                {"unstable_latency_estimate",
                 "cycles, BookSim's estimate over delivered and in-flight flits (unstable probes)"},
                {"wall_seconds", "seconds (wall clock; the only field that varies run to run)"}};
  write_file(std::filesystem::path(a.out) / "saturation.json", json_text(j, 2) + "\n");
  auto first = [](std::optional<double> r) {
    std::ostringstream s;
    if (r)
      s << std::fixed << std::setprecision(4) << *r;
    else
      s << "none up to 1.0";
    return s.str();
  };
  std::cout << std::fixed << std::setprecision(4) << "  saturation (latency rule):    last stable "
            << stable_lo << ", first unstable " << first(stable_hi) << " flits/node/cycle\n"
            << "  saturation (throughput rule): last ok " << accept_lo
            << ", first saturated (accepted < 0.95 x offered, or a source < 0.95 of its load) "
            << first(accept_hi) << " flits/node/cycle\n"
            << "nocflow: wrote " << a.out << "/saturation.json (" << probes.size() << " probes, "
            << std::setprecision(1) << wall << " s), config.resolved.yaml\n";
  return 0;
}

}  // namespace nocflow::sim::cli
