// SPDX-License-Identifier: MIT
#include "sim/lower/memory_plan.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <utility>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/graph/graph.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/region.h"

namespace nocflow::sim {
namespace {

namespace opt = optimizer;

/// Bytes of a share of optimizer::held_shares (whole elements: a whole number already).
std::int64_t bytes_of(double share) {
  return static_cast<std::int64_t>(share);
}

}  // namespace

const char* to_string(BufferKind kind) {
  switch (kind) {
    case BufferKind::Weights:
      return "weights";
    case BufferKind::Input:
      return "input";
    case BufferKind::Output:
      return "output";
    case BufferKind::Received:
      return "received";
    case BufferKind::Chunk:
      return "chunk";
  }
  return "?";
}

void pack(PeMemoryPlan& plan) {
  std::vector<Buffer>& b = plan.buffers;
  std::vector<std::size_t> order(b.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
    return b[x].bytes != b[y].bytes ? b[x].bytes > b[y].bytes : b[x].first < b[y].first;
  });
  std::vector<std::size_t> placed;
  std::vector<std::pair<std::int64_t, std::int64_t>> taken;  // [offset, end) of live neighbours
  plan.peak_bytes = plan.no_reuse_bytes = 0;
  for (std::size_t i : order) {
    Buffer& buf = b[i];
    taken.clear();
    for (std::size_t j : placed)
      if (b[j].first <= buf.last && buf.first <= b[j].last)
        taken.push_back({b[j].offset, b[j].offset + b[j].bytes});
    std::sort(taken.begin(), taken.end());
    std::int64_t offset = 0;
    for (const auto& [start, end] : taken) {
      if (offset + buf.bytes <= start) break;
      offset = std::max(offset, end);
    }
    buf.offset = offset;
    placed.push_back(i);
    plan.peak_bytes = std::max(plan.peak_bytes, offset + buf.bytes);
    plan.no_reuse_bytes += buf.bytes;
  }
  // Live bytes per step, from a difference array over the lifetimes.
  int steps = 0;
  for (const Buffer& buf : b) steps = std::max(steps, buf.last + 1);
  std::vector<std::int64_t> delta(static_cast<std::size_t>(steps) + 1, 0);
  for (const Buffer& buf : b) {
    delta[static_cast<std::size_t>(buf.first)] += buf.bytes;
    delta[static_cast<std::size_t>(buf.last) + 1] -= buf.bytes;
  }
  std::int64_t live = 0;
  plan.live_peak_bytes = 0;
  for (std::int64_t d : delta) plan.live_peak_bytes = std::max(plan.live_peak_bytes, live += d);
}

std::vector<PeMemoryPlan> plan_memory(const Lowered& lowered, const opt::Workload& workload) {
  const std::size_t num_layers = workload.layers.size();
  const auto micro_batches = static_cast<std::size_t>(lowered.micro_batches);
  if (num_layers % micro_batches != 0)
    throw CheckError("plan_memory: " + std::to_string(num_layers) + " layers are not " +
                     std::to_string(micro_batches) +
                     " micro-batches' copies (lower micro_batched's workload)");
  const std::size_t per_batch = num_layers / micro_batches;  // layers of one micro-batch
  std::vector<std::vector<int>> consumers(num_layers);
  std::vector<bool> has_producer(num_layers, false);
  for (const LoweredEdge& e : lowered.edges)
    if (!e.reduction) {
      consumers[static_cast<std::size_t>(e.src_layer)].push_back(e.dst_layer);
      has_producer[static_cast<std::size_t>(e.dst_layer)] = true;
    }
  std::vector<PeMemoryPlan> plans(lowered.programs.pe.size());
  for (std::size_t p = 0; p < plans.size(); ++p) {
    const Program& prog = lowered.programs.pe[p];
    std::vector<int> compute_at(num_layers, -1);
    for (int i = 0; i < static_cast<int>(prog.size()); ++i)
      if (prog[static_cast<std::size_t>(i)].kind == StepKind::Compute)
        compute_at[static_cast<std::size_t>(prog[static_cast<std::size_t>(i)].layer)] = i;
    // Last step of each layer's own sends and reductions, and each edge's receive span.
    std::vector<int> last_use(num_layers, -1), reduced_at(num_layers, -1);
    struct Span {
      int first, last;
      std::int64_t bytes;  // received: their sum; a reduction: its largest chunk
    };
    std::map<int, Span> edge_span;  // lowered edge -> its receives (and reduction steps) here
    for (int i = 0; i < static_cast<int>(prog.size()); ++i) {
      const Step& s = prog[static_cast<std::size_t>(i)];
      if (s.edge < 0) continue;
      const LoweredEdge& e = lowered.edges[static_cast<std::size_t>(s.edge)];
      if (s.kind == StepKind::Send || e.reduction) last_use[static_cast<std::size_t>(s.layer)] = i;
      if (e.reduction) reduced_at[static_cast<std::size_t>(s.layer)] = i;
      if (s.kind != StepKind::Recv && !e.reduction) continue;
      Span& span = edge_span.try_emplace(s.edge, Span{i, i, 0}).first->second;
      span.last = i;
      if (s.kind != StepKind::Recv) continue;
      span.bytes = e.reduction ? std::max(span.bytes, s.bytes) : span.bytes + s.bytes;
    }
    // A fused layer under INPP applies its tail after its all-reduce: what it reads stays until
    // then (its head's input too, an over-estimate: a step does not say which input it serves).
    auto read_until = [&](int m) {
      const auto mi = static_cast<std::size_t>(m);
      const bool tail_after_reduction = workload.layers[mi].tail_vector_ops > 0 &&
                                        lowered.layers[mi].choice.factor(opt::PartDim::Inpp) > 1;
      return tail_after_reduction ? std::max(compute_at[mi], reduced_at[mi]) : compute_at[mi];
    };
    PeMemoryPlan& plan = plans[p];
    const int end = static_cast<int>(prog.size()) - 1;
    // A network input, and the micro-batch of a pipeline reading it (each is another sample):
    // its buffer on this PE, and what its readers here read of it.
    using InputCopy = std::pair<long, std::size_t>;
    std::map<InputCopy, std::size_t> input_buffer;
    std::map<InputCopy, std::vector<opt::Box>> input_parts;
    std::set<std::size_t> resident;  // network layers whose weights this PE holds
    for (std::size_t l = 0; l < num_layers; ++l) {
      const int at = compute_at[l];
      if (at < 0) continue;
      const opt::Layer& layer = workload.layers[l];
      const opt::LayerShares shares = opt::held_shares(layer, lowered.layers[l].choice);
      const int li = static_cast<int>(l);
      if (!lowered.resident_weights)
        plan.buffers.push_back({BufferKind::Weights, li, -1, bytes_of(shares.weights), at, at});
      else if (resident.insert(l % per_batch).second)
        plan.buffers.push_back({BufferKind::Weights, li, -1, bytes_of(shares.weights), 0, end});
      // One buffer per network input (per micro-batch), from the start to its last reader
      // here (a first layer, or a weight gradient reading the input X), as large as what they
      // read.
      const std::size_t micro_batch = l / per_batch;
      auto hold_input = [&](const InputCopy& input, std::int64_t bytes) {
        const auto [it, fresh] = input_buffer.try_emplace(input, plan.buffers.size());
        if (fresh) plan.buffers.push_back({BufferKind::Input, li, -1, bytes, 0, at});
        Buffer& in = plan.buffers[it->second];
        in.bytes = std::max(in.bytes, bytes);
        in.last = std::max(in.last, at);
      };
      const opt::PlacedLayer& placed = lowered.layers[l];
      if (workload.graph) {
        // What this PE's block reads of the input, halo included: no message delivers it.
        const auto& pes = placed.placement.pe;
        const auto node =
            static_cast<int>(std::find(pes.begin(), pes.end(), static_cast<int>(p)) - pes.begin());
        const opt::GridCoord g = opt::grid_coord(placed.choice, node);
        const auto ins = workload.graph->inputs(layer.id);
        for (std::size_t slot = 0; slot < ins.size(); ++slot)
          if (workload.graph->node(ins[slot]).kind == opt::OpKind::Input) {
            const opt::Box part =
                opt::input_region(*workload.graph, layer.id, static_cast<int>(slot),
                                  opt::output_block(layer, placed.choice, g),
                                  opt::reduction_slice(layer, placed.choice, g));
            // The union of every reader's part. union_volume is exponential in parts that
            // overlap; past a dozen (no network of ours comes near), the largest part.
            const InputCopy input{static_cast<long>(ins[slot]), micro_batch};
            std::vector<opt::Box>& parts = input_parts[input];
            if (std::find(parts.begin(), parts.end(), part) == parts.end()) parts.push_back(part);
            hold_input(input, (parts.size() <= 12 ? opt::union_volume(parts) : part.volume()) *
                                  layer.inputs[slot].elem_bytes);
          }
      } else if (!has_producer[l]) {  // no graph: every input of a first layer is the network's
        hold_input({-1L - li, micro_batch}, bytes_of(shares.input));
      }
      // A weight update (workload.h) writes the new weights over the old ones, in place: no
      // buffer of its own, unless a layer reads them (only a hand-edited graph file has one).
      // A network output stays to the end; any other block until its last use here.
      if (layer.weights_like_output && consumers[l].empty()) continue;
      int last = consumers[l].empty() ? end : std::max(at, last_use[l]);
      for (int m : consumers[l]) last = std::max(last, read_until(m));
      plan.buffers.push_back({BufferKind::Output, li, -1, bytes_of(shares.output), at, last});
    }
    for (const auto& [edge, span] : edge_span) {
      const LoweredEdge& e = lowered.edges[static_cast<std::size_t>(edge)];
      if (e.reduction) {
        plan.buffers.push_back(
            {BufferKind::Chunk, e.src_layer, edge, span.bytes, span.first, span.last});
        continue;
      }
      const int use = read_until(e.dst_layer);
      plan.buffers.push_back({BufferKind::Received, e.dst_layer, edge, span.bytes, span.first,
                              std::max(span.last, use)});
    }
    auto& bufs = plan.buffers;  // without buffers of no bytes (pooling's weights)
    bufs.erase(
        std::remove_if(bufs.begin(), bufs.end(), [](const Buffer& b) { return b.bytes == 0; }),
        bufs.end());
    pack(plan);
  }
  return plans;
}

void write_memory_csv(std::ostream& out, const std::vector<PeMemoryPlan>& plans,
                      const Lowered& lowered) {
  out << "pe,kind,layer,edge,bytes,first_step,last_step,offset_bytes\n";
  for (std::size_t p = 0; p < plans.size(); ++p) {
    std::vector<const Buffer*> rows;
    for (const Buffer& b : plans[p].buffers) rows.push_back(&b);
    std::stable_sort(rows.begin(), rows.end(), [](const Buffer* x, const Buffer* y) {
      return x->offset != y->offset ? x->offset < y->offset : x->first < y->first;
    });
    for (const Buffer* b : rows) {
      const std::string edge =
          b->edge >= 0 ? edge_name(lowered.edges[static_cast<std::size_t>(b->edge)]) : "";
      out << p << ',' << to_string(b->kind) << ','
          << csv_field(lowered.programs.layer_names[static_cast<std::size_t>(b->layer)]) << ','
          << csv_field(edge) << ',' << b->bytes << ',' << b->first << ',' << b->last << ','
          << b->offset << '\n';
    }
  }
}

}  // namespace nocflow::sim
