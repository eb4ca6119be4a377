// SPDX-License-Identifier: MIT
// Every hardware parameter, declared once. configs/README.md is generated from this table by
// `nocflow config --reference`; a test fails when the two differ.
#include "noc/router/allocator.h"
#include "noc/router/routing.h"
#include "sim/config/param.h"

namespace nocflow::sim {

using noc::LinkSpec;
using noc::NiSpec;
using noc::RouterSpec;
using noc::TopologySpec;

namespace {
bool is_mesh(const HwSpec& h) { return h.topology.kind == "mesh"; }
}  // namespace

const std::vector<Param>& hw_params() {
  static const std::vector<Param> params = {
      // clock & data
      field("clock.frequency_ghz", &HwSpec::clock, &ClockSpec::frequency_ghz)
          .unit("GHz")
          .def(1.0)
          .range(0.001, 100)
          .doc("clock of the whole chip; every cycle count converts to seconds with it"),
      field("data.width_bytes", &HwSpec::data, &DataSpec::width_bytes)
          .unit("bytes")
          .def(std::int64_t{2})
          .range(1, 16)
          .doc("size of one activation or weight element (2 = fp16/bf16) of zoo networks; network "
               "files and ONNX models keep their own (elem_bytes, the tensors' data type), with a "
               "note, but for an ONNX model's floats under data.onnx_floats: width"),
      field("data.onnx_floats", &HwSpec::data, &DataSpec::onnx_floats)
          .def(std::string("file"))
          .choices({"file", "width"})
          .doc("an ONNX model's floating-point tensors (inputs, weights, activations): file = "
               "the size of their data type (4 bytes for an fp32 export); width = "
               "data.width_bytes each (an fp32 export run as fp16). Integer tensors keep theirs"),
      // topology
      field("topology.kind", &HwSpec::topology, &TopologySpec::kind)
          .def(std::string("mesh"))
          .choices({"mesh", "crossbar"})
          .doc("mesh: rows x cols routers, one PE each; crossbar: one switch all PEs attach to"),
      field("topology.rows", &HwSpec::topology, &TopologySpec::rows)
          .unit("routers")
          .def(std::int64_t{4})
          .range(1, 64)
          .doc("mesh rows")
          .only_if(is_mesh, "kind: mesh"),
      field("topology.cols", &HwSpec::topology, &TopologySpec::cols)
          .unit("routers")
          .def(std::int64_t{4})
          .range(1, 64)
          .doc("mesh columns")
          .only_if(is_mesh, "kind: mesh"),
      field("topology.ports", &HwSpec::topology, &TopologySpec::ports)
          .unit("PEs")
          .def(std::int64_t{16})
          .range(2, 64)
          .doc("PEs attached to the switch")
          .only_if([](const HwSpec& h) { return !is_mesh(h); }, "kind: crossbar"),
      // router
      field("router.preset", &HwSpec::router, &RouterSpec::preset)
          .def(std::string("booksim"))
          .choices({"booksim", "lookahead"})
          .doc("named defaults for the router.* keys below; explicit keys override it"),
      field("router.vcs", &HwSpec::router, &RouterSpec::vcs)
          .unit("VCs")
          .def(std::int64_t{4})
          .range(1, 64)
          .doc("virtual channels per input port; ports x VCs at most 256 (a mesh router: 51, a "
               "16-port crossbar: 16)"),
      field("router.buffer_depth", &HwSpec::router, &RouterSpec::buffer_depth)
          .unit("flits")
          .def(std::int64_t{4})
          .range(1, 4096)
          .doc("input buffer depth per VC"),
      field("router.routing_delay", &HwSpec::router, &RouterSpec::routing_delay)
          .unit("cycles")
          .def(std::int64_t{1})
          .range(1, 16)
          .doc("route computation stage (not used with lookahead routing)"),
      field("router.vc_alloc_delay", &HwSpec::router, &RouterSpec::vc_alloc_delay)
          .unit("cycles")
          .def(std::int64_t{1})
          .range(1, 16)
          .doc("VC allocation stage"),
      field("router.sw_alloc_delay", &HwSpec::router, &RouterSpec::sw_alloc_delay)
          .unit("cycles")
          .def(std::int64_t{1})
          .range(1, 16)
          .doc("switch allocation stage"),
      field("router.st_delay", &HwSpec::router, &RouterSpec::st_delay)
          .unit("cycles")
          .def(std::int64_t{1})
          .range(1, 16)
          .doc("switch traversal stage"),
      field("router.lookahead_routing", &HwSpec::router, &RouterSpec::lookahead_routing)
          .def(false)
          .doc("compute the route one router ahead, removing the route computation stage"),
      field("router.speculative", &HwSpec::router, &RouterSpec::speculative)
          .def(false)
          .doc("head flits bid for the switch in the same cycle as for a VC (speculative SA)"),
      field("router.routing", &HwSpec::router, &RouterSpec::routing)
          .def(std::string("xy"))
          .choices(noc::routing_names())
          .doc("routing function; xy/yx are dimension-order, west_first is adaptive and "
               "deadlock-free"),
      field("router.vc_allocator", &HwSpec::router, &RouterSpec::vc_allocator)
          .def(std::string("islip"))
          .choices(noc::allocator_names())
          .doc("VC allocator: islip, or separable input-first with round-robin arbiters"),
      field("router.sw_allocator", &HwSpec::router, &RouterSpec::sw_allocator)
          .def(std::string("islip"))
          .choices(noc::allocator_names())
          .doc("switch allocator: islip, or separable input-first with round-robin arbiters"),
      field("router.alloc_iterations", &HwSpec::router, &RouterSpec::alloc_iterations)
          .unit("iterations")
          .def(std::int64_t{1})
          .range(0, 8)
          .doc("iSLIP iterations per cycle; 0 = by topology: 1 on a mesh router, ceil(log2 "
               "ports) on a crossbar switch (4 for 16 ports), as iSLIP needs to converge on a "
               "maximal matching (the booksim preset sets 1, lookahead 0)"),
      // link
      field("link.width_bytes", &HwSpec::link, &LinkSpec::width_bytes)
          .unit("bytes")
          .def(std::int64_t{16})
          .range(1, 4096)
          .doc("payload bytes per flit"),
      field("link.latency", &HwSpec::link, &LinkSpec::latency)
          .unit("cycles")
          .def(std::int64_t{1})
          .range(1, 64)
          .doc("router-to-router link (and NI channel) latency"),
      // network interface
      field("ni.injection_queue_flits", &HwSpec::ni, &NiSpec::injection_queue_flits)
          .unit("flits")
          .def(std::int64_t{0})
          .range(0, 1 << 30)
          .doc("source queue per node; 0 = unbounded (BookSim); a message enters if it fits "
               "beside the flits queued, a longer one only into an empty queue (a PE's send "
               "waits until then)"),
      field("ni.ejection_queue_flits", &HwSpec::ni, &NiSpec::ejection_queue_flits)
          .unit("flits")
          .def(std::int64_t{0})
          .range(0, 1 << 30)
          .doc("reassembly queue per node; 0 = the sink always accepts (BookSim). It binds only "
               "behind a "
               "consumer slower than one flit per cycle: the PEs and traffic sinks take one flit "
               "per cycle, "
               "so today no command is changed by it"),
      field("ni.max_packet_flits", &HwSpec::ni, &NiSpec::max_packet_flits)
          .unit("flits")
          .def(std::int64_t{16})
          .range(1, 65535)
          .doc("a message (a PE-to-PE transfer) is cut into packets of at most this many flits"),
      field("ni.channels", &HwSpec::ni, &NiSpec::channels)
          .unit("messages")
          .def(std::int64_t{1})
          .range(1, noc::kMaxNiChannels)
          .doc(
              "messages a source NI injects at once (DMA channels), each a packet at a time on its "
              "own injection VC, their flits interleaved round-robin, oldest first; they go to "
              "distinct destinations, since a message waits for any older one to its destination "
              "(the pair's messages leave in order); 1 = one after another"),
      // PE
      field("pe.macs_per_cycle", &HwSpec::pe, &PeSpec::macs_per_cycle)
          .unit("MACs/cycle")
          .def(std::int64_t{256})
          .range(1, 1e9)
          .doc("peak MAC rate of one PE"),
      field("pe.adds_per_cycle", &HwSpec::pe, &PeSpec::adds_per_cycle)
          .unit("adds/cycle")
          .def(std::int64_t{64})
          .range(1, 1e9)
          .doc("adder rate for reductions (partial sums, element-wise ops)"),
      field("pe.sram_bytes", &HwSpec::pe, &PeSpec::sram_bytes)
          .unit("bytes")
          .def(std::int64_t{1} << 20)
          .range(1024, 1e12)
          .doc("local SRAM capacity of one PE (suffixes KiB, MiB, GiB accepted)"),
      field("pe.sram_bytes_per_cycle", &HwSpec::pe, &PeSpec::sram_bytes_per_cycle)
          .unit("bytes/cycle")
          .def(std::int64_t{64})
          .range(1, 1e9)
          .doc("local SRAM bandwidth"),
      field("pe.array_rows", &HwSpec::pe, &PeSpec::array_rows)
          .unit("MACs")
          .def(std::int64_t{0})
          .range(0, 4096)
          .doc("MAC array rows for utilisation effects; 0 = no array shape (then pe.array_cols "
               "is 0 too)"),
      field("pe.array_cols", &HwSpec::pe, &PeSpec::array_cols)
          .unit("MACs")
          .def(std::int64_t{0})
          .range(0, 4096)
          .doc("MAC array columns; 0 = no array shape (then pe.array_rows is 0 too)"),
      // energy
      field("energy.mac_pj", &HwSpec::energy, &EnergySpec::mac_pj)
          .unit("pJ/MAC")
          .def(0.5)
          .range(0, 1e6)
          .doc("energy of one multiply-accumulate"),
      field("energy.sram_pj_per_byte", &HwSpec::energy, &EnergySpec::sram_pj_per_byte)
          .unit("pJ/byte")
          .def(1.0)
          .range(0, 1e6)
          .doc("energy per byte read or written in SRAM"),
      field("energy.hop_pj_per_byte", &HwSpec::energy, &EnergySpec::hop_pj_per_byte)
          .unit("pJ/byte/hop")
          .def(2.0)
          .range(0, 1e6)
          .doc("energy per byte per hop (a router-to-router link, or a crossbar's switch), whole "
               "flits "
               "counted (the seed uses 1-5)"),
      // lowering
      field("lowering.all_gather", &HwSpec::lowering, &LoweringSpec::all_gather)
          .def(std::string("direct"))
          .choices({"direct", "ring", "auto"})
          .doc("3 or more consumer PEs that each need all of an input they hold between them "
               "in equal pieces (the OUTP peers of one block): direct = every piece sent to "
               "every peer at once; ring = a ring all-gather, n - 1 rounds of one piece to the "
               "ring successor; auto = per edge, rings where the linkload model (uncalibrated) "
               "prices them lower. The linkload model prices what runs"),
      // partition choices
      field("partition.splits", &HwSpec::partition, &PartitionSpec::splits)
          .def(std::string("divisors"))
          .choices({"divisors", "balanced"})
          .doc("the factors the optimizer offers along each dimension of a layer: divisors = "
               "those that divide it (equal blocks); balanced = also every divisor of the PE "
               "count up to the dimension, cut into blocks that differ by one element (7 rows "
               "in 4: 1, 2, 2, 2; every node is timed as the largest block). Plans with such "
               "factors replay under either"),
      // run control
      field("run.watchdog_cycles", &HwSpec::run, &RunSpec::watchdog_cycles)
          .unit("cycles")
          .def(std::int64_t{10000})
          .range(10, 1e12)
          .doc("a run stops with an error when flits are in flight and none moved this long; "
               "longer than one hop (link.latency + the router's delays)"),
  };
  return params;
}

const std::vector<Preset>& router_presets() {
  static const std::vector<Preset> presets = {
      {"booksim",
       "BookSim2's input-queued router: 4 one-cycle stages (RC, VA, SA, ST), iSLIP allocators",
       {{"router.routing_delay", std::int64_t{1}},
        {"router.vc_alloc_delay", std::int64_t{1}},
        {"router.sw_alloc_delay", std::int64_t{1}},
        {"router.st_delay", std::int64_t{1}},
        {"router.lookahead_routing", false},
        {"router.speculative", false},
        {"router.vc_allocator", std::string("islip")},
        {"router.sw_allocator", std::string("islip")},
        {"router.alloc_iterations", std::int64_t{1}}}},
      {"lookahead",
       "2-stage router: lookahead routing and speculative switch allocation (VA+SA, ST), "
       "iSLIP iterations by topology",
       {{"router.routing_delay", std::int64_t{1}},
        {"router.vc_alloc_delay", std::int64_t{1}},
        {"router.sw_alloc_delay", std::int64_t{1}},
        {"router.st_delay", std::int64_t{1}},
        {"router.lookahead_routing", true},
        {"router.speculative", true},
        {"router.vc_allocator", std::string("islip")},
        {"router.sw_allocator", std::string("islip")},
        {"router.alloc_iterations", std::int64_t{0}}}},
  };
  return presets;
}

std::string format_value(const ParamValue& v) {
  struct Visitor {
    std::string operator()(std::int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const {
      char buf[32];
      std::snprintf(buf, sizeof buf, "%.10g", d);
      std::string s = buf;
      if (s.find_first_of(".eE") == std::string::npos) s += ".0";
      return s;
    }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::string& s) const { return s; }
  };
  return std::visit(Visitor{}, v);
}

const Param* find_param(const std::string& path) {
  for (const auto& p : hw_params())
    if (p.path == path) return &p;
  return nullptr;
}

}  // namespace nocflow::sim
