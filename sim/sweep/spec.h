// SPDX-License-Identifier: MIT
#pragma once
// A sweep spec: a base hardware config and axes whose cartesian product is the set of points.
//
//   hw: ../hw/mesh8x8.yaml          # base config, relative to the spec file
//   set: {pe.sram_bytes: 67108864}  # fixed overrides of config keys (optional)
//   axes:                           # in this order: the first axis varies slowest
//     mesh: [2x2, 4x4, 8x8]         # RxC (or k for k x k); a crossbar's ports
//     network: [zoo:resnet50, ../networks/vgg5.yaml]
//     solver: [greedy, dp]
//     cost_model: linkload          # one value: a fixed setting, still a results.csv column
//     router.vcs: [2, 4]            # any config key (see configs/README.md)
//
// Axes: mesh, topology (mesh | crossbar), network, batch, solver, cost_model, placement (snake |
// search, as `optimize --placement`), mode (dataflow | barrier), passes, train (none | sgd |
// momentum | adam), and every config key. Settings no axis names keep their defaults: the base
// config's topology, solver dp, cost model linkload, placement snake, mode dataflow, batch 1,
// passes default, inference. Every value of every point is checked when the spec is loaded, so a
// bad spec fails before any simulation with file:line:col.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sim/config/hw_spec.h"

namespace nocflow::sim {

struct SweepAxis {
  std::string name;
  std::vector<std::string> values;
};

struct SweepSpec {
  std::string file;                    ///< the spec's path
  std::string text;                    ///< the spec's bytes (--resume checks it is unchanged)
  std::string hw;                      ///< base config path (resolved against the spec's folder)
  std::vector<std::string> overrides;  ///< `set:` as key=value
  std::vector<SweepAxis> axes;
  /// A config key's value that does not load on the base config with the fixed overrides
  /// alone (router.vcs: 32 on a crossbar base, beside a topology: mesh axis; pe.array_rows: 0
  /// beside a pe.array_cols axis): the points check it in their own machines, and its error,
  /// at the value's place, is the spec's error if no point can take it.
  struct ValueError {
    std::size_t axis = 0;
    std::string value, message;
  };
  std::vector<ValueError> alone_errors;
};

/// One point: its values (one per axis) and the settings they resolve to.
struct SweepPoint {
  std::size_t index = 0;
  std::string key;  ///< "mesh=8x8 network=zoo:resnet50 solver=dp": identifies the point in results
  std::vector<std::string> values;
  HwSpec hw;
  std::string network;
  bool network_file() const { return network.rfind("zoo:", 0) != 0; }  ///< not a zoo network
  std::int64_t batch = 0;  ///< 0: not an axis (a zoo network 1, a network file its own)
  std::string solver = "dp", cost_model = "linkload", placement = "snake", mode = "dataflow",
              passes = "default";
  std::string train;  ///< optimizer of the training graph, "" for inference
  /// The index of an earlier point that runs the same (values spelt apart that mean the same
  /// machine and settings: a crossbar's 16 ports from the mesh shapes 4x4 and 2x8).
  std::optional<std::size_t> same_run_as;
};

/// Reads and checks a spec; InputError with file:line:col on any problem.
SweepSpec load_sweep_spec(const std::string& file);

/// Every point in order (first axis slowest), each checked on its own machine (the base config,
/// the fixed overrides, its config keys and its topology): InputError naming the first point
/// that does not load, or the place of a value that no point can take.
std::vector<SweepPoint> sweep_points(const SweepSpec& spec);

/// Axis names other than config keys.
const std::vector<std::string>& sweep_axis_names();

}  // namespace nocflow::sim
