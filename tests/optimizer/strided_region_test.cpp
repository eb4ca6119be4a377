// SPDX-License-Identifier: MIT
// Strided ranges (box.h): a convolution or Slice whose windows leave gaps reads, and is sent,
// only the rows it reads; checked against sets of indices written out one by one, as are the
// intersections and unions of boxes. And the regions of a Fused node's later parts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>

#include "optimizer/frontend/graph_builder.h"
#include "optimizer/partition/region.h"
#include "optimizer/partition/transfers.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

std::set<std::int64_t> indices(const Range& r) {
  std::set<std::int64_t> s;
  for (std::int64_t i = r.lo; i < r.hi; ++i)
    if (r.contains(i)) s.insert(i);
  return s;
}

TEST(StridedRange, IntersectionsHoldExactlyTheCommonIndices) {
  std::vector<Range> all;
  for (std::int64_t step = 1; step <= 4; ++step)
    for (std::int64_t first = 0; first <= 6; ++first)
      for (std::int64_t count = 0; count <= 5; ++count)
        all.push_back(count == 0 ? Range{first, first}
                                 : strided(first, first + (count - 1) * step, step));
  for (const Range& a : all) {
    ASSERT_EQ(a.size(), static_cast<std::int64_t>(indices(a).size()));
    if (!a.empty()) {
      ASSERT_TRUE(a.contains(a.hi - 1)) << "not normalised";
    }
    for (const Range& b : all) {
      std::set<std::int64_t> common;
      const std::set<std::int64_t> ia = indices(a), ib = indices(b);
      std::set_intersection(ia.begin(), ia.end(), ib.begin(), ib.end(),
                            std::inserter(common, common.end()));
      const Range x = intersect(a, b);
      ASSERT_EQ(indices(x), common) << "[" << a.lo << "," << a.hi << ")/" << a.step << " ∩ ["
                                    << b.lo << "," << b.hi << ")/" << b.step;
      ASSERT_EQ(x.size(), static_cast<std::int64_t>(common.size()));
    }
  }
}

// The elements in a union of boxes (strided ranges among them) against the set of their
// elements written out: what a PE holds of a tensor several layers read parts of.
TEST(StridedRange, AUnionOfBoxesCountsEachElementOnce) {
  std::mt19937 rng(11);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<Box> boxes(static_cast<std::size_t>(pick(0, 5)));
    for (Box& b : boxes)
      for (Range& r : b.r) {
        const std::int64_t first = pick(0, 5), step = pick(1, 3);
        r = strided(first, first + pick(-1, 3) * step, step);
      }
    if (trial % 4 == 0 && !boxes.empty()) boxes.push_back(boxes.front());  // a repeat
    std::set<std::array<std::int64_t, 4>> elements;
    for (const Box& b : boxes)
      for (std::int64_t n : indices(b.r[0]))
        for (std::int64_t c : indices(b.r[1]))
          for (std::int64_t h : indices(b.r[2]))
            for (std::int64_t w : indices(b.r[3])) elements.insert({n, c, h, w});
    ASSERT_EQ(union_volume(boxes), static_cast<std::int64_t>(elements.size())) << trial;
  }
}

// One convolution over a 1×4×12×12 input; the region of its first input for output rows
// [a, b) against the rows its taps read, for every kernel, stride, dilation, padding and block.
TEST(StridedRange, AConvolutionsRegionHoldsTheRowsItReadsAndOnlyThoseWhenTheyFormALattice) {
  int exact = 0, strided_regions = 0;
  for (std::int64_t k = 1; k <= 3; ++k)
    for (std::int64_t s = 1; s <= 4; ++s)
      for (std::int64_t d = 1; d <= 2; ++d)
        for (std::int64_t pad = 0; pad <= 1; ++pad) {
          GraphBuilder b("conv", 4);
          const NodeId x = b.input({1, 4, 12, 12});
          OpAttrs a;
          a.out_channels = 4;
          a.kernel = {k, k}, a.stride = {s, s}, a.dilation = {d, d}, a.pads = {pad, pad, pad, pad};
          const NodeId y = b.op(OpKind::Conv, a, {x}, "c");
          const Graph g = b.finish();
          const std::int64_t rows = view4(g.node(y).output.shape)[kH];
          for (std::int64_t lo = 0; lo < rows; ++lo)
            for (std::int64_t hi = lo + 1; hi <= rows; ++hi) {
              std::set<std::int64_t> read;
              for (std::int64_t o = lo; o < hi; ++o)
                for (std::int64_t t = 0; t < k; ++t)
                  if (const std::int64_t i = o * s - pad + t * d; i >= 0 && i < 12) read.insert(i);
              const Box block{{Range{0, 1}, Range{0, 4}, Range{lo, hi}, Range{0, rows}}};
              const Range r = input_region(g, y, 0, block, {0, 4}).r[kH];
              const std::set<std::int64_t> held = indices(r);
              ASSERT_TRUE(std::includes(held.begin(), held.end(), read.begin(), read.end()))
                  << "k " << k << " s " << s << " d " << d << " rows [" << lo << "," << hi << ")";
              // A lattice: windows that meet or overlap, one tap, taps on the windows' starts, one
              // window.
              const bool lattice = (d == 1 && s <= k) || k == 1 || d % s == 0 || hi - lo == 1;
              if (lattice) {
                ASSERT_EQ(held, read)
                    << "k " << k << " s " << s << " d " << d << " rows [" << lo << "," << hi << ")";
                ++exact;
              }
              strided_regions += r.step > 1;
            }
        }
  EXPECT_GT(exact, 500);
  EXPECT_GT(strided_regions, 100);
}

// A 1×1 stride-2 downsample behind a 1×1 convolution split by rows: each consumer node reads
// one input row in two and one column in two, so a quarter of the tensor moves or stays, and
// the producers of odd rows send nothing.
TEST(StridedRange, ADownsampleIsSentTheRowsAndColumnsItReads) {
  GraphBuilder b("down", 4);
  const NodeId x = b.conv(b.input({1, 8, 16, 16}), 8, 1, 1, 0, 1, false, "producer");
  b.conv(x, 8, 1, 2, 0, 1, false, "downsample");
  const Graph g = b.finish();
  const Workload w = build_workload(g);
  EXPECT_EQ(w.layers[1].inputs[0].bytes, 8 * 8 * 8 * 4) << "what the layer reads: a quarter";
  const PeGrid grid{true, 4, 4};
  const Choice pc = make({{PartDim::OfmpH, 16}}), cc = make({{PartDim::OfmpH, 8}});
  const PlacedLayer prod{&w.layers[0], pc, place(pc, grid)},
      cons{&w.layers[1], cc, place(cc, grid)};
  std::int64_t moved = 0;
  for (const Transfer& t : edge_transfers(w, w.edges.at(0), prod, cons, grid)) {
    moved += t.bytes;
    const auto row = std::find(prod.placement.pe.begin(), prod.placement.pe.end(), t.src) -
                     prod.placement.pe.begin();
    EXPECT_EQ(row % 2, 0) << "PE " << t.src << " holds row " << row << ", which nobody reads";
    EXPECT_EQ(t.bytes, 8 * 8 * 4) << "one row: 8 channels × 8 of 16 columns × 4 bytes";
  }
  std::int64_t local = 0;
  for (int j = 0; j < cc.nodes(); ++j) {
    const Box need =
        input_region(g, w.layers[1].id, 0, output_block(w.layers[1], cc, grid_coord(cc, j)),
                     reduction_slice(w.layers[1], cc, grid_coord(cc, j)));
    EXPECT_EQ(need.volume(), 8 * 8) << "node " << j;
    for (int i = 0; i < pc.nodes(); ++i)
      if (prod.placement.pe[static_cast<std::size_t>(i)] ==
          cons.placement.pe[static_cast<std::size_t>(j)])
        local += intersect(need, output_block(w.layers[0], pc, grid_coord(pc, i))).volume() * 4;
  }
  EXPECT_EQ(moved + local, 8 * 8 * 8 * 4);
  EXPECT_GT(moved, 0);
}

// A Fused [depthwise 3×3, 1×1 stride 2] node (from a graph file: the fusion pass puts a
// convolution with groups 1 first): its second part reduces over every channel the first
// produces, so the first reads every input channel, not the one of a reduction slice [0, 1).
TEST(FusedRegion, ALaterPartReducesOverAllItsInputs) {
  GraphBuilder b("fused", 4);
  const NodeId x = b.conv(b.input({2, 8, 12, 12}), 8, 1, 1, 0, 1, false, "producer");
  auto part = [](OpKind kind, std::int64_t kernel, std::int64_t stride, std::int64_t groups,
                 int num_inputs) {
    FusedPart p;
    p.kind = kind;
    p.attrs.out_channels = 8;
    p.attrs.kernel = {kernel, kernel}, p.attrs.stride = {stride, stride}, p.attrs.groups = groups;
    p.attrs.pads = {kernel / 2, kernel / 2, kernel / 2, kernel / 2};
    p.num_inputs = num_inputs;
    return p;
  };
  OpAttrs f;
  f.parts = {part(OpKind::Conv, 3, 1, 8, 1), part(OpKind::Conv, 1, 2, 1, 0)};
  const NodeId fused = b.op(OpKind::Fused, f, {x}, "fused");
  const Graph g = b.finish();
  ASSERT_EQ(g.node(fused).output.shape, (Shape{2, 8, 6, 6}));
  const Box need = input_region(g, fused, 0, full_box({2, 8, 6, 6}), {0, 8});
  EXPECT_EQ(need.r[kC], (Range{0, 8}));
  // Output rows [0, 3) of the stride-2 part are rows 0, 2 and 4 of the depthwise part, which
  // read rows 0 to 5 (its 3×3 window, padded): contiguous again.
  Box top = full_box({2, 8, 6, 6});
  top.r[kH] = {0, 3};
  EXPECT_EQ(input_region(g, fused, 0, top, {0, 8}).r[kH], (Range{0, 6}));
}

}  // namespace
}  // namespace nocflow::optimizer
