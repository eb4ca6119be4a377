// SPDX-License-Identifier: MIT
// Numbers and fields as the reports print them (noc/base/format.h).
#include "noc/base/format.h"

#include <gtest/gtest.h>

namespace nocflow {
namespace {

TEST(Format, FixedRoundsAndAZeroHasNoSign) {
  EXPECT_EQ(fixed(2.345), "2.3");
  EXPECT_EQ(fixed(2.345, 2), "2.35");
  EXPECT_EQ(fixed(-1.25, 1), "-1.2");
  EXPECT_EQ(fixed(-0.04), "0.0");  // a tiny negative error printed as -0.0%
  EXPECT_EQ(fixed(-0.0004, 3), "0.000");
  EXPECT_EQ(fixed(-0.0005, 2), "0.00");
  EXPECT_EQ(fixed(-0.006, 2), "-0.01");
  EXPECT_EQ(fixed(-3, 0), "-3");
}

TEST(Format, CountedNounsAreSingularForOne) {
  EXPECT_EQ(counted(1, "layer"), "1 layer");
  EXPECT_EQ(counted(0, "layer"), "0 layers");
  EXPECT_EQ(counted(3, "micro-batch"), "3 micro-batches");
  EXPECT_EQ(counted(1, "micro-batch"), "1 micro-batch");
  EXPECT_EQ(counted(2, "pipeline stage"), "2 pipeline stages");
}

TEST(Format, SignedPercentShowsTheSignOfEveryErrorButZero) {
  EXPECT_EQ(signed_percent(0.0043), "+0.4%");
  EXPECT_EQ(signed_percent(-0.7133), "-71.3%");
  EXPECT_EQ(signed_percent(2.5, 0), "+250%");
  EXPECT_EQ(signed_percent(-0.0004), "0.0%");
  EXPECT_EQ(signed_percent(0.0), "0.0%");
}

// An energy prints in the largest unit in which it is at least 1: a 2-flit message's NoC energy
// printed as "0.000 uJ".
TEST(Format, EnergyTextKeepsSmallEnergiesReadable) {
  EXPECT_EQ(energy_text(7.2233e7), "72.233 uJ");
  EXPECT_EQ(energy_text(1e6), "1.000 uJ");
  EXPECT_EQ(energy_text(999999), "999.999 nJ");
  EXPECT_EQ(energy_text(2048), "2.048 nJ");
  EXPECT_EQ(energy_text(736), "736.000 pJ");
  EXPECT_EQ(energy_text(0), "0.000 pJ");
  EXPECT_EQ(energy_unit(5e3).second, std::string("nJ"));
}

TEST(Format, CsvFieldsAndDotStringsAreQuotedOnlyWhereNeeded) {
  EXPECT_EQ(csv_field("conv1"), "conv1");
  EXPECT_EQ(csv_field("a,b"), "\"a,b\"");
  EXPECT_EQ(csv_field("say \"hi\"\nnow"), "\"say \"\"hi\"\" now\"");
  EXPECT_EQ(dot_string("a\"b\\c\nd"), "\"a\\\"b\\\\c\\nd\"");
}

// FNV-1a 64's published test vectors (the empty text is the offset basis).
TEST(Format, Fnv1aHexGivesTheFunctionsTestVectors) {
  EXPECT_EQ(fnv1a_hex(""), "cbf29ce484222325");
  EXPECT_EQ(fnv1a_hex("a"), "af63dc4c8601ec8c");
  EXPECT_EQ(fnv1a_hex("foobar"), "85944171f73967e8");
}

}  // namespace
}  // namespace nocflow
