// SPDX-License-Identifier: MIT
#pragma once
// The brute force of the region tests beyond rank 4 (rank5_region_test.cpp,
// rank5_product_region_test.cpp): for every split a layer offers (each legal dimension alone
// and each pair of them, by every divisor; INPP by every divisor of the reduction), each
// output block's region must hold every input element the block reads. The elements read are
// written out per operator by the tests, from ONNX's semantics, not from region.cpp.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "optimizer/graph/op_cost.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/region.h"
#include "tests/optimizer/onnx_model.h"
#include "tests/optimizer/view_index.h"

namespace nocflow::optimizer::region_check {

/// Every index with axis k in `ranges[k]`.
inline void for_each_index(const std::vector<Range>& ranges, const std::function<void(const Index&)>& f) {
  Index i(ranges.size());
  std::function<void(std::size_t)> walk = [&](std::size_t k) {
    if (k == ranges.size()) return f(i);
    for (i[k] = ranges[k].lo; i[k] < ranges[k].hi; ++i[k]) walk(k + 1);
  };
  walk(0);
}

inline std::string str(const Index& i) {
  std::ostringstream s;
  for (std::size_t k = 0; k < i.size(); ++k) s << (k ? "," : "[") << i[k];
  s << "]";
  return s.str();
}

inline std::string str(const Box& b) {
  std::ostringstream s;
  for (int a = 0; a < 4; ++a) s << (a ? " " : "") << "[" << b.r[a].lo << "," << b.r[a].hi << ")";
  return s.str();
}

/// The input elements output element `o` reads, for the reduction indices in `red`.
using Reads = std::function<std::vector<Index>(const Index& o, Range red)>;

/// The elements of an operand of shape `in` that output element `o` (of shape `out`) meets
/// under broadcasting, both ways: axes aligned on the right, an operand's axis of 1 read at 0,
/// and every row of an operand's axis that is 1 (or absent) in the output (a gradient's sum).
inline std::vector<Index> broadcast_reads(const Index& o, const Shape& in, const Shape& out) {
  const std::size_t rank = std::max(in.size(), out.size());
  std::vector<Range> r;
  for (std::size_t k = rank - in.size(); k < rank; ++k) {
    const std::int64_t d_in = in[k - (rank - in.size())];
    const bool in_out = k >= rank - out.size();
    const std::int64_t d_out = in_out ? out[k - (rank - out.size())] : 1;
    const std::int64_t at = in_out ? o[k - (rank - out.size())] : 0;
    if (d_in == d_out)
      r.push_back({at, at + 1});
    else if (d_in == 1)
      r.push_back({0, 1});
    else
      r.push_back({0, d_in});  // summed over
  }
  std::vector<Index> all;
  for_each_index(r, [&](const Index& i) { all.push_back(i); });
  return all;
}

/// `o` with axis `axis` over `rows` (a softmax's, a reduction's or a product's inner axis).
inline std::vector<Index> along(const Index& o, std::size_t axis, Range rows) {
  std::vector<Index> all(static_cast<std::size_t>(std::max<std::int64_t>(0, rows.hi - rows.lo)), o);
  for (std::size_t k = 0; k < all.size(); ++k) all[k][axis] = rows.lo + static_cast<std::int64_t>(k);
  return all;
}

/// Checks the region of input `input` of node `name` for every block of every split, and
/// returns how many blocks it checked. `reduction`: the INPP extent (1: none).
inline int check_regions(const Graph& g, const std::string& name, int input, std::int64_t reduction,
                  const Reads& reads) {
  const NodeId id = *g.find(name);
  const Shape& out = g.node(id).output.shape;
  const Shape& in = g.node(g.input(id, input)).output.shape;
  const Dims4 o = view4(out);
  const PartDimSet legal = legal_part_dims(g, id);
  struct Split {
    PartDim dim;
    std::int64_t factor;
  };
  std::vector<Split> splits;
  for (PartDim d : kAllPartDims) {
    if (!legal.contains(d)) continue;
    const std::int64_t n = d == PartDim::Inpp ? reduction : o[static_cast<std::size_t>(d)];
    for (std::int64_t f : divisors(n))
      if (f > 1) splits.push_back({d, f});
  }
  int blocks = 0, failed = 0;  // the first failing block is reported, the others counted
  // The blocks of splits `chosen`, each at position `at`.
  auto check = [&](const std::vector<Split>& chosen, const std::vector<std::int64_t>& at) {
    Box block = full_box(o);
    Range red{0, reduction};
    for (std::size_t k = 0; k < chosen.size(); ++k) {
      const PartDim d = chosen[k].dim;
      const std::int64_t n = d == PartDim::Inpp ? reduction : o[static_cast<std::size_t>(d)];
      const std::int64_t size = n / chosen[k].factor;
      const Range r{at[k] * size, (at[k] + 1) * size};
      if (d == PartDim::Inpp)
        red = r;
      else
        block.r[static_cast<std::size_t>(d)] = r;
    }
    ++blocks;
    Box region;
    try {
      region = input_region(g, id, input, block, red);
    } catch (const std::exception& e) {  // a region leaving its input
      if (failed++ == 0) ADD_FAILURE() << name << " input " << input << ": " << e.what();
      return;
    }
    std::vector<Range> view_ranges(block.r.begin(), block.r.end());
    bool missed = false;
    for_each_index(view_ranges, [&](const Index& v) {
      const Index oi = tensor_index({v[0], v[1], v[2], v[3]}, out);
      for (const Index& ii : reads(oi, red)) {
        const ViewIndex iv = view_index(ii, in);
        bool held = true;
        for (int a = 0; a < 4; ++a) held = held && region.r[a].contains(iv[a]);
        if (!held && !missed && failed++ == 0)
          ADD_FAILURE() << name << " input " << input << " " << shape_str(in) << ": block "
                        << str(block) << " reduction [" << red.lo << "," << red.hi << ") of output "
                        << shape_str(out) << ": element " << str(oi) << " reads " << str(ii)
                        << ", outside the region " << str(region);
        missed = missed || !held;
      }
    });
  };
  for (const Split& s : splits)
    for (std::int64_t k = 0; k < s.factor; ++k) check({s}, {k});
  for (std::size_t i = 0; i < splits.size(); ++i)
    for (std::size_t j = i + 1; j < splits.size(); ++j) {
      if (splits[i].dim == splits[j].dim) continue;
      for (std::int64_t a = 0; a < splits[i].factor; ++a)
        for (std::int64_t b = 0; b < splits[j].factor; ++b) check({splits[i], splits[j]}, {a, b});
    }
  EXPECT_EQ(failed, 0) << name << " input " << input << ": blocks missing elements, of " << blocks;
  return blocks;
}

/// A second graph input (Model has one, "x").
inline void add_input(Model& m, const std::string& name, const Shape& shape) {
  auto* in = m.g->add_input();
  in->set_name(name);
  in->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  auto* s = in->mutable_type()->mutable_tensor_type()->mutable_shape();
  for (auto d : shape) s->add_dim()->set_dim_value(d);
}

inline std::string dims_of(const Graph& g, const std::string& name) {
  return legal_part_dims(g, *g.find(name)).str();
}
/// An output gradient `dy` of shape `s`, a gradient node's input.
inline NodeId add_dy(Graph& g, const Shape& s) {
  OpAttrs in;
  in.shape = s;
  return g.add_node(Node{"dy", OpKind::Input, in, {}});
}

}  // namespace nocflow::optimizer::region_check
