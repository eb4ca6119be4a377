// SPDX-License-Identifier: MIT
// Numbers and fields as the reports print them (noc/base/format.h), and the text checks of
// inputs (noc/base/text_input.h).
#include "noc/base/format.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "noc/base/json_text.h"
#include "noc/base/text_input.h"
#include "tests/input_error.h"

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

TEST(Format, DurationsAreToTheSecondWithPaddedMinutesAndSeconds) {
  EXPECT_EQ(duration_text(0.4), "0s");
  EXPECT_EQ(duration_text(7), "7s");
  EXPECT_EQ(duration_text(59.6), "1m00s");  // rounded first, then split
  EXPECT_EQ(duration_text(125), "2m05s");
  EXPECT_EQ(duration_text(3600), "1h00m00s");
  EXPECT_EQ(duration_text(3725), "1h02m05s");
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

TEST(TextInput, Utf8IsWellFormedOrTheFirstBadByteIsNamed) {
  constexpr auto npos = std::string_view::npos;
  for (const char* ok : {"conv1", "conv_\xc3\xa9", "\xe2\x82\xac", "\xef\xbf\xbd",
                         "\xf0\x9f\x98\x80", "\xf4\x8f\xbf\xbf", ""})
    EXPECT_EQ(invalid_utf8_at(ok), npos) << ok;
  // Latin-1, a lone continuation, an overlong '/', a surrogate, past U+10FFFF, cut short.
  const std::pair<const char*, std::size_t> bad[] = {{"conv\xe9"
                                                      "1",
                                                      4},
                                                     {"a\x80", 1},
                                                     {"\xc0\xaf", 0},
                                                     {"x\xed\xa0\x80", 1},
                                                     {"\xf4\x90\x80\x80", 0},
                                                     {"ab\xe2\x82", 2},
                                                     {"\xf5\x80\x80\x80", 0},
                                                     {"\xe0\x80\x80", 0},
                                                     {"\xf0\x8f\xbf\xbf", 0}};
  for (const auto& [text, at] : bad) EXPECT_EQ(invalid_utf8_at(text), at) << text;
  EXPECT_EQ(testing::error_of([] { check_utf8_file("a: 1\nname: conv\xe9\n", "net.yaml"); }),
            "net.yaml:2: column 11: byte 0xe9 is not UTF-8");
  EXPECT_EQ(testing::error_of([] { check_text_line("layer=\xff", "pe_0.txt:3"); }),
            "pe_0.txt:3: column 7: byte 0xff is not UTF-8");
  EXPECT_EQ(utf8_replaced("n\xe9t\xc3\xa9.yaml"), "n\xef\xbf\xbdt\xc3\xa9.yaml");
  // A path given on the command line goes into summary.json as it is, bad bytes replaced (the
  // default dump threw after the run).
  EXPECT_EQ(json_text(nlohmann::ordered_json{{"plan", "/tmp/p\xe9.yaml"}, {"n", 1}}),
            "{\"plan\":\"/tmp/p\xef\xbf\xbd.yaml\",\"n\":1}");
}

TEST(TextInput, LongLinesOfAMessageAreCutInTheMiddle) {
  EXPECT_EQ(elide_long_lines("short\nlines stay", 10), "short\nlines stay");
  // Limit 20: the first 10 bytes and the last 5 kept.
  const std::string line = "f.yaml:3: name 'aaaaaaaaaaaaaaaaaaa' is bad";
  EXPECT_EQ(
      elide_long_lines(line + "\nnext", 20),
      "f.yaml:3:  ... [" + std::to_string(line.size() - 15) + " bytes left out] ... s bad\nnext");
  // A cut falls before a character, never inside one (é is two bytes: the 10th and 11th).
  const std::string cut = elide_long_lines("123456789\xc3\xa9" + std::string(30, 'x'), 20);
  EXPECT_EQ(cut.substr(0, 14), "123456789 ... ") << cut;
  EXPECT_EQ(invalid_utf8_at(cut), std::string_view::npos) << cut;
  const std::string huge = "x.yaml:1: unknown name '" + std::string(100000, 'n') + "'";
  EXPECT_LT(elide_long_lines(huge).size(), 1100u);
  // Bytes that are not UTF-8 (stray continuation bytes, a file name's) are cut all the same
  // (stepping back to a character's start went back to the line's start).
  EXPECT_LT(elide_long_lines(std::string(3000, '\x80'), 20).size(), 60u);
}

}  // namespace
}  // namespace nocflow
