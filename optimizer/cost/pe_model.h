// SPDX-License-Identifier: MIT
#pragma once
// How long one PE computes its share of a layer: the PE model that the linkload cost model and
// the simulator's lowering both use. For a grid node of choice c (p nodes):
//   MAC cycles    = ceil(MACs / p / (macs_per_cycle x utilisation))
//   vector cycles = ceil(vector ops / p / adds_per_cycle)      (activations, norms, adds;
//                   a fused layer's tail ops f times under INPP=f: each member applies the
//                   tail to the whole block it holds after the all-reduce)
//   SRAM cycles   = ceil(bytes touched / sram_bytes_per_cycle) (its weight, input and output
//                   shares, layer_memory_bytes; a lookup reads the rows it picks, its output's
//                   size, instead of its table's share: Layer::lookup)
//   cycles        = max(MAC cycles + vector cycles, SRAM cycles)
// With an array shape (array_rows x array_cols), output channels per node map onto rows and
// the reduction (input channels x kernel) onto columns (a weight gradient: forward output
// channels on rows, batch x positions on columns; Layer::array_rows_axis); utilisation is the used
// fraction of the passes in each direction, e.g. 20 channels on 16 rows use 20 / 32 of two passes.
// Without one, utilisation is 1.
#include <cstdint>

#include "optimizer/cost/hw_desc.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/workload.h"

namespace nocflow::optimizer {

struct PeWork {
  std::int64_t cycles = 0;
  std::int64_t macs = 0;        ///< per PE
  std::int64_t sram_bytes = 0;  ///< bytes read and written per PE
  double utilisation = 1;
};

PeWork pe_work(const Layer& layer, const Choice& choice, const HwDesc& hw);

/// The vector ops all nodes of the choice execute together: the layer's, plus its fused tail's
/// once more per INPP member beyond the first (p nodes each take 1/p of this).
double vector_ops_executed(const Layer& layer, const Choice& choice);

}  // namespace nocflow::optimizer
