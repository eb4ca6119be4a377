// SPDX-License-Identifier: MIT
// `nocflow inspect`: load a network (zoo, YAML or ONNX), run passes, print the per-layer table,
// optionally write JSON and Graphviz (front end, issue 4).
#include <chrono>
#include <iostream>
#include <set>

#include "noc/base/error.h"
#include "noc/base/limits.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/io/graph_file.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/report/layer_report.h"
#include "sim/cli/command.h"
#include "sim/output/output_file.h"

namespace nocflow::sim::cli {

namespace {

/// --elem-bytes for a network file, which has its own element size: InputError unless every
/// input of `graph` (read from `network`) has `bytes`-byte elements, when it changes nothing.
void check_own_element_size(const optimizer::Graph& graph, const std::string& network, int bytes) {
  const std::set<int> sizes = optimizer::input_element_sizes(graph);
  if (sizes == std::set<int>{bytes}) return;
  std::string own;
  for (const int b : sizes) own += (own.empty() ? ": " : ", ") + std::to_string(b);
  throw InputError(
      std::string("--elem-bytes: only zoo networks (and an ONNX model's floats) take ") +
      "an element size; " + network + " has its own (a YAML network's elem_bytes" + own +
      "), which --elem-bytes may only repeat");
}

}  // namespace

void add_inspect_command(CLI::App& app, Action& action) {
  auto* cmd = app.add_subcommand("inspect", "load a network, run graph passes, print its layers");
  struct Options {
    std::string network;
    std::string passes = "default";
    bool pass_stats = false;
    std::string dot;
    std::string json;
    std::string save;
    std::int64_t batch = 0;  // 0: not given
    int elem_bytes = 4;
    std::string train;
  };
  auto opts = std::make_shared<Options>();
  cmd->add_option("--network", opts->network, network_help())
      ->required()
      ->type_name("X");
  std::string names;
  for (const std::string& n : optimizer::pass_names()) names += (names.empty() ? "" : ", ") + n;
  cmd->add_option("--passes", opts->passes,
                  "default | none | comma-separated pass names (" + names +
                      "), run to a fixpoint")
      ->type_name("LIST")
      ->capture_default_str();
  cmd->add_flag("--print-pass-stats", opts->pass_stats, "print node counts before/after each pass");
  cmd->add_option("--dot", opts->dot, "write the graph as Graphviz dot")->type_name("FILE");
  cmd->add_option("--json", opts->json, "write the per-layer table as JSON")->type_name("FILE");
  cmd->add_option("--save", opts->save,
                  "write the graph after passes (and autodiff) as a graph file that --network "
                  "FILE reads back")
      ->type_name("FILE.yaml");
  cmd->add_option("--batch", opts->batch, kBatchHelp)->check(in_range(1, kMaxBatch));
  auto* elem_bytes =
      cmd->add_option("--elem-bytes", opts->elem_bytes,
                      "bytes per element of a zoo network, or of an ONNX model's floating-point "
                      "tensors (as data.onnx_floats: width; its integers keep their size); a YAML "
                      "network has its own, which it may only repeat")
          ->capture_default_str()
          ->check(in_range(1, 64));
  cmd->add_option("--train", opts->train,
                  "the training graph instead: autodiff after the cleanup passes and before "
                  "fusion, weight updates by this "
                  "optimizer (sgd, momentum, adam)")
      ->type_name("OPTIMIZER")
      ->check(one_of("optimizer", optimizer::optimizer_names()));
  cmd->callback([opts, elem_bytes, &action] {
    if (const std::string ext = std::filesystem::path(opts->save).extension().string();
        !opts->save.empty() && ext != ".yaml" && ext != ".yml")
      throw CLI::ValidationError("--save", "writes a graph file, which --network reads back by "
                                           "its name: give FILE.yaml, not " + opts->save);
    {  // two outputs into one file, or one into the network's: it would be overwritten
      namespace fs = std::filesystem;
      const std::pair<const char*, const std::string*> outs[] = {
          {"--dot", &opts->dot}, {"--json", &opts->json}, {"--save", &opts->save}};
      if (opts->network.rfind("zoo:", 0) != 0)
        for (const auto& [option, file] : outs)
          if (!file->empty() && fs::weakly_canonical(*file) == fs::weakly_canonical(opts->network))
            throw CLI::ValidationError(option, "writes " + *file +
                                                   ", the network --network reads, "
                                                   "which it would overwrite: give another file");
      for (std::size_t i = 0; i < 3; ++i)
        for (std::size_t j = i + 1; j < 3; ++j)
          if (!outs[i].second->empty() && !outs[j].second->empty() &&
              fs::weakly_canonical(*outs[i].second) == fs::weakly_canonical(*outs[j].second))
            throw CLI::ValidationError(outs[j].first, "writes " + *outs[j].second + ", as " +
                                                          outs[i].first + " does: give each its own file");
    }
    const bool onnx_floats = elem_bytes->count() > 0 && optimizer::is_onnx_file(opts->network);
    // A network file has its own element size: --elem-bytes may only repeat it (checked once
    // the file is read), as --batch may only repeat its batch.
    const bool own_size =
        elem_bytes->count() > 0 && opts->network.rfind("zoo:", 0) != 0 && !onnx_floats;
    action = [opts, onnx_floats, own_size] {
      using namespace optimizer;
      const auto names = parse_passes_option(opts->passes);
      const auto t0 = std::chrono::steady_clock::now();
      Graph graph = load_network(opts->network, ZooOptions{opts->batch, opts->elem_bytes,
                                                           onnx_floats ? opts->elem_bytes : 0});
      if (own_size) check_own_element_size(graph, opts->network, opts->elem_bytes);
      const auto t1 = std::chrono::steady_clock::now();
      const TrainingOptions train{opts->train};
      const auto stats = run_passes(graph, opts->passes, opts->train.empty() ? nullptr : &train);
      const auto t2 = std::chrono::steady_clock::now();
      // Files first: one that cannot be written fails the run before it prints anything.
      std::string wrote;
      for (const auto& [file, text] : {std::pair{opts->json, &graph_json}, std::pair{opts->dot, &graph_dot},
                                       std::pair{opts->save, &graph_yaml}})
        if (!file.empty()) {
          write_file(file, (*text)(graph));
          wrote += (wrote.empty() ? "" : ", ") + file;
        }
      std::cout << layer_table(graph);
      for (const std::string& note : graph.notes()) std::cout << "note: " << note << "\n";
      if (opts->pass_stats) {
        using ms = std::chrono::duration<double, std::milli>;
        std::cout << "\npasses: " << (names.empty() ? "none" : opts->passes) << "\n"
                  << format_pass_stats(stats) << "load " << ms(t1 - t0).count() << " ms, passes "
                  << ms(t2 - t1).count() << " ms\n";
      }
      if (!wrote.empty()) std::cout << "nocflow: wrote " << wrote << "\n";
      return 0;
    };
  });
}

}  // namespace nocflow::sim::cli
