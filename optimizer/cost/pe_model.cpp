// SPDX-License-Identifier: MIT
#include "optimizer/cost/pe_model.h"

#include <algorithm>
#include <cmath>

#include "optimizer/cost/cost_model.h"

namespace nocflow::optimizer {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return b <= 0 ? 0 : (a + b - 1) / b; }

/// Fraction of `lanes` used when `n` items pass through them in ceil(n / lanes) passes.
double fill(std::int64_t n, std::int64_t lanes) {
  if (n <= 0 || lanes <= 0) return 1;
  return static_cast<double>(n) / static_cast<double>(ceil_div(n, lanes) * lanes);
}

}  // namespace

double vector_ops_executed(const Layer& layer, const Choice& c) {
  // A fused layer's tail runs after the INPP all-reduce, on the whole block, in every member.
  return static_cast<double>(layer.vector_ops) +
         static_cast<double>(layer.tail_vector_ops) * (c.factor(PartDim::Inpp) - 1);
}

PeWork pe_work(const Layer& layer, const Choice& c, const HwDesc& hw) {
  PeWork w;
  w.macs = largest_node_part(layer.macs, layer, c);
  // MAC cycles = ceil(MACs / (rate x utilisation)), with utilisation = (channels / the lanes
  // the row passes offer) x (reduction / the lanes the column passes offer), in integers: in
  // doubles 256 x 3/16 x 66/80 is 39.59999..., which made 12,672 MACs take 321 cycles, not 320.
  // (The rate is whole: configs give it as an integer.)
  __extension__ using Wide = __int128;  // the products below pass 64 bits
  Wide num = w.macs, den = std::max<std::int64_t>(1, std::llround(hw.macs_per_cycle));
  if (hw.array_rows > 0 && hw.array_cols > 0 && layer.macs > 0) {
    const int rows = layer.array_rows_axis;
    const std::int64_t channels = ceil_div(layer.out[static_cast<std::size_t>(rows)],
                                           c.factor(kAllPartDims[static_cast<std::size_t>(rows)]));
    const std::int64_t reduction = ceil_div(layer.reduction, c.factor(PartDim::Inpp)) *
                                   layer.kernel[0] * layer.kernel[1] * layer.reduction_span;
    w.utilisation = fill(channels, hw.array_rows) * fill(reduction, hw.array_cols);
    if (channels > 0 && reduction > 0) {
      num *= static_cast<Wide>(ceil_div(channels, hw.array_rows) * hw.array_rows) *
             (ceil_div(reduction, hw.array_cols) * hw.array_cols);
      den *= static_cast<Wide>(channels) * reduction;
    }
  }
  const auto mac_cycles = static_cast<std::int64_t>((num + den - 1) / den);
  const auto vector_ops = static_cast<std::int64_t>(vector_ops_executed(layer, c));
  const auto vector_cycles = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(largest_node_part(vector_ops, layer, c)) / hw.adds_per_cycle));
  const LayerShares share = layer_shares(layer, c);
  // A lookup reads the rows its indices pick (its output's size), not all the table it holds.
  const double table_read = layer.lookup ? share.output : share.weights;
  // A weight update reads the weights and their optimizer state with the gradient, and writes
  // both back: the state (its weights share beyond the output's) once more.
  const double state_written =
      layer.weights_like_output ? std::max(0.0, share.weights - share.output) : 0;
  w.sram_bytes =
      static_cast<std::int64_t>(std::ceil(table_read + share.input + share.output + state_written));
  const auto sram_cycles = static_cast<std::int64_t>(
      std::ceil(static_cast<double>(w.sram_bytes) / hw.sram_bytes_per_cycle));
  w.cycles = std::max(mac_cycles + vector_cycles, sram_cycles);
  return w;
}

}  // namespace nocflow::optimizer
