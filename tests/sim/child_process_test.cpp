// SPDX-License-Identifier: MIT
// Simulations in child processes: several SystemC elaborations from one parent process.
#include <gtest/gtest.h>

#include <csignal>

#include "noc/base/error.h"
#include "sim/config/hw_loader.h"
#include "sim/run/child_process.h"
#include "sim/system/system.h"

namespace nocflow::sim {
namespace {

TEST(ChildProcess, RunsOneSystemCElaborationPerChild) {
  const HwSpec hw = load_hw_config(std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/booksim8x8.yaml",
                                   {"topology.rows=1", "topology.cols=2"});
  std::vector<std::string> totals;
  for (int bytes : {16, 160, 1600}) {
    totals.push_back(run_in_child([&] {
      ProgramSet p(2);
      p.transfer(0, 1, -1, bytes);
      System sys("sys", hw, p);
      return std::to_string(sys.run().total_cycles);
    }));
  }
  // 1 flit of 16 bytes: 12 cycles through 2 routers plus one to the PE (as in System tests).
  // 10 and 100 flits stream behind it at no more than one flit per cycle, and with 4-flit
  // buffers at 4 flits per 5-cycle credit loop.
  EXPECT_EQ(totals[0], "13");
  EXPECT_GE(std::stoi(totals[1]), 13 + 9);
  EXPECT_GE(std::stoi(totals[2]), 13 + 99 * 5 / 4);
  EXPECT_LE(std::stoi(totals[2]), 13 + 99 * 5 / 4 + 16);
}

TEST(ChildProcess, ErrorsKeepTheirTypeAndMessage) {
  try {
    run_in_child([]() -> std::string { throw InputError("bad plan"); });
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "bad plan");
  }
  EXPECT_THROW(run_in_child([]() -> std::string { throw CheckError("lost flit"); }), CheckError);
  try {
    run_in_child([]() -> std::string {
      std::raise(SIGKILL);
      return "";
    });
    FAIL();
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("killed by signal 9"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace nocflow::sim
