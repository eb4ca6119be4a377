// SPDX-License-Identifier: MIT
#pragma once
// A small network with an edge of every kind the region rules distinguish, and machines to
// tabulate it on: shared by the transfer and linkload-table tests.
#include <string>
#include <vector>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/frontend/graph_builder.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/placement.h"
#include "optimizer/partition/workload.h"

namespace nocflow::optimizer {

/// Edges of every kind the region rules distinguish: 1×1 conv, 3×3 halo, strided depthwise
/// (grouped), a 1×1 stride-2 downsample (every other row and column), pooling, element-wise
/// add, concat (three inputs), flatten, fully connected.
struct FastPathNetwork {
  Graph graph;
  Workload w;
  FastPathNetwork() {
    GraphBuilder b("fast", 2);
    const NodeId x = b.input({2, 8, 8, 8});
    const NodeId pw = b.conv(x, 16, 1, 1, 0, 1, false, "pw");
    const NodeId halo = b.conv(pw, 16, 3, 1, 1, 1, false, "halo");
    const NodeId dw = b.conv(halo, 16, 3, 2, 1, 16, false, "dw");
    const NodeId pool = b.maxpool(pw, 2, 2, 0, false, "pool");
    const NodeId sum = b.add(dw, pool, "add");
    const NodeId down = b.conv(pw, 16, 1, 2, 0, 1, false, "down");
    const NodeId cat = b.concat({sum, dw, down}, 1, "cat");
    b.gemm(b.flatten(cat, 1, "flat"), 10, true, "fc");
    graph = b.finish();
    w = build_workload(graph);
  }
  const Layer& layer(int i) const { return w.layers[static_cast<std::size_t>(i)]; }
};

inline HwDesc machine(const std::string& kind, int rows, int cols, const std::string& routing) {
  HwDesc hw;
  hw.topology = kind == "crossbar" ? noc::TopologySpec{"crossbar", 0, 0, rows * cols}
                                   : noc::TopologySpec{"mesh", rows, cols, 0};
  hw.routing = routing;
  return hw;
}

/// `hw` with VC buffers shorter than the credit loop: flows of 2/7 flit per cycle, 2 VCs, one
/// NI channel, so every channel's rate depends on how many messages cross it.
inline HwDesc shallow(HwDesc hw) {
  hw.vc_buffer_flits = 2;
  hw.credit_loop_cycles = 7;
  hw.vcs = 2;
  hw.ni_channels = 1;
  return hw;
}

/// Every choice, with the PLACE=ROWS twins `optimize --placement search` adds.
inline std::vector<Choice> all_choices(const Layer& l, const HwDesc& hw) {
  return with_rows_placements(enumerate_choices(l, {hw.num_pes(), false, hw.balanced_splits}),
                              hw.grid());
}

}  // namespace nocflow::optimizer
