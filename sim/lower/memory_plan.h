// SPDX-License-Identifier: MIT
#pragma once
// Static memory planning of a lowered plan (seed 003, "static memory planning"): every buffer a
// PE's program needs gets an SRAM offset, so that buffers whose lifetimes do not overlap share
// memory. Time is the PE's step index; a buffer lives from its first to its last step.
//
// Buffers of PE p (bytes as the SRAM check counts them, optimizer::held_shares: whole elements,
// ⌈elements / parts⌉ × bytes per element):
//   weights  of layer l: its share (and of a fixed constant it reads, a mask, the part its
//            block reads), during l's compute step (streamed in per layer); a pipelined plan
//            solved with --resident-weights (Lowered::resident_weights) holds it from the
//            program's first step to its last, one buffer for every micro-batch's NAME@m;
//   input    a network input: one buffer (per micro-batch of a pipeline: each is another
//            sample), the union of what its readers on p read of it (the first layers, and in a
//            training graph the weight gradient reading X; halos included: no message brings
//            them, so not the SRAM check's share), from the start of the program to the last of
//            their computes;
//   output   of layer l: its block, from l's compute to its last use on p: the last send or
//            reduction step of l, or the compute of the last consumer of l on p (which may
//            read its own part of the block in place: a conservative end); a network output
//            to the end of the program; none for a weight update, which writes the new weights
//            over the old ones in place (unless a layer reads them: a hand-edited graph);
//   received of edge e into layer m: all of e's messages to p in one buffer, from the first
//            receive step to m's compute (in dataflow replay a message may arrive before its
//            receive step and wait in the NI meanwhile: not counted here);
//   chunk    of l's INPP ring all-reduce: one chunk ⌈block / f⌉, the receive buffer of every
//            round, from the reduction's first step to its last (partial sums add into the
//            output block in place).
// Buffers of no bytes (a pooling layer's weights) are left out.
// The lowering's SRAM check (each layer alone, optimizer::layer_memory_bytes) counts a layer's
// shares of weights, input and output (a weight update's output written in place); the plan counts
// what the PE holds at once: its own blocks, what it receives (halos included) and the buffers
// still live for later layers. Packing: buffers by decreasing size (ties: earlier start), each at
// the lowest offset where it overlaps no placed buffer that is live at the same time (first fit;
// the 2-D packing of seed 003 with time fixed). The planned peak is at least the live peak, the
// most bytes live at one step, and at most the sum of all buffers (no reuse).
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "optimizer/partition/workload.h"
#include "sim/lower/lowering.h"

namespace nocflow::sim {

enum class BufferKind : std::uint8_t { Weights, Input, Output, Received, Chunk };

const char* to_string(BufferKind kind);

struct Buffer {
  BufferKind kind = BufferKind::Output;
  int layer = -1;  ///< the layer it belongs to (Received: the consuming layer)
  int edge = -1;   ///< Received, Chunk: the lowered edge; else -1
  std::int64_t bytes = 0;
  int first = 0, last = 0;   ///< step indices in the PE's program, inclusive
  std::int64_t offset = -1;  ///< bytes from the start of SRAM, set by pack()
};

struct PeMemoryPlan {
  std::vector<Buffer> buffers;
  std::int64_t peak_bytes = 0;       ///< max offset + bytes after packing
  std::int64_t live_peak_bytes = 0;  ///< most bytes live at one step (no packing does better)
  std::int64_t no_reuse_bytes = 0;   ///< sum of all buffers
};

/// Offsets for `plan.buffers` (first fit by decreasing size) and the three totals.
void pack(PeMemoryPlan& plan);

/// The buffers of every PE of `lowered` (index = PE), packed.
std::vector<PeMemoryPlan> plan_memory(const Lowered& lowered, const optimizer::Workload& workload);

/// memory.csv: one row per buffer (pe, kind, layer, edge, bytes, first_step, last_step,
/// offset_bytes), PEs in order, each PE's buffers by offset.
void write_memory_csv(std::ostream& out, const std::vector<PeMemoryPlan>& plans,
                      const Lowered& lowered);

}  // namespace nocflow::sim
