// SPDX-License-Identifier: MIT
// Program files: what write_program writes, read_programs reads back, and what it refuses.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "noc/base/error.h"
#include "sim/output/run_report.h"
#include "sim/system/program.h"
#include "tests/input_error.h"
#include "tests/scratch.h"

namespace nocflow::sim {
namespace {

namespace fs = std::filesystem;

/// Writes one file per PE with the given texts.
fs::path write_files(const std::string& name, const std::vector<std::string>& texts) {
  const fs::path dir = testing::fresh_dir(name);
  for (std::size_t pe = 0; pe < texts.size(); ++pe)
    std::ofstream(dir / ("pe_" + std::to_string(pe) + ".txt")) << texts[pe];
  return dir;
}

/// read_programs' message for these files, "" when it accepts them.
std::string refusal(const std::string& name, const std::vector<std::string>& texts) {
  try {
    read_programs(write_files(name, texts).string(), static_cast<int>(texts.size()));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(ProgramFiles, WhatIsWrittenReadsBackStepForStep) {
  ProgramSet set(3);
  // Names as an ONNX file may give them: spaces, quotes, '#' and backslashes are quoted.
  set.layer_names = {"conv1", "block 2/conv #2 \"a\\b\""};
  set.compute(0, 0, 120);
  set.send(0, 2, 0, 4096, 7, 0);
  set.compute(1, 0, 80);
  set.barrier_all(1);
  set.recv(2, 0, 1, 4096, 7, 0);
  set.reduce(2, 1, 33, 1);
  set.send(2, 1, 1, 64, 9, 1);
  set.recv(1, 2, 1, 64, 9, 1);
  set.barrier_all(2);
  const std::vector<std::string> edges = {"conv1->block 2/conv #2 \"a\\b\"", ""};
  const fs::path dir = testing::fresh_dir("program_io_roundtrip");
  for (int pe = 0; pe < 3; ++pe) {
    std::ofstream f(dir / ("pe_" + std::to_string(pe) + ".txt"));
    write_program(f, set, pe, edges);
  }
  std::ifstream pe2(dir / "pe_2.txt");
  const std::string text((std::istreambuf_iterator<char>(pe2)), std::istreambuf_iterator<char>());
  EXPECT_NE(text.find("layer=\"block 2/conv #2 \\\"a\\\\b\\\"\"  cycles=33  edge=\"\""),
            std::string::npos)
      << text;
  const ProgramFiles back = read_programs(dir.string(), 3);
  ASSERT_EQ(back.programs.pe.size(), 3u);
  for (int pe = 0; pe < 3; ++pe) {
    ASSERT_EQ(back.programs.pe[pe].size(), set.pe[pe].size()) << pe;
    for (std::size_t i = 0; i < set.pe[pe].size(); ++i) {
      const Step &a = set.pe[pe][i], &b = back.programs.pe[pe][i];
      EXPECT_EQ(a.kind, b.kind);
      EXPECT_EQ(a.peer, b.peer);
      EXPECT_EQ(a.bytes, b.bytes);
      EXPECT_EQ(a.cycles, b.cycles);
      EXPECT_EQ(a.tag, b.tag);
      // Names, not numbers, survive the file.
      EXPECT_EQ(a.layer < 0 ? "" : set.layer_names[a.layer],
                b.layer < 0 ? "" : back.programs.layer_names[b.layer]);
      EXPECT_EQ(a.edge < 0 ? "" : edges[a.edge], b.edge < 0 ? "" : back.edge_names[b.edge]);
    }
  }
  EXPECT_EQ(back.programs.next_tag, 10);  // past every tag read
}

TEST(ProgramFiles, NamesFileNumbersLayersAndEdgesInThePlansOrder) {
  // PE 0 uses layer "b" and edge "y" first; the plan numbers them after "a" and "x".
  ProgramSet set(2);
  set.layer_names = {"a", "b", "not run"};
  const std::vector<std::string> edges = {"x", "y", "not sent"};
  set.compute(0, 1, 10);
  set.send(0, 1, 0, 64, 1, 1);
  set.send(0, 1, 0, 64, 2, 0);
  set.recv(1, 0, 0, 64, 1, 1);
  set.recv(1, 0, 0, 64, 2, 0);
  set.compute(1, 0, 10);
  const fs::path dir = testing::fresh_dir("program_io_names");
  for (int pe = 0; pe < 2; ++pe) {
    std::ofstream f(dir / ("pe_" + std::to_string(pe) + ".txt"));
    write_program(f, set, pe, edges);
  }
  const ProgramFiles first_use = read_programs(dir.string(), 2);
  EXPECT_EQ(first_use.programs.layer_names, (std::vector<std::string>{"b", "a"}));
  EXPECT_EQ(first_use.edge_names, (std::vector<std::string>{"y", "x"}));
  {
    std::ofstream f(dir / "names.txt");
    write_names(f, set, edges);
  }
  const ProgramFiles back = read_programs(dir.string(), 2);
  // The file leaves out the names no step uses, so reading it back notes none.
  std::ifstream names(dir / "names.txt");
  const std::string text{std::istreambuf_iterator<char>(names), {}};
  EXPECT_EQ(text.find("not "), std::string::npos) << text;
  EXPECT_TRUE(back.notes.empty());
  // The plan's order, without the names no step uses.
  EXPECT_EQ(back.programs.layer_names, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(back.edge_names, (std::vector<std::string>{"x", "y"}));
  ASSERT_EQ(back.programs.pe[0].size(), 3u);
  EXPECT_EQ(back.programs.layer_names[back.programs.pe[0][0].layer], "b");
  EXPECT_EQ(back.edge_names[back.programs.pe[0][1].edge], "y");
  EXPECT_EQ(back.edge_names[back.programs.pe[0][2].edge], "x");
  std::ofstream(dir / "names.txt") << "layer a\nstage b\n";
  EXPECT_HAS(testing::error_of([&] { read_programs(dir.string(), 2); }),
             "names.txt:2: expected 'layer NAME' or 'edge NAME'");
}

TEST(ProgramFiles, EdgeReportsSplitNamesAtTheArrowBetweenTwoLayers) {
  // Layer names may hold "->" themselves; ":inpp" marks partial sums whatever the name.
  ProgramSet set(2);
  set.layer_names = {"a->b", "c"};
  set.send(0, 1, 0, 100, 1, 0);
  set.recv(1, 0, 0, 100, 1, 0);
  set.send(1, 0, 1, 60, 2, 1);
  set.send(1, 0, 1, 40, 3, 1);
  const std::vector<EdgeReport> edges =
      program_edge_reports(set, {"a->b->c", "a->b:inpp"}, RunResult{});
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].src, "a->b");
  EXPECT_EQ(edges[0].dst, "c");
  EXPECT_FALSE(edges[0].reduction);
  EXPECT_EQ(edges[0].bytes, 100);
  EXPECT_EQ(edges[1].src, "a->b");
  EXPECT_EQ(edges[1].dst, "a->b");
  EXPECT_TRUE(edges[1].reduction);
  EXPECT_EQ(edges[1].bytes, 100);
}

TEST(ProgramFiles, AnEdgesTimeRunsFromItsFirstSendToItsLastArrivalWithItsSendersSkew) {
  // Edge 0: PE 0 sends at 10 (and again at 70), PE 2 only at 40; the last message arrives at 90,
  // after its receiver took an earlier one at 95. Edge 1: one sender, no skew.
  ProgramSet set(3);
  set.layer_names = {"a", "b"};
  RunResult run;
  auto span = [&](int pe, StepKind kind, noc::Cycle start, noc::Cycle end, int edge,
                  noc::Cycle arrived = 0) {
    Span s;
    s.pe = pe;
    s.kind = kind;
    s.start = start;
    s.end = end;
    s.edge = edge;
    s.arrived = arrived;
    run.spans.push_back(s);
  };
  span(2, StepKind::Send, 40, 41, 0);
  span(0, StepKind::Send, 70, 71, 0);
  span(0, StepKind::Send, 10, 11, 0);
  span(1, StepKind::Recv, 20, 95, 0, 60);
  span(1, StepKind::Recv, 95, 96, 0, 90);
  span(1, StepKind::Send, 100, 101, 1);
  span(0, StepKind::Recv, 100, 130, 1, 125);
  const std::vector<EdgeReport> edges = program_edge_reports(set, {"a->b", "b->a"}, run);
  ASSERT_EQ(edges.size(), 2u);
  EXPECT_EQ(edges[0].simulated_cycles, 80);     // 10 .. 90
  EXPECT_EQ(edges[0].senders_skew_cycles, 30);  // PE 2 started 30 cycles after PE 0
  EXPECT_EQ(edges[1].simulated_cycles, 25);
  EXPECT_EQ(edges[1].senders_skew_cycles, 0);
}

TEST(ProgramFiles, RefusesWhatWouldHangOrFailARunNamingFileAndLine) {
  const std::string send = "send to=PE1 bytes=64 tag=3\n", recv = "recv from=PE0 bytes=64 tag=3\n";
  EXPECT_EQ(refusal("pio_ok", {"# comment\n\n" + send, recv}), "");
  EXPECT_EQ(refusal("pio_ok_barrier", {send + "barrier id=1\n", "barrier id=1\n" + recv}), "");
  const std::string back = "send to=PE0 bytes=64 tag=4\n", back_recv = "recv from=PE1 bytes=64 tag=4\n";
  EXPECT_EQ(refusal("pio_ok_reply", {send + back_recv, recv + back}), "");
  // PE 1 is woken by PE 0's send before it first runs: counted once at each barrier all the
  // same (it was counted twice, released barrier 1 early and refused what barrier-mode
  // replays dump).
  const std::string barriers = "barrier id=1\nbarrier id=2\n";
  EXPECT_EQ(refusal("pio_ok_woken_early",
                    {send + barriers, recv + barriers, "compute cycles=1\n" + barriers}),
            "");
  const struct {
    const char* name;
    std::vector<std::string> texts;
    const char* message;
  } cases[] = {
      {"pio_kind", {"jump cycles=3\n", ""}, "pe_0.txt:1: unknown step 'jump'"},
      {"pio_key", {"compute cycle=3\n", ""}, "pe_0.txt:1: unknown key 'cycle' for compute"},
      {"pio_need", {"send to=PE1 bytes=64\n", recv}, "pe_0.txt:1: send needs 'tag='"},
      {"pio_twice", {"compute cycles=1 cycles=2\n", ""}, "'cycles' given twice"},
      {"pio_number", {"compute cycles=many\n", ""}, "cycles=many: expected an integer"},
      {"pio_negative", {"compute cycles=-4\n", ""}, "cycles=-4: must be at least 0"},
      // Past SystemC's time range the total used to be capped, 1000x short.
      {"pio_huge",
       {"compute cycles=100000000000000000\n", ""},
       "cycles=100000000000000000: must be at most 1000000000000"},
      {"pio_peer", {"send to=PE2 bytes=64 tag=3\n", ""}, "to=PE2: the hardware has PEs 0..1"},
      {"pio_self", {"send to=PE0 bytes=64 tag=3\n", ""}, "never enters the NoC"},
      {"pio_norecv",
       {send, ""},
       "pe_0.txt:1: nothing receives this message: PE 1 has no 'recv from=PE0 tag=3'"},
      {"pio_nosend", {"", recv}, "pe_1.txt:1: nothing sends this message"},
      {"pio_bytes",
       {send, "recv from=PE0 bytes=32 tag=3\n"},
       "pe_1.txt:1: receives 32 bytes of a message of 64"},
      // Both ends of a message under one edge: the tables counted it under the send's edge with
      // 0 cycles and added a row for the receive's.
      {"pio_edge",
       {"send to=PE1 bytes=64 tag=3 edge=\"a b->c\"\n", "recv from=PE0 bytes=64 tag=3 edge=x->y\n"},
       "pe_1.txt:1: receives as edge=x->y a message sent as edge=\"a b->c\" ("},
      {"pio_no_edge",
       {"send to=PE1 bytes=64 tag=3 edge=a->c\n", recv},
       "pe_1.txt:1: receives as no edge a message sent as edge=a->c"},
      {"pio_dup", {send + send, recv}, "pe_0.txt:2: a second send of tag 3 to PE1 (the first: "},
      {"pio_order",
       {"barrier id=2\n", "barrier id=2\n"},
       "pe_0.txt:1: barrier 2 where barrier 1 comes next"},
      {"pio_count", {"barrier id=1\n", "compute cycles=1\n"}, "PE 1 passes 0 barriers, PE 0 1"},
      {"pio_barrier_cycle",
       {back_recv + "barrier id=1\n", "barrier id=1\n" + back},
       "pe_1.txt:1: PE 1 at barrier 1, waiting for PE 0"},
      {"pio_quote",
       {"compute cycles=1 layer=\"conv 1\n", ""},
       "pe_0.txt:1: a quoted name is not closed"},
      // A NUL used to end the message at the number it cut.
      {"pio_nul",
       {std::string("send to=PE1 bytes=64\0 tag=3\n", 28), recv},
       "pe_0.txt:1: column 21: control character 0x00"},
      // Names go on to trace.json, which must be UTF-8: it failed there, as an internal error.
      {"pio_latin1",
       {"compute cycles=1 layer=conv\xe9"
        "1\n",
        ""},
       "pe_0.txt:1: column 28: byte 0xe9 is not UTF-8"},
  };
  for (const auto& c : cases) {
    const std::string message = refusal(c.name, c.texts);
    EXPECT_NE(message.find(c.message), std::string::npos) << c.name << ": " << message;
  }
  // Each PE receives before it sends what the other receives: the run would hang (exit 3 with
  // every PE's wait, before); the refusal names the cycle, step by step.
  const std::string cycle = refusal("pio_cycle", {back_recv + send, recv + back});
  for (const char* part : {"the programs cannot complete: these PEs wait for each other in a cycle\n",
                           "pe_0.txt:1: PE 0 receives tag 4 from PE 1, waiting for PE 1\n",
                           "pe_1.txt:1: PE 1 receives tag 3 from PE 0, waiting for PE 0"})
    EXPECT_NE(cycle.find(part), std::string::npos) << cycle;
  // A file missing, or one for a PE the hardware lacks.
  const fs::path dir = write_files("pio_files", {send, recv});
  EXPECT_THROW(read_programs(dir.string(), 3), InputError);
  std::ofstream(dir / "pe_5.txt") << "";
  try {
    read_programs(dir.string(), 2);
    ADD_FAILURE() << "pe_5.txt accepted on 2 PEs";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("pe_5.txt: the hardware has only 2 PEs"),
              std::string::npos);
  }
  // A name that is no PE's was left out unsaid (found by fuzzing).
  fs::remove(dir / "pe_5.txt");
  std::ofstream(dir / "pe_01.txt") << "";
  EXPECT_NE(testing::error_of([&] { read_programs(dir.string(), 2); })
                .find("pe_01.txt: not a program file name (pe_N.txt, N a PE number without "
                      "leading zeros)"),
            std::string::npos);
  fs::remove(dir / "pe_01.txt");
  std::ofstream(dir / "pe_-1.txt") << "";
  EXPECT_NE(testing::error_of([&] {
              read_programs(dir.string(), 2);
            }).find("pe_-1.txt: not a program file name"),
            std::string::npos);
  fs::remove(dir / "pe_-1.txt");
  std::ofstream(dir / "pe_notes.txt") << "";  // other files are the user's
  EXPECT_NO_THROW(read_programs(dir.string(), 2));
}

}  // namespace
}  // namespace nocflow::sim
