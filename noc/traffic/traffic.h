// SPDX-License-Identifier: MIT
#pragma once
// Synthetic-traffic runs with BookSim2's measurement method, so that numbers compare:
//   warm-up:  warmup_periods x sample_period cycles (statistics discarded);
//   measure:  sample periods until the mean packet latency and the accepted rate both change by
//             less than `threshold` for `converge_samples` consecutive samples (at most
//             max_samples); packets created in this window are tagged;
//   drain:    run until every tagged packet has arrived (new packets keep the load on).
// A run is unstable (saturated) when the mean latency of delivered plus in-flight flits passes
// latency_limit, checked after every period and every 1,000 drain cycles; it stops there.
// With fixed_cycles > 0 it instead runs warmup then fixed_cycles, measuring the packets that
// arrive in that window. Either way, it ends by stopping the sources, draining the network and
// verifying conservation (every flit ejected once, credits back).
//
// Injection is Bernoulli: each node creates a packet in a cycle with probability
// rate / packet_flits (rate in flits/node/cycle), drawn lazily as geometric gaps, and only
// when its source queue is empty (as BookSim: the source queue is unbounded and a packet's
// latency counts from its creation).
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <vector>

#include "noc/network/network.h"
#include "noc/traffic/pattern.h"

namespace nocflow::noc {

struct TrafficOptions {
  std::string pattern = "uniform";
  PatternOptions pattern_options;
  double rate = 0.1;  ///< offered flits per node per cycle
  int packet_flits = 1;
  std::uint64_t seed = 0;
  Cycle fixed_cycles = 0;
  Cycle warmup_cycles = -1;  ///< fixed mode only; -1 = none
  Cycle sample_period = 10000;
  int warmup_periods = 3;
  int max_samples = 10;
  int converge_samples = 3;
  double threshold = 0.05;
  double latency_limit = 500;
};

struct LinkLoad {
  enum class Kind { Injection, RouterToRouter, Ejection };
  std::string from, to;  ///< "node 3", "r(1,2).E"
  std::int64_t flits = 0;
  double utilisation = 0;  ///< flits per cycle over the run
  Kind kind = Kind::RouterToRouter;
  ActiveSpan span;  ///< first and last flit
  /// A router output port's cycles idle with every VC held while a packet waited for one
  /// (Router::vc_starved_cycles); -1 for an injection channel (not counted).
  std::int64_t vc_starved = -1;
  /// A router output port's cycles idle while a flit holding one of its VCs waited for a credit
  /// (Router::credit_stalled_cycles: the next buffer full); -1 for an injection channel.
  std::int64_t credit_stalled = -1;
  /// Flits per cycle of its active span: 1 = it sent a flit every cycle from its first to its last.
  double busy_share() const {
    return span.cycles() ? static_cast<double>(flits) / static_cast<double>(span.cycles()) : 0;
  }
};

struct TrafficResult {
  double offered = 0;
  double avg_packet_latency = 0;   ///< cycles, creation to tail ejection
  double avg_network_latency = 0;  ///< cycles, head injection to tail ejection
  double avg_flit_latency = 0;     ///< cycles, per flit, injection to ejection
  double p50_packet_latency = 0, p99_packet_latency = 0, max_packet_latency = 0;
  double accepted = 0;      ///< flits/node/cycle, measurement window
  double min_accepted = 0;  ///< of the slowest node
  /// The smallest share of its offered load a source injected in the window: 1 − how far its
  /// next packet's creation date fell further behind (cycles) over the window's cycles. Where a
  /// few flows saturate a channel (transpose), their sources fall behind while the mean
  /// accepted rate hides them.
  double min_source_share = 1;
  double avg_hops = 0;      ///< routers traversed per packet
  std::int64_t packets_measured = 0;
  Cycle cycles = 0;          ///< simulated, including warm-up and drain
  Cycle measured_cycles = 0; ///< length of the measurement window
  int samples = 0;
  bool converged = false;
  bool stable = true;
  double unstable_latency = 0;  ///< the estimate that crossed the limit, when unstable
  std::int64_t flits_injected = 0, flits_ejected = 0;
  std::int64_t router_steps = 0;  ///< router evaluations actually done (idle ones skipped)
  std::vector<LinkLoad> links;
};

/// Advances the network to a cycle (exclusive). The CLI passes the SystemC kernel; tests may
/// pass plain Network::run_until.
using Advance = std::function<void(Cycle)>;

/// Throws InputError for options no network can run: a rate outside [0, 1], a packet length
/// outside [1, 65535].
void check_traffic(const TrafficOptions& options);
/// check_traffic, then the run.
TrafficResult run_traffic(Network& net, const TrafficOptions& options, const Advance& advance);

/// Fill per-link flit counts and utilisation over `cycles`.
std::vector<LinkLoad> link_loads(const Network& net, Cycle cycles);

/// The busiest link of each kind (most flits; among equals the most VC-starved, then the first
/// in link_loads order), and the busier PE channel of the two (injection on a tie). Points into
/// `links`, or at an empty LinkLoad (no flits, no VC-starved cycles) for a kind with no link.
struct BusiestLinks {
  const LinkLoad *injection, *router, *ejection;
  const LinkLoad& endpoint() const {
    return ejection->flits > injection->flits ? *ejection : *injection;
  }
};
BusiestLinks busiest_links(const std::vector<LinkLoad>& links);

/// links.csv's span columns, each after a comma: first_cycle, last_cycle (empty for a link that
/// carried nothing), busy_share_of_span, vc_starved_cycles and credit_stalled_cycles (the last
/// two empty for an injection channel).
void write_span_fields(std::ostream& out, const LinkLoad& link);
inline constexpr const char* kSpanHeader =
    ",first_cycle,last_cycle,busy_share_of_span,vc_starved_cycles,credit_stalled_cycles";

}  // namespace nocflow::noc
