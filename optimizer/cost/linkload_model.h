// SPDX-License-Identifier: MIT
#pragma once
// linkload: the exact transfer list (partition/transfers.h) routed onto the NoC's links with
// the configured routing function (noc/router/routing.h, first candidate for adaptive ones),
// exactly as the routers would. Every term below is a property of the simulator's NoC that
// `nocflow validate` measures (sim/README.md, "Validation").
//
//  edge time  = busiest link flits + routers on the longest route × (router pipeline + link
//               latency) + link latency + 1.
//               Flits: each transfer is one message, cut into ⌈bytes / link width⌉ flits (at
//               least one), as the NI does (sim/system/messages.h); a link's load is the sum
//               over the messages crossing it, so many small messages cost their rounding.
//               Links: every router output port (ejection included) and every node's injection
//               channel. The other terms are the NoC's zero-load pipeline latency
//               (noc/README.md: T0 = (pipeline + link) R + link + 1 + (L − 1), the injection
//               and ejection channels having the links' latency; the message is usable the
//               cycle after its tail arrives, hence L flits rather than L − 1).
//               Transfers are assumed to overlap perfectly: no contention beyond the busiest
//               link, as if every source's NI sent all its messages at once (ni.channels at
//               least the messages it has; with fewer, a message held up at a shared link or
//               ejection port holds up the ones queued behind it).
//               Credit loop: a packet on one VC sends its first B flits back to back and then
//               B per loop of 2 × link latency + switch allocation + traversal + 1 cycles (B
//               the VC buffer; 5 cycles with the shipped routers: the lookahead configs'
//               8-flit buffers cover it, booksim8x8's 4 do not): L flits take
//               HwDesc::stream_cycles(L), exact for a lone packet (tests/sim/lone_packet_test).
//               With shorter buffers a router-to-router link drains at min(1, VCs × B / loop)
//               flits per cycle (as many flows as it has VCs, an approximation where fewer are
//               in flight); each PE channel runs k = min(messages, ni.channels, VCs) of the
//               messages it sends (injection), or k = min(messages, VCs) of those it receives
//               (ejection), at once, taking turns flit by flit, each message its mean length m:
//               k m flits per stream_cycles(m, k); and no message is faster than one flow
//               (a message has one packet in flight at its NI: stream_cycles of the longest).
//               The busiest link's term is the slower of the two drains.
//               Router contention (HwDesc::router_slowdown s, unset unless calibrated): when a
//               router-to-router link carries more flits than any injection or ejection
//               channel, several sources' flows share it, and the routers' head-of-line and VC
//               blocking keep it only 53-82 % busy (validate: all-to-all-like edges); the same
//               when it carries as many flits and ≥ 2 sources' flows (2-D halos; one source's
//               whole traffic on one link is not slowed, nor a ring round whatever the
//               sources per link: ring_rounds, plain_drain_flits). Its flits
//               L_R then count (1 + s · U² · m / (m + B)) times: m the edge's mean message
//               length and B the VC buffer (flits), since a message that fits in one router's
//               buffer does not hold VCs across routers; U = mean router-to-router link load /
//               L_R, since a flow blocks the busiest link only when links both before and after
//               it are busy too (a scatter with two messages per source loses a few %, an
//               all-to-all 30-88 %).
//               The busiest link's flits travel shorter routes than the longest one, so the
//               edge then takes max(longest route + busiest channel, midpoint route + slowed
//               L_R), the midpoint route's latency halfway between the mean route's (over
//               flits) and the longest's: overlap_cycles is what that hides of latency +
//               drain. s is a property of the machine (mesh size, router), fitted by `nocflow
//               validate` on one case per machine; MAPE/max of held-out cases in
//               optimizer/README.md ("Router contention").
//               Where a PE channel binds (L_E > L_R) and a busiest router link is shared by ≥ 2
//               sources and ≥ 2 destinations (2-D halos: the rows and corners several hops
//               along a column, many flows through its 4 VCs), the cycles that link loses to
//               contention delay the channels too: its packets, stalled waiting for VCs
//               downstream, hold the VCs and buffers the channels' other flows need (a halo
//               packet queued behind a stalled one's tail, at its source or first hop). The
//               channel's drain then takes L_R · s · U² · μ / (μ + B) cycles longer, μ the
//               shortest message on that link (a message that fits in a buffer holds no VCs
//               across routers; the edge's mean m is the big one-hop halos'), or μ / (μ + B)
//               times what the routers' round-robin arbitration costs the short messages, if
//               that is more: a fluid run of them alone (round_robin_fluid.h) less their
//               busiest link (LinkLoad::short_messages_arbitration_cycles; on xy meshes, where
//               s > 0). s, fitted on all-to-alls, prices VC blocking; down a long column the
//               arbitration starves the rows from far up where local ones join them (the
//               parking-lot effect: 16x16 2-D halos lose 2.5x their column link's flits where
//               s allows 1.3x; optimizer/README.md, "Round-robin starvation"). Only where the
//               contended messages are short beside the edge's longest (μ ≤ a quarter of it,
//               kShortFraction): where they are alike (an all-to-all's pieces and remainders),
//               the channel's flows are the contended ones, and their slowed drain stays below
//               the channel's (on 16x16 plans such edges were over-priced by the term). A
//               gather (one destination) or a scatter (one source) is not slowed either: the
//               channel that binds is what holds its router links up (optimizer/README.md,
//               "Router contention": "A PE channel binds behind a contended router link").
//               One message per PE on a mesh (single_sends: OUTP peers in pairs, a LOCAL move;
//               buffers covering the credit loop): the heads leave together, so when each
//               reaches each link is known (its zero-load route up to there). Every link serves
//               its messages first come, first served, and the edge ends with the latest tail
//               plus the rest of its route (scheduled_cycles) instead of the longest route plus
//               the busiest link, which charges flows that reach the busiest link one after
//               another as if they queued; router contention, when calibrated, adds what it
//               adds to the sum (optimizer/README.md, "One message per PE").
//  all-gathers under lowering.all_gather: ring, or auto where it pays (HwDesc::all_gather,
//               rings_to_run): an edge's groups of ≥ 3 consumer PEs that need the same input,
//               each holding one equal piece of it (transfers.h, RingGather), run as ring
//               all-gathers, every ring at once: n − 1 rounds of one chunk from each member to
//               its ring successor, priced as the INPP reduction's rounds below
//               (ring_gather_time). The edge's other transfers are priced as above; the edge
//               takes the slower of the two.
//  layer time = the PE model's cycles for the layer's share (pe_model.h: MAC array
//               utilisation, vector ops, SRAM bandwidth; no η: MACs do not grow with a split)
//               + the INPP ring all-reduce as the simulator runs it (sim/lower/collectives.h):
//               2(f − 1) rounds in which every member sends a chunk of ⌈block / f⌉ bytes to
//               its ring successor and waits for its predecessor's, the f − 1 reduce-scatter
//               rounds then adding the chunk (max(1, ⌈chunk elements / adds per cycle⌉)).
//               Time = 2(f − 1) × max(one chunk streamed + the ring's mean hop latency, the
//               round's busiest-link drain, never slowed by router contention: a round is
//               one message per member) + (slowest hop − mean hop) + the adds. A member can
//               only send round k + 1 after receiving round k, so the rounds advance at the
//               mean latency around the ring (the cycle mean of that max-plus recurrence);
//               the slowest hop is paid once more at the start. When rounds share links
//               (strided rings), the members drift out of step and keep the shared link busy:
//               the rounds then follow one another at its drain
//               (RingGatherTime::round_transfer; a ring of neighbours, whose drain is one
//               chunk, is the first case). (The model used to count the
//               reduction as one transfer of 2(f − 1)/f · block per member, one latency: 36 % MAPE
//               in validate.)
//  energy     = MACs × e_MAC + SRAM bytes touched (pe_model.h) × nodes × e_SRAM + Σ whole
//               flits × link width × hops × e_hop (hops = router-to-router links, 1 on a
//               crossbar): the simulator's energy of the same plan (sim/output/run_report.h).
//
// Tabulating edge tables (edge_cycles_table) does not build transfer lists: consumer needs and
// producer layouts are computed once per choice (transfers.h), equal needs are grouped, and
// with dimension-order routing (xy, yx) the loads are counted in difference form instead of
// walking routes, on every core it may use; tests/optimizer/transfers_test.cpp checks every
// entry against edge_cost.
#include <algorithm>
#include <cstdint>

#include "optimizer/cost/cost_model.h"
#include "optimizer/partition/transfers.h"

namespace nocflow::optimizer {

/// A message at most 1 / kShortFraction as long as the edge's longest is short: where such
/// messages contend on a router link while the long ones bind a PE channel (2-D halos: rows and
/// corners against the halos), the link's contention delays the channel
/// (LinkloadModel::channel_contention_scale). Messages within 4x of each other (an all-to-all's
/// remainder pieces) are the channel's own flows.
inline constexpr std::int64_t kShortFraction = 4;

struct LinkLoad {
  double max_link_flits = 0;  ///< flits on the busiest link (each transfer cut into flits)
  double max_router_link_flits = 0;  ///< ... on the busiest router-to-router link
  double max_endpoint_flits = 0;     ///< ... on the busiest injection or ejection channel
  /// Cycles the slowest PE channel takes: over every injection and ejection channel, its flits
  /// over the rate its messages' flows reach (HwDesc::injection_rate, ejection_rate). Equal to
  /// max_endpoint_flits when the buffers cover the credit loop (every flow streams).
  double endpoint_cycles = 0;
  double flits = 0, messages = 0;    ///< all messages and their flits (mean message length)
  /// A router-to-router link carrying max_router_link_flits carries flits of ≥ 2 sources.
  /// Route walking (LinkloadModel::route) finds it; the difference-form counter infers it only
  /// where the counts imply it (busier than every channel), and edge tables recount an entry
  /// whose busiest router link ties with the busiest channel by walking routes.
  bool busiest_router_link_shared = false;
  /// Flits of the shortest message on a busiest router-to-router link that ≥ 2 sources and
  /// ≥ 2 destinations share, when it is at most 1 / kShortFraction of the edge's longest
  /// message; 0 when there is no such link: set by route walking only (the difference-form
  /// counter leaves it 0, and edge tables recount the entries that need it, needs_routes).
  /// Where the PE channels bind, such a link's contention delays them too
  /// (LinkloadModel::channel_contention_scale).
  double busiest_router_link_shortest = 0;
  /// Where busiest_router_link_shortest is set and a PE channel binds, on an xy mesh: the
  /// cycles a round-robin fluid run of the edge's short messages alone (round_robin_fluid.h)
  /// takes beyond the busiest link they load, router link or PE channel; 0 otherwise. Set by
  /// route walking only, calibrated or not (validate calibrates afterwards); only calibrated
  /// linkload with s > 0 uses it (LinkloadModel::channel_contention_cycles). The routers'
  /// arbitration starves flows that come from far down a column where local ones join them
  /// (the parking-lot effect), which s, fitted on all-to-alls, does not see.
  double short_messages_arbitration_cycles = 0;
  /// Some message has at most 1 / kShortFraction of the longest's flits (both counters; the
  /// difference-form one may say true where route walking says false, never the other way).
  /// Without one, busiest_router_link_shortest is 0, and edge tables need not walk routes to
  /// learn it.
  bool short_messages = true;
  /// Flits summed over the router-to-router links (Σ flits × hops of every message), and how
  /// many such links the topology has: their mean load, and the mean route.
  double router_flit_hops = 0;
  int router_links = 0;
  int max_hops = 0;     ///< router-to-router links of the longest route (≥ 1)
  int max_routers = 0;  ///< routers the longest route traverses
  double byte_hops = 0;
  int max_sent = 0;  ///< the most messages one PE sends
  /// Where every PE sends at most one message on a mesh whose flows stream (single_sends), set
  /// by route walking (LinkloadModel::route; edge tables recount such entries, needs_routes):
  /// the messages' zero-load head arrivals served first come, first served at every link
  /// (ties: the longer route first, so the order transfers are added does not matter), the
  /// latest tail plus the rest of its route, in cycles, on the model's machine. 0 otherwise,
  /// on a crossbar (where it equals the sum form) and for ring rounds (priced by their drain).
  double scheduled_cycles = 0;

  /// The counts both link counters end with (integers), the busiest link derived from its parts.
  void set_counts(std::int64_t busiest_router_link, std::int64_t busiest_endpoint, std::int64_t flit_hops,
                  int links, std::int64_t all_flits, std::int64_t all_messages) {
    max_router_link_flits = static_cast<double>(busiest_router_link);
    max_endpoint_flits = static_cast<double>(busiest_endpoint);
    endpoint_cycles = max_endpoint_flits;
    max_link_flits = static_cast<double>(std::max(busiest_router_link, busiest_endpoint));
    router_flit_hops = static_cast<double>(flit_hops);
    router_links = links;
    flits = static_cast<double>(all_flits);
    messages = static_cast<double>(all_messages);
    busiest_router_link_shared = busiest_router_link > busiest_endpoint;
  }
};

/// An edge's ring all-gathers (HwDesc::all_gather), in cycles: n − 1 rounds of every
/// ring at once.
struct RingGatherTime {
  double latency = 0;   ///< hop latencies of the rounds
  double transfer = 0;  ///< rounds × round_transfer(the round's busiest-link drain)
  double byte_hops = 0;
  LinkLoad round;  ///< one round's transfers (member → ring successor, every ring)
  int rounds = 0;
  double mean_hop = 0;  ///< hop latency around the rings (the largest mean), cycles
  double message = 0;   ///< cycles one chunk takes to stream alone
  double cycles() const { return latency + transfer; }
  /// One round's cycles beyond the mean hop, given its busiest link's drain. A member sends
  /// its next chunk once its predecessor's has arrived: at least one chunk streamed (exact for
  /// a ring of neighbours, whose drain is one chunk). When rounds share links, the drain takes
  /// longer and the members, out of step, keep the shared link busy: the rounds then follow
  /// one another at the drain, their hop latencies hidden behind it.
  double round_transfer(double drain) const { return std::max(drain - mean_hop, message); }
};

/// A layer's INPP ring all-reduce, in cycles.
struct ReductionTime : RingGatherTime {  ///< its 2(f − 1) rounds
  double adds = 0;                       ///< the reduce-scatter rounds' adds
  double bytes = 0;
  double cycles() const { return latency + transfer + adds; }
};

class LinkloadModel : public CostModel {
 public:
  /// How edge tables are computed; the numbers never depend on these.
  struct Options {
    int threads = 0;  ///< threads for edge_cycles_table; 0 = one per core it may use (usable_cores)
    bool always_group = false;  ///< tests: take the grouped path for every group of ≥ 2 destinations
    /// Entries × PEs from which edge_cycles_table shares its work out to `threads` (dimension-
    /// order routing only); smaller tables run on the caller's thread.
    double parallel_work = 65536;
  };
  /// Throws InputError when hw names a calibration without this machine
  /// (HwDesc::router_slowdown_missing): calibrated by mistake is worse than refused.
  explicit LinkloadModel(HwDesc hw) : LinkloadModel(std::move(hw), Options{}) {}
  LinkloadModel(HwDesc hw, Options options);
  ~LinkloadModel() override;
  std::string name() const override { return "linkload"; }
  Cost layer_cost(const Layer& layer, const Choice& choice) const override;
  Cost edge_cost(const Workload& workload, const LayerEdge& edge, const Choice& src,
                 const Choice& dst) const override;
  std::vector<double> edge_cycles_table(const Workload& workload, const LayerEdge& edge,
                                        const std::vector<Choice>& src_choices,
                                        const std::vector<Choice>& dst_choices,
                                        const EntriesDone& done = {}) const override;
  /// The INPP partial-sum reduction of a layer under a choice (zero without INPP): its ring
  /// all-reduce routed onto the links, plus the adds. Part of layer_cost.
  Cost reduction_cost(const Layer& layer, const Choice& choice) const;
  ReductionTime reduction_time(const Layer& layer, const Choice& choice) const;
  /// An edge's ring all-gathers as the simulator runs them (sim/lower/collectives.h), all
  /// rings at once: n − 1 rounds (n the largest ring) in which every member sends a chunk to
  /// its ring successor and waits for its predecessor's; priced as reduction_time prices a
  /// round. Thread-safe (walks routes without the cache).
  RingGatherTime ring_gather_time(const std::vector<RingGather>& rings) const;
  /// The all-gathers (transfers.h, all_gather_groups) the simulator runs as rings on this edge,
  /// its layers as placed (sim/lower/lowering.cpp asks): none under lowering.all_gather:
  /// direct, all of them under ring; under auto all of them when the rings, with the edge's
  /// other transfers sent directly, take fewer cycles than sending everything directly, both
  /// priced uncalibrated (no router_slowdown: a calibration does not change what runs), else
  /// none. edge_cost and the edge tables price what this returns.
  std::vector<RingGather> rings_to_run(const Workload& workload, const LayerEdge& edge,
                                       const PlacedLayer& producer,
                                       const PlacedLayer& consumer) const;
  /// Under auto: whether the rings (`rings`, the rest `rest`) beat all direct (`all`), priced
  /// uncalibrated.
  bool rings_pay(const LinkLoad& rest, const RingGatherTime& rings, const LinkLoad& all) const;
  const HwDesc& hw() const { return hw_; }
  /// Route transfers and measure the busiest link.
  LinkLoad route(const std::vector<Transfer>& transfers) const;
  /// transfer_cycles = latency_cycles + serialization_cycles − overlap_cycles (0 when nothing
  /// moves); for a scheduled load (LinkLoad::scheduled_cycles), the schedule + serialization
  /// − its busiest link's flits − overlap_cycles (what calibrated router contention adds).
  double transfer_cycles(const LinkLoad& load) const;
  /// The same on machine `hw` (transfer_cycles is this on the model's own). A schedule stays
  /// the model's: `hw` may differ in router_slowdown only.
  static double transfer_cycles(const LinkLoad& load, const HwDesc& hw);
  double latency_cycles(const LinkLoad& load) const;        ///< pipeline fill of the longest route
  double serialization_cycles(const LinkLoad& load) const;  ///< the busiest link's flits, slowed down
  double overlap_cycles(const LinkLoad& load) const { return overlap_cycles(load, hw_); }
  /// Whether `load`'s time needs its routes walked beyond what the difference-form counts
  /// give: busiest_router_link_shared when calibrated and the busiest router link ties with the
  /// busiest channel, busiest_router_link_shortest when calibrated (s > 0), a channel is
  /// busier than every router link that carries flits and some message is short, or
  /// scheduled_cycles (single_sends).
  bool needs_routes(const LinkLoad& load) const;
  /// Whether `hw` prices an edge of one message per PE by its link schedule: a mesh (on a
  /// crossbar the schedule equals the sum form) whose flows stream.
  static bool schedules_single_sends(const HwDesc& hw) { return hw.mesh() && hw.flow_rate() >= 1; }
  /// Every PE sends at most one message on such a machine: the edge is its link schedule
  /// (LinkLoad::scheduled_cycles).
  static bool single_sends(const LinkLoad& load, const HwDesc& hw) {
    return load.max_sent == 1 && schedules_single_sends(hw);
  }
  /// The busiest link's flits (over its drain rate when the buffers are shorter than the credit
  /// loop: HwDesc::router_link_rate; the channels' LinkLoad::endpoint_cycles), in cycles; a
  /// router-to-router link's times (1 + s · scale) when hw's router_slowdown s is set (see
  /// slowdown_scale).
  static double drain_flits(const LinkLoad& load, const HwDesc& hw);
  /// The same without router contention (what a ring round drains in, calibrated or not).
  static double plain_drain_flits(const LinkLoad& load, const HwDesc& hw);
  /// U² · m / (m + B) (see the file comment) when a router-to-router link is busier than every
  /// channel, or as busy and shared by ≥ 2 sources; else 0: the slowdown per unit of s.
  static double slowdown_scale(const LinkLoad& load, int vc_buffer_flits);
  /// U² · μ / (μ + B) when a PE channel is busier than every router-to-router link and a
  /// busiest router link is shared by ≥ 2 sources and ≥ 2 destinations, μ the shortest message
  /// on it (LinkLoad::busiest_router_link_shortest); else 0. Calibrated, the channel's drain
  /// then takes L_R · s · this longer: the cycles that link loses to contention, whose stalled
  /// packets hold the VCs and buffers the channel's other flows need (see the file comment).
  /// "Busier" counts flits, as router_bound does: with VC buffers so short that a router link
  /// drains below one flit per cycle (no shipped config), that link may bind in cycles while
  /// the term still applies.
  static double channel_contention_scale(const LinkLoad& load, int vc_buffer_flits);
  /// What a PE channel that binds waits, calibrated, for a contended busiest router link (see
  /// channel_contention_scale), in cycles: the larger of L_R · s · channel_contention_scale
  /// (VC blocking, as the all-to-alls s is fitted on show it) and μ / (μ + B) ·
  /// LinkLoad::short_messages_arbitration_cycles (the short messages' round-robin starvation
  /// down a column, of which a message that fits in a buffer holds up no VCs behind it). 0
  /// uncalibrated, with s = 0 (no router contention on the machine), or where the term does
  /// not apply. Over the router links' drain rate (HwDesc::router_link_rate, 1 when the
  /// buffers cover the credit loop): the fluid run's links carry a flit per cycle.
  static double channel_contention_cycles(const LinkLoad& load, const HwDesc& hw);
  /// (longest route − mean route) / 2, in cycles: what the midpoint route saves.
  static double midpoint_saving(const LinkLoad& load, const HwDesc& hw);
  /// The latency a router-bound drain hides when router_slowdown is set: min(drain − busiest
  /// channel, midpoint_saving); 0 otherwise.
  static double overlap_cycles(const LinkLoad& load, const HwDesc& hw);
  /// Zero-load latency of a route through `routers` routers (may be fractional: a mean).
  static double route_cycles(double routers, const HwDesc& hw) {
    return routers * (hw.router_pipeline_cycles + hw.link_latency_cycles) + hw.link_latency_cycles +
           1;
  }

 struct Impl;  ///< topology, routing and the route cache (linkload_model.cpp)

 private:
  /// An edge as rings_to_run decides: the rings it runs, its direct transfers' loads, bytes.
  struct PricedEdge {
    std::vector<RingGather> rings;
    RingGatherTime ring_time;
    LinkLoad direct;
    double bytes = 0;
  };
  PricedEdge price_edge(const Workload& workload, const LayerEdge& edge,
                        const PlacedLayer& producer, const PlacedLayer& consumer) const;

  HwDesc hw_;
  Options options_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nocflow::optimizer
