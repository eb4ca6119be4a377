// SPDX-License-Identifier: MIT
#pragma once
// linkload: the exact transfer list (partition/transfers.h) routed onto the NoC's links with
// the configured routing function (noc/router/routing.h, first candidate for adaptive ones),
// exactly as the routers would.
//
//  edge time  = ⌈max link bytes / link bytes per cycle⌉ + routers on the longest route ×
//               (router pipeline + link latency); links are every router output port
//               (ejection included) and every node's injection channel; the first term is the
//               serialization of the most loaded link, the second the pipeline fill of the
//               longest route. Transfers are assumed to overlap perfectly (no contention
//               beyond the busiest link).
//  layer time = the PE model's cycles for the layer's share (pe_model.h: MAC array
//               utilisation, vector ops, SRAM bandwidth; no η: MACs do not grow with a split)
//               + the INPP ring all-reduce routed the same way, plus its
//               adds (block elements × (f−1)/f / adds per cycle: the reduce-scatter half adds,
//               the all-gather half only copies).
//  energy     = MACs × e_MAC + Σ bytes × hops × e_hop (hops = router-to-router links, 1 on a
//               crossbar).
#include "optimizer/cost/cost_model.h"
#include "optimizer/partition/transfers.h"

namespace nocflow::optimizer {

struct LinkLoad {
  double max_link_bytes = 0;
  int max_hops = 0;     ///< router-to-router links of the longest route (≥ 1)
  int max_routers = 0;  ///< routers the longest route traverses
  double byte_hops = 0;
};

class LinkloadModel : public CostModel {
 public:
  explicit LinkloadModel(HwDesc hw);
  ~LinkloadModel() override;
  std::string name() const override { return "linkload"; }
  Cost layer_cost(const Layer& layer, const Choice& choice) const override;
  Cost edge_cost(const Workload& workload, const LayerEdge& edge, const Choice& src,
                 const Choice& dst) const override;
  /// The INPP partial-sum reduction of a layer under a choice (zero without INPP): its ring
  /// all-reduce routed onto the links, plus the adds. Part of layer_cost.
  Cost reduction_cost(const Layer& layer, const Choice& choice) const;
  /// Route transfers and measure the busiest link.
  LinkLoad route(const std::vector<Transfer>& transfers) const;
  double transfer_cycles(const LinkLoad& load) const;

 private:
  struct Impl;
  HwDesc hw_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nocflow::optimizer
