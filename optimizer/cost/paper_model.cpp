// SPDX-License-Identifier: MIT
#include "optimizer/cost/paper_model.h"

#include <algorithm>
#include <cmath>

#include "optimizer/cost/pe_model.h"

namespace nocflow::optimizer {

std::string to_string(RedistType t) {
  switch (t) {
    case RedistType::None: return "NONE";
    case RedistType::Local: return "LOCAL";
    case RedistType::AllGather: return "ALL_GATHER";
    case RedistType::Scatter: return "SCATTER";
    case RedistType::AllToAll: return "ALL_TO_ALL";
    case RedistType::AllReduce: return "ALL_REDUCE";
  }
  return "?";
}

double eta_reduction(const Choice& c) { return 1.0 + 0.1 * (c.factor(PartDim::Inpp) - 1); }

double eta_halo(const Layer& l, const Choice& c) {
  double eta = 1.0;
  const std::pair<PartDim, int> axes[2] = {{PartDim::OfmpH, 0}, {PartDim::OfmpW, 1}};
  for (const auto& [d, i] : axes) {
    const int f = c.factor(d);
    if (f <= 1) continue;
    const double x = static_cast<double>(dim_size(l, d));
    const double k = static_cast<double>(l.kernel[static_cast<std::size_t>(i)]);
    const double s = static_cast<double>(l.stride[static_cast<std::size_t>(i)]);
    eta *= f * ((x / f - 1) * s + k) / ((x - 1) * s + k);
  }
  return eta;
}

RedistType redist_type(const Layer& pl, const Choice& ci, const Layer& cl, const Choice& cj) {
  const int ki = ci.factor(PartDim::Outp), kj = cj.factor(PartDim::Outp);
  if (ci == cj && pl.out == cl.out) return RedistType::None;
  if (ki == kj && ci.factor(PartDim::OfmpH) == cj.factor(PartDim::OfmpH) &&
      ci.factor(PartDim::OfmpW) == cj.factor(PartDim::OfmpW))
    return RedistType::Local;
  if (ci.factor(PartDim::Inpp) > 1) return RedistType::AllReduce;
  if (ki > 1 && kj == 1) return RedistType::AllGather;
  if (ki == 1 && kj > 1) return RedistType::Scatter;
  return RedistType::AllToAll;
}

double redist_volume(RedistType t, double d, int ni, int nj, int nc) {
  switch (t) {
    case RedistType::None: return 0;
    case RedistType::Local: return kAlphaLocal * d;
    case RedistType::AllGather: return d * (ni - 1) / ni;
    case RedistType::Scatter: return d * (nj - 1) / nj;
    case RedistType::AllToAll: {
      const int n = std::max(ni, nj);
      return d * (1.0 - 1.0 / n);
    }
    case RedistType::AllReduce: return 2 * d * (nc - 1) / nc;
  }
  return 0;
}

double h_avg(bool mesh, int n) { return mesh ? 2.0 * std::sqrt(static_cast<double>(n)) / 3.0 : 1.0; }

double PaperModel::seed_compute_macs(const Layer& l, const Choice& c) {
  return static_cast<double>(l.macs) / c.nodes() * eta_reduction(c) * eta_halo(l, c);
}

Cost PaperModel::layer_cost(const Layer& l, const Choice& c) const {
  Cost out;
  out.cycles = seed_compute_macs(l, c) / hw_.macs_per_cycle +
               vector_ops_executed(l, c) / c.nodes() / hw_.adds_per_cycle;
  out.energy_pj = static_cast<double>(l.macs) * hw_.mac_pj;
  return out;
}

Cost PaperModel::edge_cost(const Workload& w, const LayerEdge& e, const Choice& ci,
                           const Choice& cj) const {
  const Layer& pl = w.layers[static_cast<std::size_t>(e.src)];
  const Layer& cl = w.layers[static_cast<std::size_t>(e.dst)];
  const RedistType t = redist_type(pl, ci, cl, cj);
  const double v = redist_volume(t, static_cast<double>(pl.output_bytes), ci.nodes(), cj.nodes(),
                                 ci.factor(PartDim::Inpp));
  const double h = h_avg(hw_.mesh(), std::max(ci.nodes(), cj.nodes()));
  Cost out;
  out.bytes = v;
  out.cycles = v * h / hw_.bnoc() + (v > 0 ? hw_.paper_latency_cycles : 0);
  out.energy_pj = v * h * hw_.hop_pj_per_byte;
  return out;
}

}  // namespace nocflow::optimizer
