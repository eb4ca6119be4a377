// SPDX-License-Identifier: MIT
#pragma once
// `nocflow traffic`'s options and the pieces its two modes share: synthetic traffic
// (cmd_traffic.cpp) and the replay of a batch of messages (cmd_traffic_messages.cpp).
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "noc/base/progress.h"
#include "noc/sc/noc_module.h"
#include "noc/traffic/traffic.h"
#include "sim/cli/command.h"

namespace nocflow::sim::cli {

using Clock = std::chrono::steady_clock;

struct TrafficArgs {
  HwOptions hw;
  noc::TrafficOptions traffic;
  std::string out;
  std::string messages;  ///< --messages FILE: replay that batch instead of synthetic traffic
  bool find_saturation = false;
  bool quiet = false;
  bool hotspot_options = false;  ///< --hotspot-node or --hotspot-fraction given
};

/// A figure of a run: null where nothing was measured (a run unstable before its window, no
/// load, a router link a crossbar does not have), not a zero.
template <class T>
nlohmann::ordered_json measured(bool any, T v) {
  return any ? nlohmann::ordered_json(v) : nlohmann::ordered_json();
}

/// links.csv: per link its flits, utilisation over the run and active span.
void write_links(const std::filesystem::path& path, const std::vector<noc::LinkLoad>& links);
/// A progress line on stderr every 2 s of wall time (unless quiet), from the kernel's cycles;
/// with `expected` > 0, the cycle the run measures until (`at_most`: at the latest) and the
/// seconds that leaves at the rate so far.
void report_progress(noc::NocModule& top, bool quiet, noc::Cycle expected = 0,
                     bool at_most = false);
/// `--messages FILE`: the batch's duration, per-message delivery and link loads.
int run_messages(const TrafficArgs& a, const HwSpec& spec, noc::Network& net);

/// The throughput rule of saturation: the network accepts less than this share of what is
/// offered, or a source injects less than this share of its own load.
inline constexpr double kAcceptedShare = 0.95;
bool a_source_fell_behind(const noc::TrafficResult& r, int packet_flits);
/// `--find-saturation` (cmd_traffic_saturation.cpp): bisection on the offered rate for both
/// saturation rules, saturation.json and the console's lines; `started` when the run began,
/// `hotspot` the hotspot pattern's node (-1 for another pattern).
int find_saturation(const TrafficArgs& a, noc::Network& net, const noc::Advance& advance,
                    Clock::time_point started, int hotspot);

}  // namespace nocflow::sim::cli
