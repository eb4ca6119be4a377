// SPDX-License-Identifier: MIT
// The linkload model's lone-packet terms against the NoC: a packet of L flits over R routers
// arrives LinkloadModel::route_cycles(R) + HwDesc::stream_cycles(L) − 1 cycles after it was
// created (the message is usable the cycle after), for any link latency, buffer depth and
// router pipeline the configs can set.
#include <gtest/gtest.h>

#include "noc/network/network.h"
#include "optimizer/cost/linkload_model.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/workload_setup.h"

namespace nocflow::sim {
namespace {

const std::string kDir = std::string(NOCFLOW_SOURCE_DIR);

struct Arrival : noc::DeliveryListener {
  noc::Cycle latency = -1;
  void delivered(const noc::Packet& p, noc::Cycle now) override { latency = now - p.created; }
};

noc::Cycle lone_packet(const HwSpec& hw, int src, int dst, int flits) {
  noc::Network net(hw.noc());
  Arrival a;
  net.set_listener(&a);
  net.send(src, {dst, flits, 0});
  net.drain();
  return a.latency;
}

TEST(LonePacket, ArrivesAfterTheRouteAndItsCreditLoops) {
  int loop_bound = 0;
  for (const char* config : {"booksim8x8.yaml", "mesh4x4.yaml", "crossbar16.yaml"})
    for (const std::string latency : {"1", "3"})
      for (const std::string depth : {"2", "4", "8"}) {
        const HwSpec hw =
            load_hw_config(kDir + "/configs/hw/" + config,
                           {"link.latency=" + latency, "router.buffer_depth=" + depth});
        const optimizer::HwDesc desc = hw_desc_of(hw);
        const noc::Topology topo = noc::Topology::build(hw.topology);
        const int far = topo.num_nodes() - 1;
        for (int flits : {1, 2, 3, 5, 8, 17, 40}) {
          const double expected =
              optimizer::LinkloadModel::route_cycles(topo.routers_on_path(0, far), desc) +
              desc.stream_cycles(flits) - 1;
          EXPECT_EQ(static_cast<double>(lone_packet(hw, 0, far, flits)), expected)
              << config << " link.latency=" << latency << " buffer_depth=" << depth
              << " L=" << flits;
          loop_bound += desc.stream_cycles(flits) > flits;
        }
      }
  EXPECT_GT(loop_bound, 20);  // the credit loop, not the link, sets many of them
}

}  // namespace
}  // namespace nocflow::sim
