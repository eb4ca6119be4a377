// SPDX-License-Identifier: MIT
// The PE model (optimizer/cost/pe_model.h) by hand: MAC array fill, vector ops, the SRAM bound.
// The simulator's lowering and the linkload model both take a PE's compute time from it.
#include "optimizer/cost/pe_model.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <utility>

#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

/// A 3x3 conv, 16 input channels to 20 output channels on 8x8, 2-byte elements.
Layer conv20() {
  Layer l;
  l.out = {1, 20, 8, 8};
  l.reduction = 16;
  l.kernel = {3, 3};
  l.macs = 20 * 8 * 8 * 16 * 9;      // 184,320
  l.weight_bytes = 20 * 16 * 9 * 2;  // 5,760
  l.inputs = {{16 * 10 * 10 * 2,     // 3,200 (padded input), which OUTP does not split
               {PartDim::Batch, PartDim::OfmpH, PartDim::OfmpW, PartDim::Inpp}}};
  l.output_bytes = 20 * 8 * 8 * 2;   // 2,560
  return l;
}

HwDesc array16() {
  HwDesc hw;  // 256 MACs, 64 adds, 64 SRAM bytes per cycle
  hw.array_rows = hw.array_cols = 16;
  return hw;
}

// A fill whose product is no double (3/16 x 66/80 x 256 = 39.6) still gives the exact ceiling:
// 12,672 MACs / 39.6 = 320 cycles (in doubles, 320.00000000000006 took 321).
TEST(PeModel, MacCyclesAreTheExactCeilingOfTheFilledRate) {
  Layer l;  // a 64 x 66 by 66 x 6 product (a Gemm over 64 rows), 2-byte elements
  l.out = {64, 6, 1, 1};
  l.reduction = 66;
  l.macs = 64 * 66 * 6;
  l.weight_bytes = 66 * 6 * 2;
  l.inputs = {{64 * 66 * 2, {PartDim::Batch, PartDim::Inpp}}};
  l.output_bytes = 64 * 6 * 2;
  const PeWork outp2 = pe_work(l, make({{PartDim::Outp, 2}}), array16());
  EXPECT_EQ(outp2.macs, 12'672);
  EXPECT_DOUBLE_EQ(outp2.utilisation, 3.0 / 16 * 66 / 80);
  EXPECT_EQ(outp2.cycles, 320);
  // BATCH 2 keeps the 6 channels (6 / 16): 12,672 / (256 x 6/16 x 66/80) = 160.
  EXPECT_EQ(pe_work(l, make({{PartDim::Batch, 2}}), array16()).cycles, 160);
}

TEST(PeModel, ArrayFillSetsTheMacRate) {
  const Layer l = conv20();
  // One node: 20 channels on 16 rows fill 20 / 32 of two passes, the reduction 16 x 9 = 144 on
  // 16 columns fills 9 passes exactly: 184,320 / (256 x 0.625) = 1,152 cycles; SRAM
  // (5,760 + 3,200 + 2,560) / 64 = 180.
  const PeWork one = pe_work(l, make({}), array16());
  EXPECT_DOUBLE_EQ(one.utilisation, 0.625);
  EXPECT_EQ(one.macs, 184'320);
  EXPECT_EQ(one.sram_bytes, 11'520);
  EXPECT_EQ(one.cycles, 1'152);
  // OUTP 2: 10 channels fill 10 / 16; 92,160 MACs / 160 = 576.
  const PeWork outp2 = pe_work(l, make({{PartDim::Outp, 2}}), array16());
  EXPECT_DOUBLE_EQ(outp2.utilisation, 0.625);
  EXPECT_EQ(outp2.cycles, 576);
  EXPECT_EQ(outp2.sram_bytes, 5'760 / 2 + 3'200 + 2'560 / 2);
  // INPP 2: the reduction 8 x 9 = 72 fills 72 / 80 of 5 passes, 0.625 x 0.9 = 0.5625;
  // 92,160 / 144 = 640.
  const PeWork inpp2 = pe_work(l, make({{PartDim::Inpp, 2}}), array16());
  EXPECT_DOUBLE_EQ(inpp2.utilisation, 0.5625);
  EXPECT_EQ(inpp2.cycles, 640);
  // OUTP 3 cuts the 20 channels 6, 7, 7 (balanced blocks): the largest node's 7 channels fill
  // 7 / 16, and its 7 / 20 of 184,320 MACs = 64,512 at 112 per cycle take 576 cycles.
  const PeWork outp3 = pe_work(l, make({{PartDim::Outp, 3}}), array16());
  EXPECT_DOUBLE_EQ(outp3.utilisation, 7.0 / 16.0);
  EXPECT_EQ(outp3.macs, 64'512);
  EXPECT_EQ(outp3.cycles, 576);
}

TEST(PeModel, WithoutAnArrayMacsAndVectorOpsAddAndSramBoundsBoth) {
  HwDesc hw;  // no array: the full 256 MACs per cycle
  Layer l = conv20();
  l.vector_ops = 20 * 8 * 8;  // a fused ReLU: 1,280 adds, 20 cycles at 64 per cycle
  const PeWork w = pe_work(l, make({}), hw);
  EXPECT_DOUBLE_EQ(w.utilisation, 1);
  EXPECT_EQ(w.cycles, 184'320 / 256 + 20);  // 720 + 20
  // A pooling-like layer with no MACs and much data: SRAM-bound, (64,000 + 16,000) / 64.
  Layer pool;
  pool.out = {1, 16, 25, 20};
  pool.vector_ops = 6'400;  // 100 cycles
  pool.inputs = {{64'000, {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW}}};
  pool.output_bytes = 16'000;
  const PeWork p = pe_work(pool, make({}), hw);
  EXPECT_EQ(p.cycles, 1'250);
  // Split over OFMP_H 5, each node touches a fifth: 250 cycles against 20 of vector ops.
  EXPECT_EQ(pe_work(pool, make({{PartDim::OfmpH, 5}}), hw).cycles, 250);
  // OFMP_H 4 cuts the 25 rows 6, 6, 6, 7: the largest node touches 7 / 25, (17,920 + 4,480) / 64
  // = 350 cycles against 1,792 / 64 = 28 of vector ops.
  EXPECT_EQ(pe_work(pool, make({{PartDim::OfmpH, 4}}), hw).cycles, 350);
}

// A weight update of P parameters reads the weights, their optimizer state (s tensors) and the
// gradient, and writes the weights and the state back: 2P bytes x (3 + 2s) through the SRAM
// port. Momentum's velocity and Adam's two moments were read but not written back (2,305 cycles
// for vgg5's conv5 under momentum on 16 PEs, 2,882 with them).
TEST(PeModel, AWeightUpdateWritesItsOptimizerStateBack) {
  HwDesc hw;  // 64 SRAM bytes and 64 adds per cycle
  const std::int64_t params = 6'400, elem = 2;
  for (const auto& [states, ops] : {std::pair{0, 2}, {1, 4}, {2, 11}}) {
    Layer u;
    u.weights_like_output = true;
    u.out = {1, 64, 10, 10};
    u.weight_bytes = params * (1 + states) * elem;
    u.inputs = {{params * elem, {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW}}};
    u.output_bytes = params * elem;
    u.vector_ops = ops * params;
    const PeWork w = pe_work(u, make({}), hw);
    EXPECT_EQ(w.sram_bytes, params * elem * (3 + 2 * states)) << states << " states";
    EXPECT_EQ(w.cycles, std::max(params * elem * (3 + 2 * states) / 64, ops * params / 64))
        << states << " states";
  }
}

TEST(PeModel, AFusedTailRunsOnTheWholeBlockInEveryInppMember) {
  HwDesc hw;  // no array: the full 256 MACs per cycle
  Layer l = conv20();
  l.vector_ops = l.tail_vector_ops = 20 * 8 * 8;  // a fused ReLU: 1,280 ops
  // OUTP 2 halves the ReLU with the MACs: 92,160 / 256 = 360 cycles + 640 / 64 = 10.
  EXPECT_EQ(pe_work(l, make({{PartDim::Outp, 2}}), hw).cycles, 360 + 10);
  // INPP 2: after the all-reduce each member applies the ReLU to the whole block, 1,280 ops.
  EXPECT_EQ(pe_work(l, make({{PartDim::Inpp, 2}}), hw).cycles, 360 + 20);
  // Vector ops of the head itself (a synthetic case: no head operator has any today) are shared
  // out as before: 1,280 more, 10 cycles per member.
  l.vector_ops += 20 * 8 * 8;
  EXPECT_EQ(pe_work(l, make({{PartDim::Inpp, 2}}), hw).cycles, 360 + 30);
}

}  // namespace
}  // namespace nocflow::optimizer
