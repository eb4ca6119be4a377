// SPDX-License-Identifier: MIT
// Reshape, Flatten and Transpose regions (optimizer/partition/relayout.h) against a brute force
// that maps every element of an output block to the input element it copies.
#include "optimizer/partition/relayout.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <functional>
#include <set>
#include <string>

#include "noc/base/limits.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/graph/op_cost.h"
#include "optimizer/partition/choice.h"
#include "optimizer/partition/workload.h"
#include "optimizer/passes/pass_manager.h"
#include "tests/optimizer/view_index.h"

namespace nocflow::optimizer {
namespace {

struct Case {
  std::string name;
  OpKind kind;
  Shape in, out;
  std::vector<std::int64_t> perm;  // Transpose
};


/// The input element that output element `o` copies.
Index source(const Case& c, const Index& o) {
  Index i(c.in.size());
  if (c.kind == OpKind::Transpose) {
    for (std::size_t k = 0; k < o.size(); ++k)
      i[c.perm.empty() ? o.size() - 1 - k : static_cast<std::size_t>(c.perm[k])] = o[k];
    return i;
  }
  std::int64_t linear = 0;
  for (std::size_t k = 0; k < o.size(); ++k) linear = linear * c.out[k] + o[k];
  for (std::size_t k = c.in.size(); k-- > 0;) {
    i[k] = linear % c.in[k];
    linear /= c.in[k];
  }
  return i;
}

/// The view4 bounding box of the input elements the output block copies, and their count.
std::pair<Box, std::int64_t> brute_region(const Case& c, const Box& block) {
  Box hull{};
  bool first = true;
  std::int64_t count = 0;
  std::array<std::int64_t, 4> o{};
  std::function<void(int)> walk = [&](int a) {
    if (a == 4) {
      const auto v = view_index(source(c, tensor_index(o, c.out)), c.in);
      for (int k = 0; k < 4; ++k)
        hull.r[k] = first ? Range{v[k], v[k] + 1}
                          : Range{std::min(hull.r[k].lo, v[k]), std::max(hull.r[k].hi, v[k] + 1)};
      first = false;
      ++count;
      return;
    }
    for (o[a] = block.r[a].lo; o[a] < block.r[a].hi; ++o[a]) walk(a + 1);
  };
  walk(0);
  return {hull, count};
}

std::string str(const Box& b) {
  std::string s;
  for (const Range& r : b.r) s += "[" + std::to_string(r.lo) + "," + std::to_string(r.hi) + ")";
  return s;
}

bool contains(const Box& outer, const Box& inner) {
  for (int a = 0; a < 4; ++a)
    if (inner.r[a].lo < outer.r[a].lo || inner.r[a].hi > outer.r[a].hi) return false;
  return true;
}

const std::vector<Case>& cases() {
  static const std::vector<Case> all = {
      {"split heads", OpKind::Reshape, {2, 8, 24}, {2, 8, 4, 6}, {}},
      {"merge heads", OpKind::Reshape, {2, 8, 4, 6}, {2, 8, 24}, {}},
      {"regroup", OpKind::Reshape, {2, 6, 4}, {2, 4, 6}, {}},
      {"unit axes", OpKind::Reshape, {1, 6, 1, 1}, {1, 6}, {}},
      {"flatten", OpKind::Flatten, {2, 6, 3, 3}, {2, 54}, {}},
      {"to rank 5", OpKind::Reshape, {2, 3, 4, 5}, {2, 3, 2, 2, 5}, {}},
      {"from rank 5", OpKind::Reshape, {2, 3, 2, 2, 5}, {2, 12, 5}, {}},
      {"heads first", OpKind::Transpose, {2, 8, 4, 6}, {2, 4, 8, 6}, {0, 2, 1, 3}},
      {"keys", OpKind::Transpose, {2, 8, 4, 6}, {2, 4, 6, 8}, {0, 2, 3, 1}},
      {"reverse", OpKind::Transpose, {3, 5, 4}, {4, 5, 3}, {}},
      // Swin's window attention, scaled down: rows of windows into windows, the windows to
      // tokens, the projection's q, k, v and heads apart.
      {"window partition", OpKind::Transpose, {1, 4, 3, 4, 3, 6}, {1, 4, 4, 3, 3, 6},
       {0, 1, 3, 2, 4, 5}},
      {"windows to tokens", OpKind::Reshape, {1, 4, 4, 3, 3, 6}, {16, 9, 6}, {}},
      {"qkv apart", OpKind::Transpose, {8, 9, 3, 2, 4}, {3, 8, 2, 9, 4}, {2, 0, 3, 1, 4}},
  };
  return all;
}

// Every block of every even split along each output axis: the region holds every element the
// block copies. Brute force, a factor is exact when each of its blocks reads no more elements
// than it holds: the factors offered are the exact ones, a dimension is offered when one is
// above 1, and an offered factor's blocks get exactly their elements' bounding box.
TEST(Relayout, RegionsBoundTheCopiedElementsAndTheExactFactorsAreOffered) {
  int offered = 0, partial = 0;
  for (const Case& c : cases()) {
    OpAttrs a;
    a.perm = c.perm;
    const PartDimSet legal = relayout_dims(c.kind, a, c.in, c.out);
    const auto factors = relayout_factors(c.kind, a, c.in, c.out);
    const Dims4 o = view4(c.out);
    for (PartDim d : kAllPartDims) {
      const auto axis = output_axis(d, c.out.size());
      const std::vector<std::int64_t>& mine = factors[static_cast<std::size_t>(d)];
      const std::string what = c.name + " " + std::string(to_string(d));
      EXPECT_EQ(legal.contains(d), mine.size() > 1) << what;
      if (!axis) {
        EXPECT_EQ(mine, std::vector<std::int64_t>{1}) << what;
        continue;
      }
      const int v = view_axis(*axis, c.out.size());
      const std::int64_t n = o[v];
      std::vector<std::int64_t> exact_factors, all_factors;
      for (std::int64_t f = 1; f <= n; ++f) {
        if (n % f != 0) continue;
        all_factors.push_back(f);
        const bool offered_f = std::find(mine.begin(), mine.end(), f) != mine.end();
        bool exact = true;
        for (std::int64_t lo = 0; lo < n; lo += n / f) {
          Box block = full_box(o);
          block.r[v] = {lo, lo + n / f};
          const Box region = relayout_region(c.kind, a, c.in, c.out, block);
          const auto [hull, count] = brute_region(c, block);
          const std::string where =
              what + " block [" + std::to_string(lo) + ", " + std::to_string(lo + n / f) + ")";
          ASSERT_EQ(count, block.volume()) << where;
          EXPECT_TRUE(contains(region, hull)) << where << ": " << str(region) << " " << str(hull);
          if (offered_f) {  // nothing more than needed
            EXPECT_EQ(str(region), str(hull)) << where;
          }
          exact = exact && hull.volume() == count;
        }
        if (exact) exact_factors.push_back(f);
      }
      // An input of rank ≥ 5 is seen with its leading axes flattened into N, which the
      // per-axis bounds do not follow: there the offered factors may be fewer.
      if (c.in.size() <= 4) {
        EXPECT_EQ(mine, exact_factors) << what;
      } else {
        for (std::int64_t f : mine)
          EXPECT_NE(std::find(exact_factors.begin(), exact_factors.end(), f), exact_factors.end())
              << what << " factor " << f;
      }
      offered += legal.contains(d);
      partial += legal.contains(d) && mine != all_factors;
    }
  }
  EXPECT_GE(offered, 15);  // the checks above are not vacuous
  EXPECT_GE(partial, 2);   // merging heads, flattening channels of 3x3 positions
}

// No machine splits an axis in more than kMaxPes parts, and checking each factor's blocks
// made a flatten of 2^28 channels run for hours (found by fuzzing).
TEST(Relayout, FactorsStopAtTheLargestMachine) {
  const std::int64_t n = std::int64_t{1} << 28;
  const auto factors = relayout_factors(OpKind::Reshape, {}, {1, n, 1, 1}, {1, n});
  std::vector<std::int64_t> powers;
  for (std::int64_t f = 1; f <= kMaxPes; f *= 2) powers.push_back(f);
  EXPECT_EQ(factors[static_cast<std::size_t>(PartDim::Outp)], powers);
  EXPECT_EQ(powers.back(), 4096);
}

// Blocks split along two axes at once: still every copied element inside the region.
TEST(Relayout, TwoAxisBlocksAreCovered) {
  for (const Case& c : cases()) {
    OpAttrs a;
    a.perm = c.perm;
    const Dims4 o = view4(c.out);
    for (int v = 0; v < 4; ++v)
      for (int w = v + 1; w < 4; ++w) {
        if (o[v] < 2 || o[w] < 2) continue;
        Box block = full_box(o);
        block.r[v] = {o[v] / 2, o[v]};
        block.r[w] = {0, (o[w] + 1) / 2};
        const Box region = relayout_region(c.kind, a, c.in, c.out, block);
        const Box hull = brute_region(c, block).first;
        EXPECT_TRUE(contains(region, hull))
            << c.name << " axes " << v << "," << w << ": " << str(region) << " " << str(hull);
      }
  }
}

// In BERT's attention at batch 1 the head split and merge and the transposes around Q·Kᵀ are
// split along their tokens (128) and heads (12), not run on one PE.
TEST(Relayout, BertAttentionRelayoutsSplitByTokensAndHeads) {
  Graph g = load_network("zoo:bert_base_layer", ZooOptions{1, 2});
  PassManager(parse_pass_list("default")).run(g);
  int seen = 0, split = 0;
  for (NodeId id : g.topological_order()) {
    const Node& n = g.node(id);
    if (n.kind != OpKind::Reshape && n.kind != OpKind::Transpose) continue;
    const PartDimSet legal = legal_part_dims(g, id);
    for (PartDim d : {PartDim::Outp, PartDim::OfmpH, PartDim::OfmpW}) {
      const auto axis = output_axis(d, n.output.shape.size());
      if (!axis) continue;
      const std::int64_t size = n.output.shape[static_cast<std::size_t>(*axis)];
      if (size != 12 && size != 128) continue;
      EXPECT_TRUE(legal.contains(d)) << n.name << " " << to_string(d);
      ++split;
    }
    ++seen;
  }
  EXPECT_EQ(seen, 8);
  EXPECT_EQ(split, 15);  // two axes each; the merge back to 768 features has one
}

// The merge of 12 heads of 64 back into 768 features is offered OUTP factors whose blocks are
// whole heads (768 / f a multiple of 64) or nest in one (64 a multiple of 768 / f), up to P = 64.
TEST(Relayout, TheHeadMergeIsOfferedOnlyBlocksThatNestInHeads) {
  Graph g = load_network("zoo:bert_base_layer", ZooOptions{1, 2});
  PassManager(parse_pass_list("default")).run(g);
  const Workload w = build_workload(g);
  const auto it = std::find_if(w.layers.begin(), w.layers.end(),
                               [](const Layer& l) { return l.name == "attn.context.reshape"; });
  ASSERT_NE(it, w.layers.end());
  ASSERT_EQ(it->out[kC], 768);
  std::set<int> outp;
  for (const Choice& c : enumerate_choices(*it, {64, false}))
    outp.insert(c.f[static_cast<std::size_t>(PartDim::Outp)]);
  std::set<int> expected;
  for (int f = 1; f <= 64; ++f)
    if (768 % f == 0 && ((768 / f) % 64 == 0 || 64 % (768 / f) == 0)) expected.insert(f);
  EXPECT_EQ(outp, expected);
  EXPECT_EQ(expected.count(16), 0u);  // 48 features: a head and a part of the next
}

}  // namespace
}  // namespace nocflow::optimizer
