// SPDX-License-Identifier: MIT
// Allocators: valid matchings, round-robin fairness, no starvation, iSLIP desynchronisation.
#include <gtest/gtest.h>

#include <random>

#include "noc/base/error.h"
#include "noc/router/allocator.h"

namespace nocflow::noc {
namespace {

class AllocatorKinds : public ::testing::TestWithParam<std::string> {};

TEST_P(AllocatorKinds, ProducesValidMatchingsOfRequests) {
  auto alloc = make_allocator(GetParam(), 6, 5, 2);
  std::mt19937 rng(7);
  for (int round = 0; round < 2000; ++round) {
    std::vector<std::vector<bool>> req(6, std::vector<bool>(5, false));
    for (int i = 0; i < 6; ++i)
      for (int o = 0; o < 5; ++o)
        if (rng() % 3 == 0) {
          req[i][o] = true;
          alloc->request(i, o);
        }
    alloc->allocate();
    std::vector<int> used(5, 0);
    int matched = 0;
    for (int i = 0; i < 6; ++i) {
      const int o = alloc->matched_output(i);
      if (o < 0) continue;
      ASSERT_TRUE(req[i][o]) << "matched a pair that was not requested";
      ASSERT_EQ(++used[o], 1) << "output granted twice";
      ++matched;
    }
    EXPECT_EQ(matched, static_cast<int>(alloc->matched_inputs().size()));
    // Maximality is not promised, but a lone request (the only one of its input and of its
    // output) must always be granted.
    for (int i = 0; i < 6; ++i)
      for (int o = 0; o < 5; ++o) {
        int of_input = 0, of_output = 0;
        for (int x = 0; x < 5; ++x) of_input += req[i][x];
        for (int x = 0; x < 6; ++x) of_output += req[x][o];
        if (req[i][o] && of_input == 1 && of_output == 1) {
          EXPECT_EQ(alloc->matched_output(i), o)
              << "lone request " << i << " -> " << o << " not granted";
        }
      }
  }
}

TEST_P(AllocatorKinds, SharesAContendedOutputEvenly) {
  auto alloc = make_allocator(GetParam(), 4, 4, 1);
  std::vector<int> wins(4, 0);
  for (int round = 0; round < 400; ++round) {
    for (int i = 0; i < 4; ++i) alloc->request(i, 2);
    alloc->allocate();
    ASSERT_EQ(alloc->matched_inputs().size(), 1u);
    ++wins[alloc->matched_inputs()[0]];
  }
  for (int i = 0; i < 4; ++i) EXPECT_EQ(wins[i], 100) << "input " << i;
}

TEST_P(AllocatorKinds, NoInputStarvesUnderContention) {
  // Input 0 always requests output 0; inputs 1..3 request outputs 0 and 1 in random subsets.
  auto alloc = make_allocator(GetParam(), 4, 2, 1);
  std::mt19937 rng(3);
  int waited = 0, longest_wait = 0;
  for (int round = 0; round < 5000; ++round) {
    alloc->request(0, 0);
    for (int i = 1; i < 4; ++i) {
      if (rng() & 1) alloc->request(i, 0);
      if (rng() & 1) alloc->request(i, 1);
    }
    alloc->allocate();
    waited = alloc->matched_output(0) == 0 ? 0 : waited + 1;
    longest_wait = std::max(longest_wait, waited);
  }
  // iSLIP moves a grant pointer only on acceptance, so a grant refused by a busier input can
  // repeat; the wait stays bounded by a few times the number of inputs.
  EXPECT_LE(longest_wait, 3 * 4) << "input 0 waited " << longest_wait << " rounds";
}

// The router's switch allocation relies on request_outputs being exactly a request() per
// output: the same matches, in the same order, and the same pointers from then on.
TEST_P(AllocatorKinds, RequestOutputsIsOneRequestPerOutput) {
  auto each = make_allocator(GetParam(), 6, 5, 2), masks = make_allocator(GetParam(), 6, 5, 2);
  std::mt19937 rng(11);
  for (int round = 0; round < 2000; ++round) {
    for (int i = 0; i < 6; ++i) {
      const std::uint64_t outputs = rng() % 32;
      for (int o = 0; o < 5; ++o)
        if ((outputs >> o) & 1) each->request(i, o);
      masks->request_outputs(i, outputs);
    }
    each->allocate();
    masks->allocate();
    ASSERT_EQ(each->matched_inputs(), masks->matched_inputs()) << "round " << round;
    for (int i = 0; i < 6; ++i) ASSERT_EQ(each->matched_output(i), masks->matched_output(i));
  }
}

// The router's VC allocation relies on this: when the requests split into parts that share no
// input and no output (the heads wanting one output port ask only for its VCs), matching each
// part on its own (a lone input with allocate_single) makes the same matches as matching all at
// once, and leaves the same pointers (checked by the rounds that follow). With 1 and 2
// iterations, with masks and (100 inputs) with the request list.
TEST_P(AllocatorKinds, IndependentPartsMatchAsOneMatching) {
  for (const int n : {20, 100})
    for (const int iterations : {1, 2}) {
      auto whole = make_allocator(GetParam(), n, n, iterations);
      auto parts = make_allocator(GetParam(), n, n, iterations);
      constexpr int kParts = 5;  // part k: inputs and outputs i with i % kParts == k
      std::mt19937 rng(13);
      for (int round = 0; round < 3000; ++round) {
        std::vector<int> expected(n, -1);
        std::vector<std::vector<std::pair<int, int>>> part(kParts);
        for (int i = 0; i < n; ++i) {
          if (rng() % 2) continue;
          for (int o = i % kParts; o < n; o += kParts)
            if (rng() % 3 == 0) part[i % kParts].push_back({i, o});
        }
        for (const auto& requests : part)
          for (const auto& [i, o] : requests) whole->request(i, o);
        whole->allocate();
        for (int i = 0; i < n; ++i) expected[i] = whole->matched_output(i);
        for (const auto& requests : part) {
          if (requests.empty()) continue;
          const int lone = requests.front().first;
          bool single = n <= 64;
          for (const auto& r : requests) single &= r.first == lone;
          if (single) {
            std::uint64_t outputs = 0;
            for (const auto& r : requests) outputs |= std::uint64_t{1} << r.second;
            const int o = parts->allocate_single(lone, outputs);
            ASSERT_EQ(o, expected[lone]) << "round " << round;
            continue;
          }
          for (const auto& [i, o] : requests) parts->request(i, o);
          parts->allocate();
          for (const auto& r : requests)
            ASSERT_EQ(parts->matched_output(r.first), expected[r.first]) << "round " << round;
        }
      }
    }
}

INSTANTIATE_TEST_SUITE_P(Kinds, AllocatorKinds, ::testing::Values("islip", "separable"));

TEST(Islip, DesynchronisesToFullThroughputUnderUniformLoad) {
  // Every input requests every output: iSLIP's pointers desynchronise and, after a few rounds,
  // every round is a perfect matching (McKeown's classic result).
  auto alloc = make_islip(5, 5, 1);
  int matched_last_rounds = 0;
  for (int round = 0; round < 50; ++round) {
    for (int i = 0; i < 5; ++i)
      for (int o = 0; o < 5; ++o) alloc->request(i, o);
    alloc->allocate();
    if (round >= 40) matched_last_rounds += static_cast<int>(alloc->matched_inputs().size());
  }
  EXPECT_EQ(matched_last_rounds, 50);
}

TEST(Islip, MoreIterationsFillTheMatching) {
  // Input 0 asks outputs 0 and 1, input 1 asks output 1. With fresh pointers both outputs
  // grant input 0, which accepts output 0: one iteration matches one pair; a second iteration
  // offers output 1 to input 1.
  auto one = make_islip(2, 2, 1), two = make_islip(2, 2, 2);
  for (auto* a : {one.get(), two.get()}) {
    a->request(0, 0);
    a->request(0, 1);
    a->request(1, 1);
    a->allocate();
  }
  EXPECT_EQ(one->matched_inputs().size(), 1u);
  EXPECT_EQ(two->matched_inputs().size(), 2u);
  EXPECT_EQ(two->matched_output(1), 1);
}

TEST(Allocator, UnknownNameListsKnownOnes) {
  try {
    make_allocator("wavefrnt", 2, 2, 1);
    FAIL() << "expected InputError";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("known: islip, separable"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nocflow::noc
