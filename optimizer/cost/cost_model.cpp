// SPDX-License-Identifier: MIT
#include "optimizer/cost/cost_model.h"

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "optimizer/cost/linkload_model.h"
#include "optimizer/cost/paper_model.h"

namespace nocflow::optimizer {

std::vector<std::string> cost_model_names() { return {"paper", "linkload"}; }

std::unique_ptr<CostModel> make_cost_model(const std::string& name, const HwDesc& hw, int threads) {
  if (name == "paper") return std::make_unique<PaperModel>(hw);
  if (name == "linkload") {  // refuses a calibration without this machine (its constructor)
    LinkloadModel::Options options;
    options.threads = threads;
    return std::make_unique<LinkloadModel>(hw, options);
  }
  throw InputError(unknown_name_message("cost model", name, cost_model_names()));
}

std::vector<double> CostModel::edge_cycles_table(const Workload& w, const LayerEdge& e,
                                                 const std::vector<Choice>& src_choices,
                                                 const std::vector<Choice>& dst_choices) const {
  std::vector<double> out;
  out.reserve(src_choices.size() * dst_choices.size());
  for (const Choice& a : src_choices)
    for (const Choice& b : dst_choices) out.push_back(edge_cost(w, e, a, b).cycles);
  return out;
}

namespace {

/// Into how many parts a choice cuts what PEs read of an input slot.
double input_parts(const Layer& l, const Layer::Input& in, const Choice& c) {
  double parts = 1;
  for (PartDim d : kAllPartDims)
    if (in.splits.contains(d)) parts *= effective_parts(l, c, d);
  return parts;
}

}  // namespace

double input_share(const Layer& l, int input, const Choice& c) {
  const Layer::Input& in = l.inputs[static_cast<std::size_t>(input)];
  return static_cast<double>(in.bytes) / input_parts(l, in, c);
}

LayerShares layer_shares(const Layer& l, const Choice& c) {
  // The largest node's shares (balanced blocks that differ by one: the larger ones).
  const double n = effective_parts(l, c, PartDim::Batch), k = effective_parts(l, c, PartDim::Outp),
               h = effective_parts(l, c, PartDim::OfmpH), w = effective_parts(l, c, PartDim::OfmpW),
               r = effective_parts(l, c, PartDim::Inpp);
  double input = 0, fixed = 0;  // fixed constants: the slice the block reads, with the weights
  for (const Layer::Input& in : l.inputs) {
    const double parts = input_parts(l, in, c);
    input += static_cast<double>(in.bytes) / parts;
    fixed += static_cast<double>(in.held_bytes) / parts;
  }
  const double weights = l.weights_like_output
                             ? static_cast<double>(l.weight_bytes) / (n * k * h * w)
                             : static_cast<double>(l.weight_bytes - l.tail_weight_bytes) / (k * r) +
                                   static_cast<double>(l.tail_weight_bytes) / k;
  return {weights + fixed, input, static_cast<double>(l.output_bytes) / (n * k * h * w)};
}

double activation_share(const Layer& l, const LayerShares& s) {
  // A weight update writes the new weights over the old ones, in place: no output of its own.
  return s.input + (l.weights_like_output ? 0 : s.output);
}

double layer_memory_bytes(const Layer& l, const Choice& c) {
  const LayerShares s = layer_shares(l, c);
  return s.weights + activation_share(l, s);
}

}  // namespace nocflow::optimizer
