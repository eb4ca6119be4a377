// SPDX-License-Identifier: MIT
// How a sweep shares its points among MPI ranks (sim/sweep/sweep.h).
#include "sim/sweep/sweep.h"

#include <gtest/gtest.h>

namespace nocflow::sim {
namespace {

std::vector<std::size_t> points_of(int rank, int ranks, std::size_t points) {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < points; ++i)
    if (dealt_to(i, rank, ranks)) out.push_back(i);
  return out;
}

TEST(Sweep, PointsAreDealtToRanksEachRoundInTheOtherDirection) {
  EXPECT_EQ(points_of(0, 2, 6), (std::vector<std::size_t>{0, 3, 4}));
  EXPECT_EQ(points_of(1, 2, 6), (std::vector<std::size_t>{1, 2, 5}));
  EXPECT_EQ(points_of(0, 3, 7), (std::vector<std::size_t>{0, 5, 6}));
  EXPECT_EQ(points_of(2, 3, 7), (std::vector<std::size_t>{2, 3}));
  EXPECT_EQ(points_of(0, 1, 3), (std::vector<std::size_t>{0, 1, 2}));
  // Every point to exactly one rank.
  for (int ranks = 1; ranks <= 5; ++ranks)
    for (std::size_t i = 0; i < 40; ++i) {
      int owners = 0;
      for (int r = 0; r < ranks; ++r) owners += dealt_to(i, r, ranks);
      EXPECT_EQ(owners, 1) << i << " of " << ranks << " ranks";
    }
  // A fast axis of two solvers (even points greedy, odd dp) over 21 other points: each of two
  // ranks runs about half of each solver's points, where round robin gave each one solver.
  for (int rank = 0; rank < 2; ++rank) {
    int dp = 0;
    for (std::size_t i : points_of(rank, 2, 42)) dp += i % 2;
    EXPECT_GE(dp, 10) << rank;
    EXPECT_LE(dp, 11) << rank;
  }
}

}  // namespace
}  // namespace nocflow::sim
