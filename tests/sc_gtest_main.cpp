// SPDX-License-Identifier: MIT
// GoogleTest entry point for tests that elaborate SystemC: SystemC's library owns main() and
// calls sc_main(). Each test runs in its own process (gtest_discover_tests), because SystemC
// can elaborate only once per process.
#include <gtest/gtest.h>

#include <systemc>

#include <cstdlib>

int main(int argc, char** argv) {
  setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0);  // keeps test listing output clean
  return sc_core::sc_elab_and_sim(argc, argv);
}

extern "C" int sc_main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
