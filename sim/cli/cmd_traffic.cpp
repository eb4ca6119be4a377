// SPDX-License-Identifier: MIT
// `nocflow traffic`: synthetic traffic on the configured NoC, BookSim-style measurement (a batch
// of messages: cmd_traffic_messages.cpp).
#include <charconv>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "noc/base/limits.h"
#include "noc/sc/noc_module.h"
#include "noc/traffic/traffic.h"
#include "sim/cli/command.h"
#include "sim/cli/traffic_command.h"
#include "sim/config/hw_loader.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"

namespace nocflow::sim::cli {

void write_links(const std::filesystem::path& path, const std::vector<noc::LinkLoad>& links) {
  OutputFile out(path);
  out << "from,to,flits,utilisation_flits_per_cycle" << noc::kSpanHeader << "\n";
  out << std::fixed << std::setprecision(6);
  for (const auto& l : links) {
    out << csv_field(l.from) << "," << csv_field(l.to) << "," << l.flits << "," << l.utilisation;
    noc::write_span_fields(out, l);
    out << "\n";
  }
  out.close();
}

void report_progress(noc::NocModule& top, bool quiet, noc::Cycle expected, bool at_most) {
  if (quiet) return;
  // The clock is read every 256 cycles: a 64x64 mesh takes seconds for 16,384 of them.
  top.on_cycle = [throttle = ProgressThrottle(), cycles_seen = noc::Cycle{0}, expected,
                  at_most](noc::Cycle c) mutable {
    if (++cycles_seen & 0xff) return;
    const double seconds = throttle.due();
    if (seconds < 0) return;
    std::cerr << "  ... cycle " << c;
    if (expected > 0 && c < expected)
      std::cerr << " of " << (at_most ? "at most " : "") << expected << " measured ("
                << fixed(100.0 * static_cast<double>(c) / static_cast<double>(expected)) << " %)";
    else if (expected > 0)
      std::cerr << ", draining";
    std::cerr << ", " << fixed(seconds) << " s";
    if (expected > 0 && c > 0 && c < expected)
      std::cerr << ", " << (at_most ? "at most " : "about ")
                << fixed(seconds * static_cast<double>(expected - c) / static_cast<double>(c), 0)
                << " s left";
    std::cerr << "\n";
  };
}

/// Whether a source fell behind its offered load by the throughput rule (a permutation's few
/// flows through one channel: transpose on 8x8 carries at most 1/7 flits/node/cycle, while the
/// mean accepted rate stays within 5 % up to 0.176), and by more than a few packets: a source
/// below saturation may end a window with a short queue (uniform 4x4 at 0.35 in 16-flit packets
/// over 200 cycles, where a packet or two is a quarter of the load).
bool a_source_fell_behind(const noc::TrafficResult& r, int packet_flits) {
  constexpr double kQueuePackets = 4;
  if (r.measured_cycles <= 0 || r.offered <= 0 || r.min_source_share >= kAcceptedShare)
    return false;
  const double packets = r.offered / packet_flits * static_cast<double>(r.measured_cycles);
  return (1 - r.min_source_share) * packets > kQueuePackets;
}

namespace {

using noc::Cycle;
using noc::TrafficOptions;
using noc::TrafficResult;

/// Whether a run with a measurement window and load fell short of the throughput rule: a source
/// fell behind (a_source_fell_behind), or the network's mean accepted rate fell short by more
/// than chance: 4 standard deviations of the flits its `nodes` offer in the window (Bernoulli
/// packet starts of `packet_flits` flits), so that a short window at a low rate is not called
/// saturated for the packets it happened not to start. A window that starts on an empty network
/// (`from_empty`: no warm-up) can eject only what was injected a flit latency before its end;
/// with no packet measured that latency is unknown, and so is the verdict (nullopt).
std::optional<bool> short_of_offered(const TrafficResult& r, int nodes, int packet_flits,
                                     bool from_empty) {
  if (from_empty && r.packets_measured == 0 && r.offered > 0) return std::nullopt;
  if (a_source_fell_behind(r, packet_flits)) return true;
  const double window = static_cast<double>(r.measured_cycles);
  const double due =
      r.offered * (from_empty ? std::max(0.0, 1 - r.avg_flit_latency / std::max(window, 1.0)) : 1.0);
  if (r.measured_cycles == 0 || r.offered <= 0 || r.accepted >= kAcceptedShare * due) return false;
  const double node_cycles = static_cast<double>(nodes) * window;
  return (due - r.accepted) * node_cycles > 4 * std::sqrt(r.offered * node_cycles * packet_flits);
}

/// A --cycles window without --warmup: it starts on an empty network.
bool window_from_empty(const TrafficArgs& a) {
  return a.traffic.fixed_cycles > 0 && a.traffic.warmup_cycles <= 0;
}

/// `hotspot`: the hotspot pattern's node as resolved (-1 for another pattern).
nlohmann::ordered_json summary_json(const TrafficResult& r, const TrafficArgs& a, int routers,
                                    double wall, std::optional<bool> throughput_short,
                                    int hotspot) {
  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();  // the version and commit that wrote it
  j["pattern"] = a.traffic.pattern;
  if (a.traffic.pattern == "uniform") j["exclude_self"] = a.traffic.pattern_options.exclude_self;
  if (hotspot >= 0) {
    j["hotspot_node"] = hotspot;
    j["hotspot_fraction"] = a.traffic.pattern_options.hotspot_fraction;
  }
  j["offered_flits_per_node_per_cycle"] = r.offered;
  j["packet_flits"] = a.traffic.packet_flits;
  j["seed"] = a.traffic.seed;
  const bool packets = r.packets_measured > 0, window = r.measured_cycles > 0;
  j["avg_packet_latency"] = measured(packets, r.avg_packet_latency);
  j["avg_network_latency"] = measured(packets, r.avg_network_latency);
  j["avg_flit_latency"] = measured(packets, r.avg_flit_latency);
  j["p50_packet_latency"] = measured(packets, r.p50_packet_latency);
  j["p99_packet_latency"] = measured(packets, r.p99_packet_latency);
  j["max_packet_latency"] = measured(packets, r.max_packet_latency);
  j["accepted_flits_per_node_per_cycle"] = measured(window, r.accepted);
  j["min_node_accepted_flits_per_node_per_cycle"] = measured(window, r.min_accepted);
  j["min_source_injected_share"] = measured(window && r.offered > 0, r.min_source_share);
  j["avg_hops"] = measured(packets, r.avg_hops);
  j["packets_measured"] = r.packets_measured;
  j["cycles"] = r.cycles;
  j["measured_cycles"] = r.measured_cycles;
  j["samples"] = r.samples;
  // A fixed window (--cycles) is measured once, not run until it converges.
  j["converged"] = a.traffic.fixed_cycles > 0 || r.offered == 0
                       ? nlohmann::ordered_json()
                       : nlohmann::ordered_json(r.converged);
  j["stable"] = packets || !r.stable ? nlohmann::ordered_json(r.stable) : nlohmann::ordered_json();
  if (!r.stable) j["unstable_latency_estimate"] = r.unstable_latency;
  // The throughput rule, beside BookSim's latency rule: a short window can keep the latency
  // under 500 cycles while the source queues grow.
  j["saturated_by_throughput"] = window && r.offered > 0 && throughput_short
                                     ? nlohmann::ordered_json(*throughput_short)
                                     : nlohmann::ordered_json();
  j["flits_injected"] = r.flits_injected;
  j["flits_ejected"] = r.flits_ejected;
  j["router_evaluations"] = r.router_steps;
  j["wall_seconds"] = wall;
  // With nothing offered idle cycles are skipped: no rate to speak of (the console omits it).
  j["router_cycles_per_second"] =
      wall > 0 && r.offered > 0
          ? nlohmann::ordered_json(static_cast<double>(routers) * r.cycles / wall)
          : nlohmann::ordered_json();
  j["units"] = {{"latency",
                 "cycles (packet: creation to tail ejection; network: head injection to tail "
                 "ejection; flit: each flit's injection to its ejection, averaged over flits)"},
                {"unstable_latency_estimate", "cycles"},
                {"hotspot_fraction", "share of packets sent to hotspot_node"},
                {"accepted/offered", "flits per node per cycle"},
                {"min_source_injected_share",
                 "fraction: the least any source injected of its offered load in the window"},
                {"avg_hops", "routers traversed per packet"},
                {"cycles", "clock cycles simulated, warm-up and drain included"},
                {"router_evaluations",
                 "router steps run (a router with nothing to do that cycle is skipped)"},
                {"wall_seconds",
                 "seconds (wall clock; the only fields that vary run to run, "
                 "with router_cycles_per_second)"}};
  return j;
}

void print_result(const TrafficResult& r, const TrafficArgs& a, double wall, int routers,
                  std::optional<bool> throughput_short) {
  auto& o = std::cout;
  o << std::fixed << std::setprecision(2);
  o << "  offered            " << std::setprecision(4) << r.offered << " flits/node/cycle\n";
  if (r.measured_cycles > 0)
    o << "  accepted           " << r.accepted << " flits/node/cycle (slowest node "
      << r.min_accepted << "; the source furthest behind injected " << std::setprecision(1)
      << 100 * r.min_source_share << " % of its load)\n"
      << std::setprecision(4);
  else
    o << "  accepted           n/a (no measurement window)\n";
  o << std::setprecision(2);
  if (r.packets_measured > 0)
    o << "  packet latency     " << r.avg_packet_latency << " cycles (p50 " << r.p50_packet_latency
      << ", p99 " << r.p99_packet_latency << ")\n"
      << "  network latency    " << r.avg_network_latency << " cycles\n"
      << "  flit latency       " << r.avg_flit_latency << " cycles\n"
      << "  hops               " << r.avg_hops << " routers/packet\n";
  else
    o << "  packet latency     n/a (no packet measured)\n";
  o << "  packets measured   " << r.packets_measured << " over " << r.measured_cycles << " cycles"
    << (a.traffic.fixed_cycles > 0 ? std::string(" (a fixed window: --cycles)")
        : r.samples ? " (" + std::to_string(r.samples) + (r.samples == 1 ? " sample" : " samples") +
                          (r.converged      ? ", converged)"
                           : r.offered == 0 ? ", nothing offered to converge)"
                                            : ", not converged within " +
                                                  std::to_string(a.traffic.max_samples) + ")")
                    : "")
    << "\n"
    << "  stable             ";
  if (!r.stable)
    o << "NO (saturated: latency estimate " << fixed(r.unstable_latency, 2) << " cycles)\n";
  else if (r.packets_measured > 0 && throughput_short.value_or(false))
    o << "yes by the latency rule (mean at most 500 cycles); NO by the throughput rule: "
      << (r.accepted < kAcceptedShare * r.offered ||
                  !a_source_fell_behind(r, a.traffic.packet_flits)
              ? fixed(100 * r.accepted / r.offered, 1) +
                    " % of the offered load accepted (under 95 %)"
              : "a source injected " + fixed(100 * r.min_source_share, 1) +
                    " % of its load (under 95 %; the network accepted " +
                    fixed(100 * r.accepted / r.offered, 1) + " %)")
      << ", so source queues grow and a longer run (--cycles) shows the latency grow\n";
  else if (r.packets_measured > 0)
    o << "yes\n";
  else if (r.offered == 0)
    o << "n/a (nothing offered)\n";
  else if (window_from_empty(a) &&
           static_cast<double>(r.measured_cycles) * r.offered >= a.traffic.packet_flits)
    // Each node started a packet or more, on an empty network: none has finished its trip yet.
    o << "n/a: no packet finished in the " << r.measured_cycles
      << "-cycle window, which starts on an empty network; give --warmup or more --cycles\n";
  else  // nothing to judge by: say how long a run would have to be
  {
    const double every = a.traffic.packet_flits / r.offered;  // 1e+300 at --rate 1e-300
    std::ostringstream every_text;
    every_text << std::setprecision(3) << every;
    o << "n/a: at this rate a node starts a packet every "
      << (every < 1e9 ? fixed(every, 0) : every_text.str())
      << " cycles on average; give more --cycles or a higher --rate\n";
  }
  o << std::setprecision(2) << "  simulated          " << r.cycles
    << (r.cycles == 1 ? " cycle" : " cycles") << " in " << std::setprecision(3) << wall << " s";
  if (r.offered > 0)  // with nothing offered idle cycles are skipped: no rate to speak of
    o << " (" << std::setprecision(2) << (wall > 0 ? routers * r.cycles / wall / 1e6 : 0)
      << " M router-cycles/s)";
  o << "\n"
    << "  conservation       ok: " << r.flits_injected
    << " flits injected, all ejected once, credits restored\n";
}

int run(const TrafficArgs& a) {
  const HwSpec spec = a.hw.load();
  noc::Network net(spec.noc());
  if (!a.messages.empty()) return run_messages(a, spec, net);
  // Validate the pattern before anything is written.
  noc::make_pattern(a.traffic.pattern, net.topology(), a.traffic.pattern_options);
  if (a.traffic.pattern != "uniform" && a.traffic.pattern_options.exclude_self)
    throw InputError("--exclude-self applies to --pattern uniform only (the pattern is '" +
                     a.traffic.pattern + "')");
  if (a.traffic.pattern != "hotspot" && a.hotspot_options)
    throw InputError(
        "--hotspot-node and --hotspot-fraction apply to --pattern hotspot only (the pattern is '" +
        a.traffic.pattern + "')");
  noc::check_traffic(a.traffic);
  prepare_output_dir(a.out, spec, {a.messages});

  noc::NocModule top("noc", net, spec.clock.frequency_ghz);
  const int routers = net.topology().num_routers();
  const auto started = Clock::now();
  // A single run measures until its window ends (a converging one at the latest after its
  // samples); the saturation search's probes say how far it is.
  const TrafficOptions& t = a.traffic;
  if (a.find_saturation)
    report_progress(top, a.quiet);
  else if (t.fixed_cycles > 0)
    report_progress(top, a.quiet, std::max<Cycle>(t.warmup_cycles, 0) + t.fixed_cycles);
  else
    report_progress(top, a.quiet, (t.warmup_periods + t.max_samples) * t.sample_period, true);
  const noc::Advance advance = [&](Cycle c) { top.run_until(c); };

  const int hotspot =
      a.traffic.pattern == "hotspot" ? noc::hotspot_node(net.topology(), a.traffic.pattern_options) : -1;
  std::cout << "nocflow traffic: " << one_line_summary(spec) << "\n  pattern " << a.traffic.pattern;
  if (a.traffic.pattern == "uniform" && a.traffic.pattern_options.exclude_self) std::cout << " (no packet to itself)";
  if (hotspot >= 0)
    std::cout << " (node " << hotspot << ", " << std::defaultfloat << std::setprecision(6)
              << 100 * a.traffic.pattern_options.hotspot_fraction << " % of packets)";
  std::cout << ", " << a.traffic.packet_flits << "-flit packets, seed " << a.traffic.seed << "\n";
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << "\n";
  // A converging run (each probe of the search too) lasts at most its warm-up and samples: too
  // short, and a saturated network never reaches the latency rule (--sample-period 20 on 4x4
  // found none up to 1.0, where it saturates near 0.74) or reads saturated at a light load.
  if (t.fixed_cycles <= 0) {
    const Cycle longest = (t.warmup_periods + t.max_samples) * t.sample_period;
    if (static_cast<double>(longest) < 10 * t.latency_limit)
      std::cout << "  note: with --sample-period " << t.sample_period
                << " a converging run lasts at most " << longest
                << " cycles, under 10 times the latency rule's " << fixed(t.latency_limit, 0)
                << ": its verdicts mean little (BookSim's period is "
                << TrafficOptions{}.sample_period << " cycles)\n";
  }
  std::cout.flush();  // before the run's progress on stderr, also when piped

  if (!a.find_saturation) {
    const TrafficResult r = noc::run_traffic(net, a.traffic, advance);
    const double wall = seconds_since(started);
    const std::optional<bool> short_of =
        short_of_offered(r, net.num_nodes(), a.traffic.packet_flits, window_from_empty(a));
    write_file(std::filesystem::path(a.out) / "summary.json",
               json_text(summary_json(r, a, routers, wall, short_of, hotspot), 2) + "\n");
    write_links(std::filesystem::path(a.out) / "links.csv", r.links);
    print_result(r, a, wall, routers, short_of);
    std::cout << "nocflow: wrote " << a.out << "/summary.json, links.csv, config.resolved.yaml\n";
    return 0;
  }

  return find_saturation(a, net, advance, started, hotspot);
}

}  // namespace

void add_traffic_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("traffic", "synthetic traffic on the NoC (BookSim-style measurement)");
  auto a = std::make_shared<TrafficArgs>();
  a->hw.add_to(*cmd);
  cmd->add_option("--pattern", a->traffic.pattern, "uniform, transpose, bitcomp, bitrev, shuffle, tornado, neighbor, hotspot")
      ->capture_default_str();
  cmd->add_option("--rate", a->traffic.rate, "offered load, flits per node per cycle")
      ->capture_default_str()
      ->check(in_range(0, 1));
  cmd->add_option("--packet-flits", a->traffic.packet_flits, "flits per packet, 1 .. 65535")
      ->capture_default_str()
      ->check(in_range(1, 65535));
  cmd->add_option("--seed", a->traffic.seed, "random seed, 0 .. 2^64 - 1")
      ->capture_default_str()
      ->check(CLI::Validator(
          [](const std::string& text) {  // exactly: 2^64 and a little above read as 2^64 - 1
            std::uint64_t v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            return ec == std::errc{} && end == text.data() + text.size()
                       ? std::string()
                       : "must be a whole number in 0 .. 18446744073709551615, got " + text;
          },
          "0 .. 2^64 - 1"));
  cmd->add_option("--out", a->out, "output folder")->required()->type_name("DIR");
  auto* cycles =
      cmd->add_option(
             "--cycles", a->traffic.fixed_cycles,
             "measure for this many cycles after --warmup, instead of BookSim's converging "
             "samples: the packets that arrive in the window, whenever created (saturated, those "
             "that got through; the packets still queued at its end are not counted)")
          ->check(in_range(1, static_cast<double>(kMaxCycles)));
  cmd->add_option("--warmup", a->traffic.warmup_cycles,
                  "with --cycles: warm-up cycles before measuring")
      ->check(in_range(0, static_cast<double>(kMaxCycles)))
      ->needs(cycles);
  cmd->add_option("--sample-period", a->traffic.sample_period,
                  "BookSim sample period, cycles (converging runs and --find-saturation)")
      ->capture_default_str()
      ->check(in_range(1, static_cast<double>(kMaxCycles)))
      ->excludes(cycles);
  cmd->add_flag("--exclude-self", a->traffic.pattern_options.exclude_self,
                "uniform: never send to the source itself (BookSim includes it)");
  cmd->add_option("--hotspot-node", a->traffic.pattern_options.hotspot_node,
                  "hotspot: node (default: the mesh's centre; node 0 on a crossbar)")
      ->check(at_least(0));
  cmd->add_option("--hotspot-fraction", a->traffic.pattern_options.hotspot_fraction,
                  "hotspot: share of packets to the hotspot")
      ->capture_default_str()
      ->check(in_range(0, 1));
  cmd->add_flag("--find-saturation", a->find_saturation,
                "bisect the offered load to 0.005 flits/node/cycle for the saturation point "
                "(its probes' lengths follow --sample-period)")
      ->excludes(cycles, "--rate");
  cmd->add_flag("--quiet", a->quiet, "no progress lines");
  cmd->add_option("--messages", a->messages,
                  "instead: replay this batch of messages (lines 'src dst bytes [start_cycle]') "
                  "until delivered; "
                  "writes messages.csv")
      ->type_name("FILE")
      ->excludes("--pattern", "--rate", "--packet-flits", "--cycles", "--warmup",
                 "--find-saturation", "--exclude-self", "--hotspot-node", "--hotspot-fraction",
                 "--seed", "--sample-period");
  cmd->callback([a, cmd, &action] {
    a->hotspot_options = cmd->count("--hotspot-node") + cmd->count("--hotspot-fraction") > 0;
    action = [a] { return run(*a); };
  });
}

}  // namespace nocflow::sim::cli
