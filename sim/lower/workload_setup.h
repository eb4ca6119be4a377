// SPDX-License-Identifier: MIT
#pragma once
// What `optimize`, `simulate` (and later `validate`, `sweep`) share, so that they always see
// the same network and the same machine: the optimizer's view of the hardware config, and the
// network as the optimizer partitions it (loaded, passes run, zoo elements of data.width_bytes).
#include <cstdint>
#include <string>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/graph/graph.h"
#include "sim/config/hw_spec.h"

namespace nocflow::sim {

/// Router pipeline per hop: route computation (unless lookahead), VC and switch allocation
/// (overlapped when speculative), switch traversal. `bnoc`: the paper model's B_NoC in bytes
/// per cycle, 0 for one link's.
optimizer::HwDesc hw_desc_of(const HwSpec& spec, double bnoc = 0);

/// zoo:NAME, a network .yaml or an .onnx file; `passes` as for `nocflow inspect`.
optimizer::Graph prepare_network(const std::string& network, std::int64_t batch, const HwSpec& spec,
                                 const std::string& passes = "default");

}  // namespace nocflow::sim
