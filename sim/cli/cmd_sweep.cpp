// SPDX-License-Identifier: MIT
// `nocflow sweep`: a design-space sweep from a YAML spec (sim/sweep/spec.h), each point solved
// and replayed in a child process, --jobs at a time; under mpirun the points are shared among
// the ranks and rank 0 writes results.csv (issue 7).
#include <iostream>
#include <set>
#include <tuple>
#include <utility>

#include "noc/base/error.h"
#include "optimizer/frontend/load_network.h"
#include "sim/cli/command.h"
#include "sim/lower/workload_setup.h"
#include "sim/sweep/mpi.h"
#include "sim/sweep/spec.h"
#include "sim/sweep/sweep.h"

namespace nocflow::sim::cli {
namespace {

struct SweepArgs {
  std::string spec;
  SweepOptions options;
  bool list = false;
};

SweepSpec read_spec(const std::string& file) {
  try {
    return load_sweep_spec(file);
  } catch (const QuietInputError&) {
    throw;
  } catch (const InputError& e) {  // every rank reads the same file: rank 0 alone says so
    if (launcher_rank() > 0) throw QuietInputError(e.what());
    throw;
  }
}

int run(const SweepArgs& a) {
  const SweepSpec spec = read_spec(a.spec);
  const std::vector<SweepPoint> points = sweep_points(spec);
  for (const SweepPoint& p : points)
    if (p.same_run_as)
      std::cout << "note: point " << p.index << " (" << p.key << ") runs the same as point "
                << *p.same_run_as << " (" << points[*p.same_run_as].key
                << "): both run, with the same results" << std::endl;
  // A network file keeps its own element size, as in `simulate`: say so once per file and size;
  // what its front end noted (an ONNX opset newer than nocflow knows), once per file.
  std::set<std::tuple<std::string, int, int>> noted;
  std::set<std::string> read;
  for (const SweepPoint& p : points) {
    if (!p.network_file() ||
        !noted.insert({p.network, p.hw.data.width_bytes, p.hw.data.onnx_float_bytes()}).second)
      continue;
    const optimizer::Graph graph = optimizer::load_network(
        p.network, optimizer::ZooOptions{0, p.hw.data.width_bytes, p.hw.data.onnx_float_bytes()});
    if (read.insert(p.network).second)
      for (const std::string& note : graph.notes()) std::cout << "note: " << note << std::endl;
    if (const std::string note = element_size_note(graph, p.hw, p.network); !note.empty())
      std::cout << "note: " << p.network << ": " << note.substr(note.find(':') + 2) << std::endl;
  }
  if (a.list) {
    for (const auto& p : points)
      std::cout << p.index << "  " << p.key << "  (" << p.hw.topology.num_nodes() << " PEs)\n";
    std::cout << points.size() << " points\n";
    return 0;
  }
  if (a.options.out.empty()) throw InputError("--out is required (unless --list)");
  const Cluster cluster = launched_under_mpi() ? mpi_cluster() : Cluster{};
  return run_sweep(spec, points, a.options, cluster);
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("sweep", "run a design-space sweep (YAML spec of axes); mpirun shares the points");
  auto a = std::make_shared<SweepArgs>();
  cmd->add_option("--spec", a->spec, "sweep spec YAML (see configs/sweeps/README.md)")->required()->type_name("FILE");
  cmd->add_option(
         "--jobs", a->options.jobs,
         "points run at once on this machine (per MPI rank), those with the most PEs first")
      ->capture_default_str()
      ->check(in_range(1, 256));  // run_in_children's limit, as validate's
  cmd->add_option("--out", a->options.out, "output folder (required unless --list)")
      ->type_name("DIR");
  cmd->add_flag("--resume", a->options.resume, "finish a sweep in --out: skip points already there");
  cmd->add_flag("--list", a->list,
                "print the points in point order (results.csv's) and exit (runs nothing)")
      ->excludes("--resume", "--jobs", "--out");
  cmd->add_flag("--quiet", a->options.quiet, "no progress output (notes and the wrote line stay)");
  cmd->callback([a, &action] { action = [a] { return run(*a); }; });
}

}  // namespace nocflow::sim::cli
