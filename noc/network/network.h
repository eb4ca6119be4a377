// SPDX-License-Identifier: MIT
#pragma once
// A whole network-on-chip as plain C++: routers, one network interface (NI) per node, the
// channels between them, and the packets in flight. `step()` simulates one cycle:
//   1. deliver the flits and credits due this cycle (Channels);
//   2. ask packet sources whose wake-up cycle has come for new packets;
//   3. each busy NI injects at most one flit and takes at most one flit from the network;
//   4. each busy router runs RC, VA, SA (Router::step);
//   5. the watchdog checks that something moved if flits are in the network.
// Only busy routers and NIs are visited, and idle stretches are skipped whole (next_busy_cycle /
// skip_to), so cost grows with traffic, not with routers x cycles.
//
// Source NI: a FIFO of messages (bounded by ni.injection_queue_flits, 0 = unbounded: a message
// enters if it fits beside the flits queued, or alone into an empty queue), each
// cut into packets as it is injected. Up to ni.channels messages inject at once, like the
// channels of a DMA engine: the oldest message to each destination, oldest first (a later one
// to the same destination waits: it would share the route and only delay the earlier one, so
// a pair's messages leave in order). Each has at most one packet in progress, on its own
// injection VC; a head takes the first free injection VC with a credit, round-robin from the
// last used (BookSim); each cycle one flit leaves, from the next channel (round-robin, the
// oldest message first) that can send. With one channel this is BookSim's FIFO of packets;
// with several, a message held up by a busy link or destination no longer holds up the
// messages to other destinations queued behind it. Sink NI: per-VC buffers of
// router.buffer_depth flits; each cycle one flit moves into the reassembly queue
// (ni.ejection_queue_flits, 0 = unbounded) and its credit returns; a packet is delivered when
// its tail does. A slow consumer (set_sink_interval) drains the reassembly queue, which
// back-pressures the network.
//
// Self-checks: a flit must reach its destination node, in order within its packet, exactly
// once; credits never exceed buffer space; verify_drained() checks that an empty network has
// every credit back and every VC free. Violations throw CheckError naming router, port and VC.
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "noc/flit.h"
#include "noc/network/channels.h"
#include "noc/network/wake_calendar.h"
#include "noc/router/router.h"
#include "noc/router/routing.h"
#include "noc/spec.h"
#include "noc/topology/topology.h"

namespace nocflow::noc {

/// A message to queue at a source NI: `flits` flits cut into packets of at most `packet_flits`
/// (0: one packet). Every packet carries `tag`, `created` and `measured`.
struct NewPacket {
  int dest = 0;
  int flits = 1;
  Cycle created = 0;
  std::int64_t tag = 0;
  bool measured = false;
  int packet_flits = 0;
};

/// How a source NI cuts a message of `bytes`: ⌈bytes / link width⌉ flits (at least one; the
/// optimizer's FlitSize counts the same) in packets of at most ni.max_packet_flits.
struct MessageCut {
  int flits = 1;
  int packet_flits = 1;  ///< NewPacket::packet_flits
  int packets = 1;
};
/// Throws InputError for a message no NI of `spec` can take: more flits than it counts.
MessageCut cut_message(const NocSpec& spec, std::int64_t bytes);

/// Generates packets lazily, BookSim style. Contract: pull() is called for a node whose source
/// queue is empty, at or after the wake cycle it last asked for; it returns true and fills
/// `packet` (created <= now) or returns false; either way it sets `wake` to the next cycle it
/// wants to be asked (kNever: no more packets).
class PacketSource {
 public:
  virtual ~PacketSource() = default;
  virtual bool pull(int node, Cycle now, NewPacket& packet, Cycle& wake) = 0;
};

/// Told of every packet whose tail reached its destination's reassembly queue.
class DeliveryListener {
 public:
  virtual ~DeliveryListener() = default;
  virtual void delivered(const Packet& packet, Cycle now) = 0;
  /// Every flit, as it leaves the network (before delivered() for a tail).
  virtual void flit_arrived(const Packet& packet, const Flit& flit, Cycle now) {}
};

class Network {
 public:
  /// Builds from the spec; `routing` overrides spec.router.routing (tests use it to build a
  /// deliberately deadlock-prone network). Throws InputError for impossible specs.
  explicit Network(const NocSpec& spec, std::unique_ptr<RoutingFunction> routing = nullptr);
  ~Network();
  Network(const Network&) = delete;
  Network& operator=(const Network&) = delete;

  const Topology& topology() const { return topo_; }
  const NocSpec& spec() const { return spec_; }
  int num_nodes() const { return topo_.num_nodes(); }
  const Router& router(int r) const { return *routers_[r]; }

  void set_source(PacketSource* source);
  void set_listener(DeliveryListener* listener) { listener_ = listener; }
  /// The consumer at `node` takes one flit from reassembly every `cycles` cycles (0: at once).
  void set_sink_interval(int node, int cycles);

  /// Queue a message at node `src`. False when the source queue is full.
  bool send(int src, const NewPacket& packet);

  Cycle now() const { return now_; }
  void step();
  /// now() if there is work this cycle, else the next cycle with an event, or kNever.
  Cycle next_busy_cycle() const;
  /// Jump over idle cycles to `cycle` (<= next_busy_cycle()).
  void skip_to(Cycle cycle);
  /// Run until `cycle` (exclusive), skipping idle stretches; with kNever, until nothing is
  /// left to do.
  void run_until(Cycle cycle);
  /// Nothing queued, in flight or scheduled (sources excepted).
  bool empty() const;

  /// Stop asking sources; what is queued still drains.
  void stop_sources() { sources_stopped_ = true; }
  /// Run until empty; throws CheckError if the watchdog fires first.
  void drain();
  /// Throws CheckError unless every credit is back and every VC is free (call when empty()).
  void verify_drained() const;
  /// What holds flits where, for the watchdog's message.
  std::string stuck_report(int max_lines = 24) const;

  // Counters (since construction or reset).
  std::int64_t flits_injected() const { return flits_injected_; }
  std::int64_t flits_ejected() const { return flits_ejected_; }
  std::int64_t packets_delivered() const { return packets_delivered_; }
  std::int64_t ejected_at(int node) const;
  std::int64_t injected_at(int node) const;
  /// Cycles the node's NI injected its first and last flit in.
  const ActiveSpan& injection_span(int node) const;
  /// Flits created (queued at a source or in the network) but not yet ejected, and the sum
  /// of their creation cycles: BookSim's in-flight latency term for its stability test.
  std::int64_t flits_outstanding() const { return outstanding_flits_; }
  double outstanding_created_sum() const { return outstanding_created_sum_; }
  std::int64_t router_steps() const { return router_steps_; }

  /// Forget all state and counters; time restarts at 0.
  void reset();
  /// Every router's and NI's arbitration back to its reset state, keeping time, counters and
  /// credits in flight: a drained network then runs the next traffic as a new one would (what
  /// barrier replay does at each barrier). CheckError if a flit is still queued or buffered.
  void reset_arbitration();

 private:
  struct Ni;
  void deliver();
  void pull_sources();
  void step_ni(int node);
  void eject_flit(Ni& ni, int node, const Flit& f);
  void activate_ni(int node);
  void activate_router(int r);
  void watchdog();

  NocSpec spec_;
  Topology topo_;
  std::unique_ptr<RoutingFunction> routing_;
  std::vector<std::unique_ptr<Router>> routers_;
  std::vector<Ni> nis_;
  Channels channels_;
  PacketTable packets_;
  PacketSource* source_ = nullptr;
  DeliveryListener* listener_ = nullptr;
  bool sources_stopped_ = false;

  WakeCalendar wakes_;  ///< when to ask the source of an idle node for its next packet

  std::vector<int> active_routers_, active_nis_;
  std::vector<char> router_listed_, ni_listed_;

  Cycle now_ = 0;
  Cycle last_progress_ = 0;
  std::int64_t flits_injected_ = 0, flits_ejected_ = 0, packets_delivered_ = 0;
  std::int64_t outstanding_flits_ = 0;
  double outstanding_created_sum_ = 0;
  std::int64_t router_steps_ = 0;
};

}  // namespace nocflow::noc
