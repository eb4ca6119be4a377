// SPDX-License-Identifier: MIT
#pragma once
// The seed's analytic cost model (000 §2.3–2.4), formula by formula.
//
//  comp(l, c)   = MACs/p × η_red × η_halo / MACs_per_cycle  [+ vector_ops / p / adds_per_cycle]
//    η_red      = 1 + 0.1 (f_C − 1)                                              (formula 6)
//    η_halo     = Π over split spatial axes of  f·((X/f − 1)·s + k) / ((X − 1)·s + k)
//                 the input rows (columns) all f tiles read, halos included, over the rows the
//                 unsplit layer reads (k, s of the layer's window; 1 for unsplit axes and for
//                 layers without a window, whose tiles re-read nothing).
//    The vector_ops term is ours (the seed counts conv MACs only): pooling and element-wise
//    layers would otherwise be free.
//  Type(c_i, c_j) formula 7, first matching case; "no dimension change" = the producer's and
//    consumer's output tensors have the same N×C×H×W.
//  V(l, c_i, c_j) formula 8 with D_l = the producer's output bytes, α_local = 0.01,
//    n_C = f_C of the producer.
//  h_avg = 2√n/3 on a mesh, 1 on a crossbar (formula 10), n = max(n_i, n_j): the nodes the
//    redistribution spans (placements are compact, see placement.h).
//  T = V·h_avg / B_NoC cycles (formula 9), E = V·h_avg·e_hop pJ (formula 11).
// Known disagreement with exact movement (tests/optimizer/transfers_test.cpp): Proposition 1
// makes OUTP f → OUTP f free, while each consumer node needs every input channel, an
// all-gather of (f−1)/f of the tensor to each node.
#include <string>

#include "optimizer/cost/cost_model.h"

namespace nocflow::optimizer {

enum class RedistType { None, Local, AllGather, Scatter, AllToAll, AllReduce };
inline constexpr RedistType kRedistTypes[] = {RedistType::None,      RedistType::Local,
                                              RedistType::AllGather, RedistType::Scatter,
                                              RedistType::AllToAll,  RedistType::AllReduce};
std::string to_string(RedistType t);

inline constexpr double kAlphaLocal = 0.01;

double eta_reduction(const Choice& c);
double eta_halo(const Layer& layer, const Choice& c);
RedistType redist_type(const Layer& producer, const Choice& ci, const Layer& consumer, const Choice& cj);
/// Formula 8: bytes moved for a type, given D (bytes), n_i, n_j and n_C.
double redist_volume(RedistType t, double d_bytes, int ni, int nj, int nc);
double h_avg(bool mesh, int n);

class PaperModel : public CostModel {
 public:
  explicit PaperModel(HwDesc hw) : hw_(std::move(hw)) {}
  std::string name() const override { return "paper"; }
  Cost layer_cost(const Layer& layer, const Choice& choice) const override;
  Cost edge_cost(const Workload& workload, const LayerEdge& edge, const Choice& src,
                 const Choice& dst) const override;
  /// MACs per node with the η factors (formula 6, in MACs as the seed's Table 2 reports it).
  static double seed_compute_macs(const Layer& layer, const Choice& c);

 private:
  HwDesc hw_;
};

}  // namespace nocflow::optimizer
