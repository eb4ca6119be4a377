// SPDX-License-Identifier: MIT
#include "optimizer/cost/linkload_model.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <thread>

#include "noc/base/cores.h"
#include "noc/base/error.h"
#include "noc/router/routing.h"
#include "noc/topology/topology.h"
#include "optimizer/cost/dimension_order_loads.h"
#include "optimizer/cost/linkload_internal.h"
#include "optimizer/cost/pe_model.h"

namespace nocflow::optimizer {

namespace {

/// One row of a cost table (one producer choice against every consumer choice). `recount`
/// (with a counter that does not walk routes): walks the routes of an entry whose time needs
/// them (LinkloadModel::needs_routes).
template <class Counter>
void fill_row(Counter& counter, PathLoadCounter* recount, std::vector<Piece>& scratch,
              const PlacedLayer& producer, const ConsumerNeeds* first, const ConsumerNeeds* last,
              const PeGrid& grid, const LinkloadModel& model, double* row) {
  using AllGather = HwDesc::AllGather;
  const AllGather mode = model.hw().all_gather;
  const ProducerLayout layout(producer, grid);
  std::vector<RingGather> rings;
  for (const ConsumerNeeds* need = first; need != last; ++need) {
    const ConsumerNeeds& n = *need;
    // The loads of the direct transfers: with `apart`, the all-gathers go to `rings` instead.
    auto count = [&](auto& c, bool apart) {
      rings.clear();
      layout.for_each_group(
          n, scratch,
          [&](const int* dsts, std::size_t num_dsts, const Piece* pieces, std::size_t num_pieces) {
            if (apart && is_all_gather_group(dsts, num_dsts, pieces, num_pieces))
              rings.push_back(
                  {ring_order(grid, std::vector<int>(dsts, dsts + num_dsts)), pieces[0].bytes});
            else
              c.add_group(dsts, num_dsts, pieces, num_pieces);
          });
      return c.finish();
    };
    auto load_of = [&](bool apart) {
      const LinkLoad load = count(counter, apart);
      return recount && model.needs_routes(load) ? count(*recount, apart) : load;
    };
    const LinkLoad direct = load_of(mode != AllGather::Direct);
    double cycles = model.transfer_cycles(direct);
    if (!rings.empty()) {  // as rings_to_run decides
      const RingGatherTime t = model.ring_gather_time(rings);
      if (mode == AllGather::Ring) {
        cycles = std::max(cycles, t.cycles());
      } else {
        const LinkLoad all = load_of(false);
        cycles = model.rings_pay(direct, t, all) ? std::max(cycles, t.cycles())
                                                 : model.transfer_cycles(all);
      }
    }
    *row++ = cycles;
  }
}

/// Calls work(worker) on `threads` threads (the caller's included) and rethrows the first
/// exception once all have finished.
template <class Work>
void run_workers(int threads, Work&& work) {
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(threads));
  auto guarded = [&](int worker) {
    try {
      work(worker);
    } catch (...) {
      errors[static_cast<std::size_t>(worker)] = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(guarded, t);
  guarded(0);
  for (std::thread& t : pool) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
}

/// `rounds` rounds in each of which every ring sends a chunk from every member to its
/// successor, all rings at once. A member's next send waits for its predecessor's chunk, so the
/// rounds advance at the mean hop latency around the ring (the cycle mean of the max-plus
/// recurrence; the largest mean over the rings), and the slowest hop is paid once more. A round
/// is one message per member, so router contention, when calibrated, does not slow its drain:
/// validate's strided rings (GROUP_GATHER under lowering.all_gather: ring, 64 KiB to 4 MiB)
/// simulate within 3.2 % of the plain price (16x16 at 64 KiB: 10.5 %), which the slowed drain
/// raised 9-21 % above them. Walks routes without the cache: thread-safe.
RingGatherTime ring_rounds(const LinkloadModel::Impl& impl, const HwDesc& hw,
                           const std::vector<RingGather>& rings, int rounds) {
  PathLoadCounter counter(impl, Routes::Walked, OneMessageSchedule::Off);  // a round: its drain
  RingGatherTime out;
  double slowest = 0;
  for (const RingGather& r : rings) {
    const std::size_t n = r.ring.size();
    double sum = 0;
    out.message = std::max(out.message,
                           hw.stream_cycles(static_cast<double>(impl.flit.flits(r.chunk_bytes))));
    for (std::size_t m = 0; m < n; ++m) {
      const int src = r.ring[m], dst = r.ring[(m + 1) % n];
      const double hop = LinkloadModel::route_cycles(counter.add(src, dst, r.chunk_bytes), hw);
      sum += hop;
      slowest = std::max(slowest, hop);
    }
    if (n > 0) out.mean_hop = std::max(out.mean_hop, sum / static_cast<double>(n));
  }
  out.round = counter.finish();
  out.rounds = rounds;
  out.latency = rounds * out.mean_hop + (slowest - out.mean_hop);
  out.transfer = rounds * out.round_transfer(LinkloadModel::plain_drain_flits(out.round, hw));
  out.byte_hops = rounds * out.round.byte_hops;
  return out;
}

}  // namespace

LinkloadModel::LinkloadModel(HwDesc hw, Options options)
    : hw_(std::move(hw)), options_(options), impl_(std::make_unique<Impl>()) {
  if (!hw_.router_slowdown_missing.empty()) throw InputError(hw_.router_slowdown_missing);
  if (options_.threads <= 0) options_.threads = usable_cores();
  impl_->topo = noc::Topology::build(hw_.topology);
  impl_->routing = noc::make_routing(hw_.routing);
  impl_->paths.resize(static_cast<std::size_t>(impl_->topo.num_nodes()) * impl_->topo.num_nodes());
  impl_->router_to_router.assign(impl_->num_links(), false);
  for (int r = 0; r < impl_->topo.num_routers(); ++r)
    for (int p = 0; p < impl_->topo.num_ports(r); ++p)
      if (impl_->topo.out(r, p).kind == noc::PortPeer::Kind::Router) {
        impl_->router_to_router[static_cast<std::size_t>(r * impl_->topo.max_ports() + p)] = true;
        ++impl_->router_links;
      }
  impl_->flit = FlitSize(std::llround(hw_.link_bytes_per_cycle));
  impl_->hw = &hw_;
}

LinkloadModel::~LinkloadModel() = default;

LinkLoad LinkloadModel::route(const std::vector<Transfer>& transfers) const {
  PathLoadCounter counter(*impl_);
  for (const Transfer& x : transfers) counter.add(x.src, x.dst, x.bytes);
  return counter.finish();
}

double LinkloadModel::latency_cycles(const LinkLoad& l) const {
  if (l.max_link_flits <= 0) return 0;
  // The NoC's zero-load latency (noc/README.md): per router its pipeline and the link, plus
  // the injection and ejection channels.
  return route_cycles(l.max_routers, hw_);
}

namespace {
/// Only a router-to-router link that binds and is shared is slowed. Busier than every channel,
/// it carries ≥ 2 sources. As busy as the busiest channel, it may carry one source's whole
/// traffic (a ring round, a corner PE's gather: not slowed, validate's ALL_REDUCE and
/// ALL_GATHER), or several sources' flows each as long as the channels' (2-D halos: 1.3-1.4 x
/// in barrier replays of mobilenet_v2).
bool router_bound(const LinkLoad& l) {
  return l.max_router_link_flits >= l.max_endpoint_flits && l.busiest_router_link_shared &&
         l.messages > 0 && l.router_links > 0;
}

/// overlap_cycles, given the drain.
double hidden_latency(const LinkLoad& l, const HwDesc& hw, double drain) {
  if (!hw.router_slowdown || !router_bound(l)) return 0;
  return std::max(0.0, std::min(drain - l.endpoint_cycles, LinkloadModel::midpoint_saving(l, hw)));
}

/// U² · m / (m + B): U the mean router-to-router link's load over the busiest's, `message` the
/// flits of the messages that hold VCs, B the VC buffer. `l` has a busy router link.
double contention_scale(const LinkLoad& l, double message, int vc_buffer_flits) {
  const double spread = l.router_flit_hops / (l.router_links * l.max_router_link_flits);  // U
  return spread * spread * message / (message + vc_buffer_flits);
}
}  // namespace

double LinkloadModel::slowdown_scale(const LinkLoad& l, int vc_buffer_flits) {
  return router_bound(l) ? contention_scale(l, l.flits / l.messages, vc_buffer_flits) : 0;
}

double LinkloadModel::plain_drain_flits(const LinkLoad& l, const HwDesc& hw) {
  if (hw.flow_rate() == 1) return l.max_link_flits;  // the buffers cover the credit loop
  return std::max(l.max_router_link_flits / hw.router_link_rate(), l.endpoint_cycles);
}

double LinkloadModel::channel_contention_scale(const LinkLoad& l, int vc_buffer_flits) {
  // A shortest message is only set on a busiest router link that carries flits.
  if (router_bound(l) || l.busiest_router_link_shortest <= 0) return 0;
  return contention_scale(l, l.busiest_router_link_shortest, vc_buffer_flits);
}

double LinkloadModel::channel_contention_cycles(const LinkLoad& l, const HwDesc& hw) {
  const double scale = channel_contention_scale(l, hw.vc_buffer_flits);
  if (!hw.router_slowdown || *hw.router_slowdown <= 0 || scale <= 0) return 0;
  const double mu = l.busiest_router_link_shortest;
  // The fluid run's links carry a flit per cycle: in cycles of the router links' drain rate.
  return std::max(l.max_router_link_flits * *hw.router_slowdown * scale,
                  mu / (mu + hw.vc_buffer_flits) * l.short_messages_arbitration_cycles) /
         hw.router_link_rate();
}

double LinkloadModel::drain_flits(const LinkLoad& l, const HwDesc& hw) {
  if (!hw.router_slowdown) return plain_drain_flits(l, hw);
  if (!router_bound(l))  // a shared busiest router link's contention delays the channel that binds
    return plain_drain_flits(l, hw) + channel_contention_cycles(l, hw);
  // The busiest channel keeps its own bound: with short buffers a channel of few flows can
  // drain slower than the slowed router link.
  return std::max(l.max_router_link_flits *
                      (1 + *hw.router_slowdown * slowdown_scale(l, hw.vc_buffer_flits)) /
                      hw.router_link_rate(),
                  l.endpoint_cycles);
}

double LinkloadModel::midpoint_saving(const LinkLoad& l, const HwDesc& hw) {
  if (l.flits <= 0) return 0;
  return (route_cycles(l.max_routers, hw) - route_cycles(1 + l.router_flit_hops / l.flits, hw)) / 2;
}

double LinkloadModel::overlap_cycles(const LinkLoad& l, const HwDesc& hw) {
  return hidden_latency(l, hw, drain_flits(l, hw));
}

double LinkloadModel::serialization_cycles(const LinkLoad& l) const { return drain_flits(l, hw_); }

bool LinkloadModel::needs_routes(const LinkLoad& l) const {
  return single_sends(l, hw_) ||
         (hw_.router_slowdown && l.max_router_link_flits > 0 &&
          (l.max_router_link_flits == l.max_endpoint_flits ||
           (*hw_.router_slowdown > 0 && l.max_router_link_flits < l.max_endpoint_flits &&
            l.short_messages)));
}

double LinkloadModel::transfer_cycles(const LinkLoad& l) const {
  return transfer_cycles(l, hw_);
}

double LinkloadModel::transfer_cycles(const LinkLoad& l, const HwDesc& hw) {
  if (l.max_link_flits <= 0) return 0;
  const double drain = drain_flits(l, hw);  // once: edge tables call this for every entry
  // A schedule streams its flows (single_sends): its plain drain is the busiest link's flits,
  // and router contention, when calibrated, adds what it adds to the sum form.
  const double start = l.scheduled_cycles > 0 ? l.scheduled_cycles - l.max_link_flits
                                              : route_cycles(l.max_routers, hw);
  return start + drain - hidden_latency(l, hw, drain);
}

ReductionTime LinkloadModel::reduction_time(const Layer& l, const Choice& c) const {
  ReductionTime out;
  const int f = c.factor(PartDim::Inpp);
  if (f <= 1) return out;
  // The ring all-reduce as the simulator runs it (sim/lower/collectives.h): 2(f − 1) rounds; in
  // each, every member of every INPP group sends a chunk (ring_chunk_bytes) to its successor
  // and waits for its predecessor's; in the f − 1 reduce-scatter rounds it then adds the chunk.
  const PlacedLayer placed{&l, c, place(c, hw_.grid())};
  std::vector<RingGather> rings;  // members in INPP order
  std::int64_t chunk = 0;         // the largest (blocks differ when a factor does not divide)
  for (int i = 0; i < c.nodes(); ++i) {
    GridCoord g = grid_coord(c, i);
    if (g[4] != 0) continue;  // one ring per group, from its first member
    RingGather& r = rings.emplace_back();
    const std::int64_t block = output_block(l, c, g).volume() * l.elem_bytes;
    r.chunk_bytes = ring_chunk_bytes(block, f, l.elem_bytes);
    chunk = std::max(chunk, r.chunk_bytes);
    for (g[4] = 0; g[4] < f; ++g[4])
      r.ring.push_back(placed.placement.pe[static_cast<std::size_t>(grid_index(c, g))]);
  }
  static_cast<RingGatherTime&>(out) = ring_rounds(*impl_, hw_, rings, 2 * (f - 1));
  const std::int64_t elements = (chunk + l.elem_bytes - 1) / l.elem_bytes;
  const auto adds = static_cast<std::int64_t>(std::max(1.0, hw_.adds_per_cycle));
  out.adds = static_cast<double>((f - 1) * std::max<std::int64_t>(1, (elements + adds - 1) / adds));
  std::int64_t sent = 0;  // per round, over all members
  for (const RingGather& r : rings) sent += r.chunk_bytes * f;
  out.bytes = static_cast<double>(out.rounds) * static_cast<double>(sent);
  return out;
}

RingGatherTime LinkloadModel::ring_gather_time(const std::vector<RingGather>& rings) const {
  // A ring with fewer rounds than the largest is counted in all of them (an upper bound; an
  // edge's groups are equal in size).
  int rounds = 0;
  for (const RingGather& r : rings) rounds = std::max(rounds, static_cast<int>(r.ring.size()) - 1);
  return rounds > 0 ? ring_rounds(*impl_, hw_, rings, rounds) : RingGatherTime{};
}

Cost LinkloadModel::reduction_cost(const Layer& l, const Choice& c) const {
  const ReductionTime t = reduction_time(l, c);
  Cost out;
  out.cycles = t.cycles();
  out.bytes = t.bytes;
  out.energy_pj = t.byte_hops * hw_.hop_pj_per_byte;
  return out;
}

Cost LinkloadModel::layer_cost(const Layer& l, const Choice& c) const {
  Cost out = reduction_cost(l, c);
  const PeWork work = pe_work(l, c, hw_);
  out.cycles += static_cast<double>(work.cycles);
  out.energy_pj += static_cast<double>(l.macs) * hw_.mac_pj +
                   static_cast<double>(work.sram_bytes) * c.nodes() * hw_.sram_pj_per_byte;
  return out;
}

std::vector<double> LinkloadModel::edge_cycles_table(const Workload& w, const LayerEdge& e,
                                                     const std::vector<Choice>& src_choices,
                                                     const std::vector<Choice>& dst_choices,
                                                     const EntriesDone& done) const {
  // The same numbers as edge_cost, without building transfer lists (transfers.h, fast part).
  const PeGrid grid = hw_.grid();
  const Layer& producer = w.layers[static_cast<std::size_t>(e.src)];
  const Layer& consumer = w.layers[static_cast<std::size_t>(e.dst)];
  const std::size_t rows = src_choices.size(), cols = dst_choices.size();
  std::vector<double> out(rows * cols);
  const noc::Topology& t = impl_->topo;
  const bool dimension_order = t.is_mesh() && (hw_.routing == "xy" || hw_.routing == "yx");
  // With dimension-order routing the work is shared out to threads, each with its own counter,
  // when the table is large enough to pay for them (Options::parallel_work: entries × PEs, each
  // entry's transfers being up to a few per PE): first the consumer needs, then the entries, a row
  // per work item, or a block of a row's columns when there are fewer rows than threads
  // (greedy-layout asks for one row at a time). An entry is computed the same way whichever thread
  // computes it, so the table does not depend on the thread count. The route-walking counter fills
  // the route cache on first use and runs on one thread.
  const bool parallel = dimension_order &&
                        static_cast<double>(rows * cols) * grid.num_pes() >= options_.parallel_work;
  const int threads = parallel ? options_.threads : 1;
  std::vector<ConsumerNeeds> needs(cols);
  std::atomic<std::size_t> next{0};
  run_workers(threads, [&](int) {
    for (std::size_t j; (j = next++) < cols;) {
      const Choice& cj = dst_choices[j];
      needs[j] = consumer_needs(w, e, {&consumer, cj, place(cj, grid)});
    }
  });
  const std::size_t blocks = rows > 0 && rows < static_cast<std::size_t>(threads)
                                 ? (static_cast<std::size_t>(threads) + rows - 1) / rows
                                 : 1;  // per row
  next = 0;
  run_workers(threads, [&](int) {
    std::vector<Piece> scratch;
    auto fill = [&](auto& counter, PathLoadCounter* recount) {
      for (std::size_t item; (item = next++) < rows * blocks;) {
        const std::size_t i = item / blocks, b = item % blocks;
        const std::size_t lo = b * cols / blocks, hi = (b + 1) * cols / blocks;
        const Choice& ci = src_choices[i];
        fill_row(counter, recount, scratch, {&producer, ci, place(ci, grid)}, needs.data() + lo,
                 needs.data() + hi, grid, *this, out.data() + i * cols + lo);
        if (done) done(hi - lo);
      }
    };
    if (dimension_order) {
      DimensionOrderLoadCounter counter(t, impl_->flit, hw_.routing == "xy", options_.always_group,
                                        &hw_);
      PathLoadCounter recount(*impl_, Routes::Walked);
      fill(counter, &recount);
    } else {
      PathLoadCounter counter(*impl_);
      fill(counter, nullptr);
    }
  });
  return out;
}

bool LinkloadModel::rings_pay(const LinkLoad& rest, const RingGatherTime& rings,
                              const LinkLoad& all) const {
  HwDesc plain = hw_;
  plain.router_slowdown.reset();
  return std::max(transfer_cycles(rest, plain), rings.cycles()) < transfer_cycles(all, plain);
}

LinkloadModel::PricedEdge LinkloadModel::price_edge(const Workload& w, const LayerEdge& e,
                                                    const PlacedLayer& prod,
                                                    const PlacedLayer& cons) const {
  const PeGrid grid = hw_.grid();
  PricedEdge out;
  std::vector<Transfer> transfers = edge_transfers(w, e, prod, cons, grid);
  out.bytes = static_cast<double>(total_bytes(transfers));
  if (hw_.all_gather != HwDesc::AllGather::Direct) {
    out.rings = all_gather_groups(w, e, prod, cons, grid);
    if (!out.rings.empty()) {
      const std::vector<int> ring_of = ring_index(out.rings, grid.num_pes());
      std::vector<Transfer> rest;
      for (const Transfer& t : transfers)
        if (!in_ring(t, ring_of)) rest.push_back(t);
      out.direct = route(rest);
      out.ring_time = ring_gather_time(out.rings);
      if (hw_.all_gather == HwDesc::AllGather::Ring ||
          rings_pay(out.direct, out.ring_time, route(transfers)))
        return out;
      out.rings.clear();
      out.ring_time = {};
    }
  }
  out.direct = route(transfers);
  return out;
}

std::vector<RingGather> LinkloadModel::rings_to_run(const Workload& w, const LayerEdge& e,
                                                    const PlacedLayer& prod,
                                                    const PlacedLayer& cons) const {
  return price_edge(w, e, prod, cons).rings;
}

Cost LinkloadModel::edge_cost(const Workload& w, const LayerEdge& e, const Choice& ci,
                              const Choice& cj) const {
  const PeGrid grid = hw_.grid();
  const PricedEdge p =
      price_edge(w, e, {&w.layers[static_cast<std::size_t>(e.src)], ci, place(ci, grid)},
                 {&w.layers[static_cast<std::size_t>(e.dst)], cj, place(cj, grid)});
  Cost out;
  out.bytes = p.bytes;
  out.cycles = std::max(transfer_cycles(p.direct), p.ring_time.cycles());
  out.energy_pj = (p.direct.byte_hops + p.ring_time.byte_hops) * hw_.hop_pj_per_byte;
  return out;
}

}  // namespace nocflow::optimizer
