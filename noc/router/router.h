// SPDX-License-Identifier: MIT
#pragma once
// Input-queued virtual-channel router with wormhole switching and credit-based flow control.
// Plain C++; the SystemC shell (noc/sc) only names and drives it.
//
// One cycle (step), for the VCs whose stage is due (`ready <= now`):
//   RC  route computation for a head at the front of an idle VC  -> VA after routing_delay
//   VA  VC allocation: the head requests every free VC of its output port -> SA after
//       vc_alloc_delay (one cycle sooner with speculative)
//   SA  switch allocation among VCs with a flit and a downstream credit, one VC per input
//       port per output (round-robin from the port's last winner), then a matching of input
//       to output ports. The winner's flit leaves the buffer: its credit goes upstream
//       (usable there after 1 + link latency cycles) and the flit arrives downstream after
//       (sw_alloc_delay - 1) + st_delay + link latency + 1 cycles. A tail frees its output VC
//       (seen by VA from the next cycle), and the input VC routes its next packet next cycle.
// Stages run VA before SA, and every state change carries a ready cycle, so a result is used
// by the next stage only from the following cycle: the BookSim2 timing (5 cycles per router
// with four 1-cycle stages and 1-cycle links).
// With lookahead routing a head skips RC (its route is known on arrival).
//
// An output port is *VC-starved* in a cycle it sends nothing, no input asks the switch for it,
// and a head ready for VA wants it while every one of its VCs is held by a packet: the link
// idles although a packet waits for it. It is *credit-stalled* in a cycle it sends nothing, no
// input asks the switch for it, it is not VC-starved, and a flit that holds one of its VCs is
// ready but has no credit: the link idles because the next buffer is full. Cycles a router
// sleeps through count as its last step did (nothing changes while it sleeps).
#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "noc/flit.h"
#include "noc/network/channels.h"
#include "noc/router/allocator.h"
#include "noc/router/routing.h"
#include "noc/spec.h"
#include "noc/topology/topology.h"

namespace nocflow::noc {

enum class VcState : std::uint8_t { Idle, Routing, VcAlloc, Active };

struct InputVc {
  VcState state = VcState::Idle;
  Cycle ready = 0;           ///< first cycle the current stage may act
  std::int16_t out_port = -1;
  std::int16_t out_vc = -1;
  std::uint16_t head = 0;    ///< ring buffer front (index within the VC's slots)
  std::uint16_t count = 0;   ///< flits buffered
};

struct OutputVc {
  bool in_use = false;  ///< allocated to a packet whose tail has not left
  int credits = 0;      ///< free slots downstream
};

class Router {
 public:
  static constexpr int kMaxPorts = 64;      ///< per router
  static constexpr int kMaxInputVcs = 256;  ///< ports x VCs per router

  Router(int id, const Topology& topo, const RoutingFunction& routing, const RouterSpec& spec,
         const LinkSpec& link);

  /// Delivery phase: a flit reaches input port `port`; a credit returns for an output VC.
  void receive_flit(int port, const Flit& f, Cycle now);
  void receive_credit(int out_port, int vc);

  /// Evaluate one cycle. Sends flits and credits into `channels`; counts link traffic.
  void step(Cycle now, Channels& channels, PacketTable& packets);
  /// After step(now): true when nothing in the router can change before a flit or a credit
  /// arrives (the step made no progress and no VC waits for a stage delay to pass). Skipping
  /// its steps until then changes no result.
  bool can_sleep(Cycle now) const;

  int id() const { return id_; }
  int buffered() const { return buffered_; }
  int num_ports() const { return ports_; }
  int vcs() const { return vcs_; }
  const InputVc& input_vc(int port, int vc) const { return in_[port * vcs_ + vc]; }
  const OutputVc& output_vc(int port, int vc) const { return out_[port * vcs_ + vc]; }
  const Flit& front(int port, int vc) const;
  int buffer_depth() const { return depth_; }
  int credit_capacity(int out_port) const { return capacity_[out_port]; }
  std::int64_t flits_sent(int out_port) const { return flits_sent_[out_port]; }
  /// Cycles the output port sent its first and last flit in.
  const ActiveSpan& sent_span(int out_port) const { return sent_span_[out_port]; }
  /// Cycles before `now` the output port was VC-starved (header comment); `now` adds the
  /// cycles a sleeping router has not stepped through yet.
  std::int64_t vc_starved_cycles(int out_port, Cycle now) const;
  /// Cycles before `now` the output port was credit-stalled (header comment), likewise.
  std::int64_t credit_stalled_cycles(int out_port, Cycle now) const;
  /// Cycle of the last flit that left this router, for the watchdog.
  Cycle last_departure() const { return last_departure_; }

  void reset();
  /// Arbitration back to its reset state (allocator pointers, each input port's VC
  /// round-robin), buffers and counters untouched: a drained router then behaves as a new one.
  void reset_arbitration();

 private:
  using Mask = std::array<std::uint64_t, 4>;  // one bit per input VC: up to 256 per router
  static void set(Mask& m, int i) { m[i >> 6] |= std::uint64_t{1} << (i & 63); }
  static void unset(Mask& m, int i) { m[i >> 6] &= ~(std::uint64_t{1} << (i & 63)); }
  bool none(const Mask& m) const {
    return single_word_ ? !m[0] : !(m[0] | m[1] | m[2] | m[3]);
  }
  /// Call f(i) for every set bit i of m, in increasing order.
  template <class F>
  void for_each_bit(const Mask& m, F&& f) const {
    const int words = single_word_ ? 1 : static_cast<int>(m.size());
    for (int w = 0; w < words; ++w)
      for (std::uint64_t bits = m[w]; bits; bits &= bits - 1) f(w * 64 + __builtin_ctzll(bits));
  }

  void start_packet(int ivc, Cycle now);  ///< a head is at the front of an idle VC
  void compute_route(int ivc);
  void route_stage(Cycle now);
  void vc_alloc_stage(Cycle now);
  void vc_alloc_all(Cycle now);       ///< vc_alloc_stage for more than 64 input VCs: one matching
  void grant_vc(int ivc, Cycle now);  ///< ivc won the output VC the VC allocator matched it to
  void switch_alloc_stage(Cycle now, Channels& channels, PacketTable& packets);

  int id_;
  const Topology& topo_;
  const RoutingFunction& route_fn_;
  int ports_, vcs_, depth_;
  int routing_delay_, vc_alloc_delay_, flit_delay_, credit_delay_;
  bool lookahead_, speculative_;

  std::vector<InputVc> in_;
  std::vector<OutputVc> out_;
  std::vector<Flit> slots_;  ///< ports * vcs * depth
  std::vector<PortPeer> out_peer_, in_peer_;
  std::vector<int> capacity_;  ///< per output port: downstream buffer slots per VC
  Mask routing_{}, vc_alloc_{};  ///< VCs in the RC / VA stage
  Mask sa_ready_{};              ///< VCs active with a flit buffered: the SA candidates
  /// The VCs of input `port` in mask m, as the low vcs_ bits.
  std::uint64_t port_bits(const Mask& m, int port) const {
    if (single_word_) return (m[0] >> (port * vcs_)) & vc_mask_;
    return port_bits_wide(m, port);
  }
  std::uint64_t port_bits_wide(const Mask& m, int port) const;
  bool single_word_ = false;  ///< ports * vcs <= 64: every mask is one word
  std::vector<std::uint64_t> out_free_;  ///< per output port: VCs not allocated to a packet
  std::uint64_t vc_mask_ = 0;
  std::vector<std::uint16_t> sa_offset_;  ///< per input port: VC after the last SA winner
  std::unique_ptr<Allocator> va_, sa_;
  std::vector<std::int16_t> sa_vc_;  ///< per (input port, output port): the requesting VC
                                     ///< (written for every request, read only for matches)
  std::vector<std::int64_t> flits_sent_;
  std::vector<ActiveSpan> sent_span_;
  // VC-starved and credit-stalled output ports (header comment): cycles up to last_step_
  // inclusive, and the ports so in that step, which stay so while the router sleeps.
  std::vector<std::int64_t> vc_starved_, credit_stalled_;
  std::uint64_t starved_ports_ = 0, stalled_ports_ = 0;
  std::uint64_t sent_ports_ = 0;  ///< output ports that have sent a flit
  std::uint64_t va_blocked_ = 0;  ///< this step: ports a ready head found without a free VC
  /// VC allocation found no request (every ready head wanted a port without a free VC):
  /// until this cycle, when the next waiting head is ready, it finds the same, blocked ports
  /// va_quiet_blocked_, unless a head enters VA or a VC is freed (both reset it to 0).
  Cycle va_quiet_until_ = 0;
  std::uint64_t va_quiet_blocked_ = 0;
  std::uint64_t asked_ = 0;       ///< this step: ports some input asked the switch for (SA)
  /// This step: ports nobody asked for that a ready flit wanted but found without a credit (SA).
  std::uint64_t credit_waits_ = 0;
  Cycle last_step_ = -1;
  /// Cycles between the last step and `now` that the router slept through.
  Cycle slept(Cycle now) const { return now > last_step_ + 1 ? now - last_step_ - 1 : 0; }
  void count_waits(Cycle now);  ///< VC-starved and credit-stalled ports of this step
  int buffered_ = 0;
  Cycle last_departure_ = 0;
  bool progressed_ = false;  ///< the last step routed, allocated or sent something
  /// Active VCs whose output VC has no credit. Kept up to date where credits change (send,
  /// receive_credit, grant_vc), so that SA skips them without looking at each one every cycle.
  Mask no_credit_{};
  std::vector<std::int16_t> ovc_holder_;  ///< per output VC in use: the input VC holding it
};

}  // namespace nocflow::noc
