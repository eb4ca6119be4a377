// SPDX-License-Identifier: MIT
// `nocflow traffic --messages FILE`: a batch of messages replayed on the configured NoC.
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <nlohmann/json.hpp>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/input_file.h"
#include "noc/base/json_text.h"
#include "noc/traffic/batch.h"
#include "sim/cli/traffic_command.h"
#include "sim/config/hw_loader.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"

namespace nocflow::sim::cli {

using noc::Cycle;

int run_messages(const TrafficArgs& a, const HwSpec& spec, noc::Network& net) {
  check_input_path(a.messages, "--messages " + a.messages);
  // A directory opens as an empty stream: say what it is rather than "no messages".
  if (std::filesystem::is_directory(a.messages))
    throw InputError("--messages " + a.messages + ": cannot open: it is a directory");
  if (std::error_code ignored; std::filesystem::equivalent(
          a.messages, std::filesystem::path(a.out) / "messages.csv", ignored))
    throw InputError("--messages " + a.messages +
                     ": the run writes its per-message results there: give another --out or move "
                     "the file");
  std::ifstream in(a.messages);
  if (!in)
    throw InputError(
        "--messages " + a.messages + ": cannot open: " +
        (std::filesystem::exists(a.messages) ? "permission denied or unreadable" : "no such file"));
  std::string machine;  // where the file says it was dumped, if it says
  const std::vector<noc::BatchMessage> messages =
      noc::read_messages(in, a.messages, net.num_nodes(), &net.spec(), &machine);
  prepare_output_dir(a.out, spec, {a.messages});
  noc::NocModule top("noc", net, spec.clock.frequency_ghz);
  report_progress(top, a.quiet);
  std::cout << "nocflow traffic: " << one_line_summary(spec) << "\n  " << messages.size()
            << (messages.size() == 1 ? " message" : " messages") << " from " << a.messages << "\n";
  for (const std::string& note : hw_notes(spec)) std::cout << "  note: " << note << "\n";
  if (!machine.empty() && machine != spec.topology.name())
    std::cout << "  note: the file was written on " << machine << " (its '# machine:' line); here it runs on "
              << spec.topology.name() << ", where its node numbers are other places\n";
  std::cout.flush();  // before the run's progress on stderr, also when piped
  const auto started = Clock::now();
  const noc::BatchResult r = noc::run_batch(net, messages, [&](Cycle c) { top.run_until(c); });
  const double wall = seconds_since(started);

  const std::filesystem::path dir(a.out);
  std::int64_t bytes = 0, flits = 0;
  double latency_sum = 0;
  Cycle latency_max = 0;
  {
    OutputFile csv(dir / "messages.csv");
    csv << "src,dst,bytes,flits,start_cycle,delivered_cycle,latency_cycles\n";
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const noc::BatchMessage& m = messages[i];
      const Cycle latency =
          r.delivered[i] + 1 - m.start;  // usable the cycle after the tail arrives
      csv << m.src << "," << m.dst << "," << m.bytes << "," << r.flits[i] << "," << m.start << ","
          << r.delivered[i] << "," << latency << "\n";
      bytes += m.bytes;
      flits += r.flits[i];
      latency_sum += static_cast<double>(latency);
      latency_max = std::max(latency_max, latency);
    }
    csv.close();
  }
  const noc::BusiestLinks busiest = noc::busiest_links(r.links);
  const noc::LinkLoad *injection = busiest.injection, *router = busiest.router,
                      *ejection = busiest.ejection;
  const noc::LinkLoad& endpoint = busiest.endpoint();
  nlohmann::ordered_json j;
  j["nocflow"] = nocflow_build();  // the version and commit that wrote it
  j["messages_file"] = a.messages;
  j["messages"] = messages.size();
  j["bytes"] = bytes;
  j["flits"] = flits;
  j["packets"] = r.packets;
  j["cycles"] = r.cycles;
  j["avg_message_latency"] = latency_sum / static_cast<double>(messages.size());
  j["max_message_latency"] = latency_max;
  j["busiest_injection_flits"] = injection->flits;
  j["busiest_router_link_flits"] = router->flits;
  j["busiest_ejection_flits"] = ejection->flits;
  j["busiest_injection_busy_share"] = injection->busy_share();
  // No router link carried a flit (a crossbar has none): its figures are null, not zeros.
  const bool routed = router->flits > 0;
  j["busiest_router_link_busy_share"] = measured(routed, router->busy_share());
  j["busiest_ejection_busy_share"] = ejection->busy_share();
  j["busiest_router_link_vc_starved_cycles"] = measured(routed, router->vc_starved);
  j["busiest_router_link_credit_stalled_cycles"] = measured(routed, router->credit_stalled);
  j["router_evaluations"] = r.router_steps;
  j["wall_seconds"] = wall;
  j["units"] = {
      {"cycles",
       "clock cycles from the first message's start to the cycle after the last delivery"},
      {"latency", "cycles, start to the cycle after the message's last tail arrived"},
      {"busiest_*_flits", "flits on the busiest link of each kind"},
      {"busiest_*_busy_share",
       "its flits per cycle from its first flit to its last (links.csv: busy_share_of_span); "
       "below 1 it waited for credits or for flits to send"},
      {"busiest_router_link_vc_starved_cycles",
       "cycles it sent nothing while every VC was held and a packet waited for one "
       "(links.csv: vc_starved_cycles)"},
      {"busiest_router_link_credit_stalled_cycles",
       "cycles it sent nothing while a flit holding one of its VCs waited for a credit, the next "
       "buffer full (links.csv: credit_stalled_cycles)"},
      {"router_evaluations",
       "router steps run (a router with nothing to do that cycle is skipped)"},
      {"wall_seconds", "seconds (wall clock; the only field that varies run to run)"}};
  write_file(dir / "summary.json", json_text(j, 2) + "\n");
  write_links(dir / "links.csv", r.links);

  auto busy = [](const noc::LinkLoad& l) {
    std::ostringstream s;
    s << std::fixed << std::setprecision(0) << "busy " << 100 * l.busy_share() << " % of its "
      << counted(l.span.cycles(), "cycle");
    return s.str();
  };
  std::cout << std::fixed << std::setprecision(2) << "  delivered          " << messages.size()
            << (messages.size() == 1 ? " message, " : " messages, ") << counted(bytes, "byte")
            << ", " << counted(flits, "flit") << ", " << counted(r.packets, "packet") << " in "
            << counted(r.cycles, "cycle") << "\n"
            << "  message latency    " << latency_sum / static_cast<double>(messages.size())
            << " cycles (max " << latency_max << ")\n"
            << "  busiest link       " << counted(endpoint.flits, "flit") << " on a PE channel, "
            << router->flits << " on a router-to-router link ("
            << counted(std::max(endpoint.flits, router->flits), "cycle") << " at 1 flit/cycle)\n"
            << "  busiest PE channel " << endpoint.from << " -> " << endpoint.to << ", "
            << busy(endpoint) << "\n  busiest router link ";
  if (router->flits == 0)  // a crossbar (one switch), or every message stayed in its router
    std::cout << "none carried a flit\n";
  else
    std::cout << router->from << " -> " << router->to << ", " << busy(*router) << ", "
              << router->vc_starved << " idle with every VC held and a packet waiting, "
              << router->credit_stalled << " with a flit waiting for a credit\n";
  std::cout << "  simulated          in " << std::setprecision(3) << wall
            << " s; conservation ok, credits restored\n"
            << "nocflow: wrote " << a.out
            << "/summary.json, messages.csv, links.csv, config.resolved.yaml\n";
  return 0;
}

}  // namespace nocflow::sim::cli
