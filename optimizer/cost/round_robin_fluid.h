// SPDX-License-Identifier: MIT
#pragma once
// A fluid run of a mesh's round-robin arbitration: the parking-lot effect that link loads do
// not see (optimizer/README.md, "Router contention"). Flits flow as fluids; every router output
// shares its flit per cycle among its input ports (local, and the four directions) max-min by
// what each offers, and a port's messages keep their proportions (their flits arrive mixed).
// Each source offers 1 flit per cycle, split evenly over the messages it has in flight: the
// first `channels` of its messages in the order given, each next one starting as one ends (the
// NI's channels; not the NI's rule that a message waits for an older one to its destination).
// The outputs are taken in the order of xy routing's channel dependencies (x links along their
// direction, then y links, then ejection), so a rate only falls downstream (iterating the
// shares to their fixed point gave the same figures on validate's cases). It ignores the
// routers' pipeline latency and the VCs; it is scripts/linkload_offline.py's
// `round_robin_fluid`, in C++. Validate reports it over every message beside the cost models;
// linkload's route walking runs it over an edge's short messages where a PE channel binds
// behind a contended column, and calibrated linkload uses that
// (LinkLoad::short_messages_arbitration_cycles). An event recomputes only the
// outputs whose messages or arriving rates changed: the same figures to the bit, about 4x
// faster (a 16x16 all-to-all of 65,280 messages in 0.9 s).
#include <cstdint>
#include <vector>

namespace nocflow::optimizer {

struct FluidMessage {
  int src = 0, dst = 0;    ///< PEs, row-major on the mesh
  std::int64_t flits = 0;  ///< at least 1
};

/// Cycles until the last of `messages` is delivered (0 when none leaves its PE) on a rows x cols
/// mesh routed xy, each source's messages in the order given, `channels` of them at once.
/// Throws std::invalid_argument for a PE off the mesh or fewer than one row, column or channel.
double round_robin_fluid_cycles(const std::vector<FluidMessage>& messages, int rows, int cols,
                                int channels);

}  // namespace nocflow::optimizer
