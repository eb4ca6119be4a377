// SPDX-License-Identifier: MIT
#pragma once
// What a pipeline's stages cost, checked against its plan: the pipeline tests' common check.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "optimizer/plan/pipeline.h"
#include "optimizer/plan/stage_pricer.h"

namespace nocflow::optimizer {

/// Every layer of `r`'s plan in one stage, stages in layer order, every PE inside its stage's
/// band, and each stage costing its layers' compute, its own edges and what it pays of the
/// edges between stages (crossing_payer): the consumer's stage all of it, or the producer's the
/// tensor once (output_cycles; with the copies its consumer's choice needs, once repriced) and
/// the consumer's the rest. Returns how many edges each stage paid.
struct Paid {
  int consumer = 0;  ///< edges from the stage just before, paid by the consumer's stage
  int producer = 0;  ///< edges the producer's stage paid the tensor of
  int copied = 0;    ///< of those, edges the producer's stage paid copies of
};
inline Paid expect_stages_cost_their_parts(const Graph& g, const HwDesc& hw,
                                           const PipelineOptions& o, const std::string& model,
                                           const PipelineResult& r) {
  const Plan& p = r.plan;
  Paid paid;
  int stage = 0;
  std::vector<double> stage_sum(p.stages.size(), 0);
  for (const PlanLayer& l : p.layers) {
    EXPECT_GE(l.stage, stage) << l.name;
    stage = l.stage;
    const PlanStage& st = p.stages[static_cast<std::size_t>(l.stage)];
    for (int pe : l.pes) {
      EXPECT_GE(pe, st.first_pe) << l.name;
      EXPECT_LT(pe, st.first_pe + st.pes) << l.name;
    }
    stage_sum[static_cast<std::size_t>(l.stage)] += l.compute_cycles;
  }
  EXPECT_EQ(p.stages.front().first, p.layers.front().name);
  EXPECT_EQ(p.stages.back().last, p.layers.back().name);
  const Workload w = build_workload(g);
  StagePricer pricer(w, hw, o, model);
  if (!r.copies.empty()) pricer.reprice(r.copies);
  std::map<std::string, int> index;  // of layers in w and in p.layers alike
  for (std::size_t l = 0; l < w.layers.size(); ++l) {
    EXPECT_EQ(w.layers[l].name, p.layers[l].name);
    index[w.layers[l].name] = static_cast<int>(l);
  }
  for (const PlanEdge& e : p.edges) {
    const int u = index.at(e.src), v = index.at(e.dst);
    const int s = p.layers[static_cast<std::size_t>(u)].stage;
    const int d = p.layers[static_cast<std::size_t>(v)].stage;
    EXPECT_EQ(e.type == "STAGE_INPUT", s != d) << e.src << " -> " << e.dst;
    double producer = 0;
    if (s != d) {
      const CrossingPayer payer =
          crossing_payer({u, v, e.input}, r.split.begin[s + 1], r.split.begin[d]);
      paid.consumer += payer == CrossingPayer::Consumer;
      paid.producer += payer == CrossingPayer::Producer;
      const auto i = static_cast<std::size_t>(std::find_if(w.edges.begin(), w.edges.end(),
                                                           [&](const LayerEdge& x) {
                                                             return x.src == u && x.dst == v &&
                                                                    x.input == e.input;
                                                           }) -
                                              w.edges.begin());
      if (payer == CrossingPayer::Producer) {
        producer = pricer.output_cycles(i, p.layers[static_cast<std::size_t>(u)].choice);
        paid.copied += !r.copies.empty() && r.copies[i] > 1;
        // Whoever pays which copies, every byte its consumer's PEs need crosses the band's
        // boundary links and is paid for.
        const Choice& c = p.layers[static_cast<std::size_t>(v)].choice;
        const double needed =
            input_share(w.layers[static_cast<std::size_t>(v)], e.input, c) * c.nodes();
        if (hw.mesh()) {
          EXPECT_GE(e.cycles * (1 + 1e-9), needed / (hw.topology.cols * hw.link_bytes_per_cycle))
              << e.src << " -> " << e.dst;
        }
      }
      EXPECT_GE(e.cycles, producer) << e.src << " -> " << e.dst;
    }
    stage_sum[static_cast<std::size_t>(s)] += producer;
    stage_sum[static_cast<std::size_t>(d)] += e.cycles - producer;
  }
  for (std::size_t s = 0; s < p.stages.size(); ++s)
    EXPECT_NEAR(stage_sum[s], p.stages[s].cycles, 1e-6 * p.stages[s].cycles)
        << model << " stage " << s;
  return paid;
}

}  // namespace nocflow::optimizer
