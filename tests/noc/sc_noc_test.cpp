// SPDX-License-Identifier: MIT
// The SystemC shell: the kernel-driven network gives exactly the plain run's results, sleeps
// through idle stretches, and passes CheckError through with its type.
#include <gtest/gtest.h>

#include "noc/base/error.h"
#include "noc/sc/noc_module.h"
#include "tests/noc/noc_test_util.h"

namespace nocflow::noc {
namespace {

TEST(ScNoc, KernelDrivenRunEqualsPlainRun) {
  TrafficOptions o;
  o.rate = 0.2;
  o.packet_flits = 4;
  o.sample_period = 2000;
  Network plain_net(testing::booksim_spec(4, 4));
  const TrafficResult plain = testing::run_plain(plain_net, o);

  Network net(testing::booksim_spec(4, 4));
  NocModule top("noc", net, 1.0);
  const TrafficResult sc = run_traffic(net, o, [&](Cycle c) { top.run_until(c); });
  EXPECT_EQ(sc.avg_packet_latency, plain.avg_packet_latency);
  EXPECT_EQ(sc.flits_injected, plain.flits_injected);
  EXPECT_EQ(sc.cycles, plain.cycles);
  // SystemC time advanced with the network, one nanosecond per cycle at 1 GHz; the kernel
  // stops at the last cycle evaluated, cycles - 1.
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(static_cast<double>(sc.cycles - 1), sc_core::SC_NS));
}

TEST(ScNoc, IdleStretchesCostNoEvaluations) {
  Network net(testing::booksim_spec(4, 4));
  NocModule top("noc", net, 2.0);
  net.send(0, {15, 1, 0});
  top.run_until(1'000'000);
  EXPECT_EQ(net.now(), 1'000'000);
  EXPECT_EQ(net.packets_delivered(), 1);
  EXPECT_EQ(net.router_steps(), 7 * 3);  // 7 routers, 3 busy cycles each (RC, VA, SA)
  EXPECT_EQ(sc_core::sc_time_stamp(), sc_core::sc_time(500'000, sc_core::SC_NS));
}

TEST(ScNoc, CheckErrorsKeepTheirTypeThroughTheKernel) {
  NocSpec spec = testing::booksim_spec(2, 2);
  spec.router.vcs = 1;
  spec.router.buffer_depth = 1;
  spec.watchdog_cycles = 50;
  spec.ni.ejection_queue_flits = 1;
  Network net(spec);
  NocModule top("noc", net, 1.0);
  net.set_sink_interval(3, 1'000'000);  // a consumer that (almost) never drains
  for (int i = 0; i < 4; ++i) net.send(0, {3, 8, 0});
  EXPECT_THROW(top.run_until(100'000), CheckError);
}

}  // namespace
}  // namespace nocflow::noc
