// SPDX-License-Identifier: MIT
#include "optimizer/cost/cost_model.h"

#include <algorithm>

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
                                                 const std::vector<Choice>& dst_choices,
                                                 const EntriesDone& done) const {
  std::vector<double> out;
  out.reserve(src_choices.size() * dst_choices.size());
  for (const Choice& a : src_choices) {
    for (const Choice& b : dst_choices) out.push_back(edge_cost(w, e, a, b).cycles);
    if (done) done(dst_choices.size());
  }
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

/// The largest node's part of `bytes` of `elem_bytes`-byte elements that `dims` split, in whole
/// elements: ⌈elements / parts⌉ × elem_bytes.
std::int64_t whole_elements(std::int64_t bytes, int elem_bytes, const Layer& l, const Choice& c,
                            PartDimSet dims) {
  const std::int64_t size = std::max(1, elem_bytes);
  return largest_node_part((bytes + size - 1) / size, l, c, dims) * size;
}

constexpr PartDimSet kOutputDims = {PartDim::Batch, PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW};

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

LayerShares held_shares(const Layer& l, const Choice& c) {
  std::int64_t input = 0, fixed = 0;
  for (const Layer::Input& in : l.inputs) {
    input += whole_elements(in.bytes, in.elem_bytes, l, c, in.splits);
    fixed += whole_elements(in.held_bytes, in.elem_bytes, l, c, in.splits);
  }
  const std::int64_t weights =
      l.weights_like_output
          ? whole_elements(l.weight_bytes, l.elem_bytes, l, c, kOutputDims)
          : whole_elements(l.weight_bytes - l.tail_weight_bytes, l.elem_bytes, l, c,
                           {PartDim::Outp, PartDim::Inpp}) +
                whole_elements(l.tail_weight_bytes, l.elem_bytes, l, c, {PartDim::Outp});
  return {static_cast<double>(weights + fixed), static_cast<double>(input),
          static_cast<double>(whole_elements(l.output_bytes, l.elem_bytes, l, c, kOutputDims))};
}

std::int64_t held_input_share(const Layer& l, int input, const Choice& c) {
  const Layer::Input& in = l.inputs[static_cast<std::size_t>(input)];
  return whole_elements(in.bytes, in.elem_bytes, l, c, in.splits);
}

double activation_share(const Layer& l, const LayerShares& s) {
  // A weight update writes the new weights over the old ones, in place: no output of its own.
  return s.input + (l.weights_like_output ? 0 : s.output);
}

double layer_memory_bytes(const Layer& l, const Choice& c) {
  const LayerShares s = held_shares(l, c);
  return s.weights + activation_share(l, s);
}

}  // namespace nocflow::optimizer
