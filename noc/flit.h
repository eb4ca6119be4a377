// SPDX-License-Identifier: MIT
#pragma once
// The units that move through the network. Flits are small values copied into fixed-size
// buffers; a flit never owns memory. Packets live in a recycled table (PacketTable).
#include <cstdint>
#include <limits>
#include <vector>

namespace nocflow::noc {

using Cycle = std::int64_t;
inline constexpr Cycle kNever = std::numeric_limits<Cycle>::max();

/// The cycles from a link's first flit to its last (both included). A link that carried its F
/// flits in a span of S cycles was busy F / S of that time: below 1 it waited between flits,
/// for credits or for flits to send, however few flits the whole run's utilisation counts.
struct ActiveSpan {
  Cycle first = -1, last = -1;  ///< -1: no flit yet
  void add(Cycle c) {
    if (first < 0) first = c;
    last = c;
  }
  Cycle cycles() const { return first < 0 ? 0 : last - first + 1; }
};

struct Flit {
  static constexpr std::uint8_t kHead = 1;
  static constexpr std::uint8_t kTail = 2;

  std::uint32_t packet = 0;  ///< index into the PacketTable
  std::uint16_t seq = 0;     ///< position in the packet, 0 = head
  std::uint16_t dest = 0;    ///< destination node
  std::uint8_t vc = 0;       ///< VC at the input port it is travelling to
  std::uint8_t flags = 0;
  Cycle inject_cycle = 0;    ///< when it left the source NI

  bool head() const { return flags & kHead; }
  bool tail() const { return flags & kTail; }
};

struct Packet {
  int src = 0;
  int dest = 0;
  int length = 0;             ///< flits
  Cycle created = 0;          ///< entered the source queue (BookSim's ctime)
  Cycle head_injected = -1;   ///< head left the source NI (itime)
  int routers = 0;            ///< routers the head traversed
  int flits_ejected = 0;
  std::int64_t tag = 0;       ///< owner's payload (message id, ...)
  bool measured = false;      ///< counts in the traffic statistics
};

/// Packets in flight, with ids recycled through a free list: no allocation once warm.
class PacketTable {
 public:
  std::uint32_t add(const Packet& p) {
    if (free_.empty()) {
      packets_.push_back(p);
      return static_cast<std::uint32_t>(packets_.size() - 1);
    }
    const std::uint32_t id = free_.back();
    free_.pop_back();
    packets_[id] = p;
    return id;
  }
  void release(std::uint32_t id) { free_.push_back(id); }
  Packet& operator[](std::uint32_t id) { return packets_[id]; }
  const Packet& operator[](std::uint32_t id) const { return packets_[id]; }
  std::size_t live() const { return packets_.size() - free_.size(); }
  void clear() {
    packets_.clear();
    free_.clear();
  }

 private:
  std::vector<Packet> packets_;
  std::vector<std::uint32_t> free_;
};

}  // namespace nocflow::noc
