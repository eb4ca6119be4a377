// SPDX-License-Identifier: MIT
#pragma once
// Bounds on counts read from files and options, checked where they are read. SystemC time is
// an integer count of picoseconds: at the slowest clock (clock.frequency_ghz 0.001) a cycle is
// 10^6 ps, so a run must stay below about 9.2 * 10^12 cycles; larger values would wrap or
// stall the kernel rather than fail.
#include <cstdint>

namespace nocflow {

/// Cycles one step may take or a message may wait before its start (program files, messages).
inline constexpr std::int64_t kMaxCycles = 1'000'000'000'000;
/// Batch size of a zoo network (--batch, sweep batch axes): plans keep it in an int, and larger
/// batches soon pass shape inference's 2^53 limit on a tensor's elements.
inline constexpr int kMaxBatch = 4096;
/// PEs of the largest machine (topology.rows and cols, or ports, at most 64): no layer splits
/// into more parts.
inline constexpr std::int64_t kMaxPes = 64 * 64;
/// Bytes of one message (1 TiB).
inline constexpr std::int64_t kMaxMessageBytes = std::int64_t{1} << 40;

}  // namespace nocflow
