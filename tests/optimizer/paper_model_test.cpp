// SPDX-License-Identifier: MIT
// The seed's analytic model, formula by formula (000 §2.3–2.4).
#include "optimizer/cost/paper_model.h"

#include <gtest/gtest.h>

#include <cmath>

#include "noc/base/error.h"
#include "optimizer/frontend/graph_builder.h"
#include "tests/optimizer/make_choice.h"

namespace nocflow::optimizer {
namespace {

Layer conv_layer(Dims4 out, std::int64_t kernel = 3) {
  Layer l;
  l.out = out;
  l.kernel = {kernel, kernel};
  l.stride = {1, 1};
  l.reduction = 16;
  l.macs = out[0] * out[1] * out[2] * out[3] * 16 * kernel * kernel;
  l.output_bytes = out[0] * out[1] * out[2] * out[3] * 2;
  return l;
}

TEST(PaperModel, TypeFunctionEveryCase) {
  const Layer a = conv_layer({1, 64, 32, 32}), b = conv_layer({1, 64, 32, 32}), pool = conv_layer({1, 64, 16, 16});
  const Choice k4h4 = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 4}});
  EXPECT_EQ(redist_type(a, k4h4, b, k4h4), RedistType::None);
  // Same K, H, W factors but a dimension change (pooling) or another batch factor: LOCAL.
  EXPECT_EQ(redist_type(a, k4h4, pool, k4h4), RedistType::Local);
  EXPECT_EQ(redist_type(a, make({{PartDim::Outp, 4}}), b, make({{PartDim::Outp, 4}, {PartDim::Batch, 1}, {PartDim::Inpp, 2}})),
            RedistType::Local);
  EXPECT_EQ(redist_type(a, make({{PartDim::Inpp, 4}}), b, make({{PartDim::Outp, 4}})), RedistType::AllReduce);
  EXPECT_EQ(redist_type(a, make({{PartDim::Outp, 4}}), b, make({{PartDim::OfmpH, 4}})), RedistType::AllGather);
  EXPECT_EQ(redist_type(a, make({{PartDim::OfmpH, 4}}), b, make({{PartDim::Outp, 4}})), RedistType::Scatter);
  EXPECT_EQ(redist_type(a, make({{PartDim::Outp, 2}}), b, make({{PartDim::Outp, 4}})), RedistType::AllToAll);
  // ... and the other way: ALL_GATHER needs a consumer whose K is whole (seed: K_j = 1).
  EXPECT_EQ(redist_type(a, make({{PartDim::Outp, 4}}), b, make({{PartDim::Outp, 2}})), RedistType::AllToAll);
  EXPECT_EQ(redist_type(a, make({{PartDim::OfmpH, 2}}), b, make({{PartDim::OfmpW, 2}})), RedistType::AllToAll);
}

TEST(PaperModel, VolumesFormula8) {
  const double d = 1000;
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::None, d, 4, 4, 1), 0);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::Local, d, 4, 4, 1), 10);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::AllGather, d, 4, 8, 1), 750);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::Scatter, d, 4, 8, 1), 875);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::AllToAll, d, 4, 16, 1), 937.5);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::AllToAll, d, 16, 4, 1), 937.5);
  EXPECT_DOUBLE_EQ(redist_volume(RedistType::AllReduce, d, 4, 4, 4), 1500);
}

TEST(PaperModel, HopsEtaAndComputeFormula6) {
  EXPECT_DOUBLE_EQ(h_avg(true, 16), 8.0 / 3.0);
  EXPECT_DOUBLE_EQ(h_avg(true, 64), 16.0 / 3.0);
  EXPECT_DOUBLE_EQ(h_avg(false, 64), 1.0);
  EXPECT_DOUBLE_EQ(eta_reduction(make({{PartDim::Inpp, 4}})), 1.3);
  EXPECT_DOUBLE_EQ(eta_reduction(make({{PartDim::Outp, 4}})), 1.0);
  const Layer l = conv_layer({1, 64, 32, 32});
  // H = 32 in 4 tiles of 8 rows, 3×3 stride 1: each tile reads 10 rows, the whole layer 34.
  EXPECT_DOUBLE_EQ(eta_halo(l, make({{PartDim::OfmpH, 4}})), 40.0 / 34.0);
  EXPECT_DOUBLE_EQ(eta_halo(l, make({{PartDim::OfmpH, 4}, {PartDim::OfmpW, 2}})), 40.0 / 34.0 * 36.0 / 34.0);
  EXPECT_DOUBLE_EQ(eta_halo(l, make({{PartDim::Outp, 16}})), 1.0);
  EXPECT_DOUBLE_EQ(eta_halo(conv_layer({1, 64, 32, 32}, 1), make({{PartDim::OfmpH, 4}})), 1.0);
  const Choice c = make({{PartDim::OfmpH, 4}, {PartDim::Inpp, 2}});
  EXPECT_DOUBLE_EQ(PaperModel::seed_compute_macs(l, c), static_cast<double>(l.macs) / 8 * 1.1 * 40.0 / 34.0);
  HwDesc hw;
  hw.macs_per_cycle = 256;
  EXPECT_DOUBLE_EQ(PaperModel(hw).layer_cost(l, c).cycles, PaperModel::seed_compute_macs(l, c) / 256);
}

TEST(PaperModel, EdgeTimeAndEnergyFormulas9And11) {
  GraphBuilder b("two", 2);
  NodeId x = b.input({1, 16, 32, 32});
  x = b.conv(x, 64, 3, 1, 1, 1, false, "a");
  b.conv(x, 64, 3, 1, 1, 1, false, "b");
  const Graph g = b.finish();
  const Workload w = build_workload(g);
  HwDesc hw;  // 4×4 mesh, 32-byte links, 2 pJ/byte/hop
  const PaperModel m(hw);
  const double d = 64 * 32 * 32 * 2;
  const Choice ci = make({{PartDim::Outp, 4}, {PartDim::OfmpH, 4}}), cj = make({{PartDim::Outp, 4}, {PartDim::OfmpW, 4}});
  const Cost c = m.edge_cost(w, w.edges[0], ci, cj);  // ALL_TO_ALL over 16 nodes
  EXPECT_DOUBLE_EQ(c.bytes, d * 15 / 16);
  EXPECT_DOUBLE_EQ(c.cycles, d * 15 / 16 * (8.0 / 3.0) / 32);
  EXPECT_DOUBLE_EQ(c.energy_pj, d * 15 / 16 * (8.0 / 3.0) * 2);
  EXPECT_DOUBLE_EQ(m.edge_cost(w, w.edges[0], ci, ci).cycles, 0);  // NONE
  // Producer and consumer on different node counts: the hops are those of the larger set.
  const Choice k4 = make({{PartDim::Outp, 4}});  // 4 nodes, to 16
  EXPECT_EQ(redist_type(w.layers[0], k4, w.layers[1], ci), RedistType::AllToAll);
  EXPECT_DOUBLE_EQ(m.edge_cost(w, w.edges[0], k4, ci).cycles, d * 15 / 16 * h_avg(true, 16) / 32);
  EXPECT_DOUBLE_EQ(m.edge_cost(w, w.edges[0], ci, k4).cycles, d * 15 / 16 * h_avg(true, 16) / 32);
  hw.bnoc_bytes_per_cycle = 64;  // B_NoC is a parameter
  EXPECT_DOUBLE_EQ(PaperModel(hw).edge_cost(w, w.edges[0], ci, cj).cycles, d * 15 / 16 * (8.0 / 3.0) / 64);
  hw.topology = {"crossbar", 0, 0, 16};
  EXPECT_DOUBLE_EQ(PaperModel(hw).edge_cost(w, w.edges[0], ci, cj).cycles, d * 15 / 16 / 64);
}

TEST(CostModels, ByNameAndUnknownNameListsKnown) {
  const HwDesc hw;
  EXPECT_EQ(make_cost_model("paper", hw)->name(), "paper");
  EXPECT_EQ(make_cost_model("linkload", hw)->name(), "linkload");
  try {
    make_cost_model("papr", hw);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("paper, linkload"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nocflow::optimizer
