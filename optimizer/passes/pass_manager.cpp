// SPDX-License-Identifier: MIT
#include "optimizer/passes/pass_manager.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <stdexcept>

#include "noc/base/error.h"
#include "noc/base/names.h"
#include "optimizer/graph/shape_inference.h"
#include "optimizer/passes/autodiff.h"

namespace nocflow::optimizer {
namespace {

struct PassEntry {
  std::string_view name;
  std::unique_ptr<Pass> (*make)();
};

const PassEntry kPasses[] = {
    {"identity", make_identity_elimination}, {"constfold", make_constant_folding},
    {"algebra", make_algebra},               {"cse", make_cse},
    {"dce", make_dce},                       {"bnfold", make_batchnorm_folding},
    {"fuse", make_fusion},
};

}  // namespace

std::vector<std::string> pass_names() {
  std::vector<std::string> out;
  for (const auto& p : kPasses) out.emplace_back(p.name);
  return out;
}

std::vector<std::string> default_pass_names() { return pass_names(); }

void forward_value(Graph& g, NodeId from, NodeId to) {
  const bool takes_name = g.is_output(from) && !g.is_output(to) &&
                          g.node(to).kind != OpKind::Input && g.node(to).kind != OpKind::Constant;
  g.replace_all_uses(from, to);
  if (!takes_name) return;
  std::string name = g.node(from).name;
  g.remove_node(from);
  g.rename(to, std::move(name));
}

std::unique_ptr<Pass> make_pass(std::string_view name) {
  for (const auto& p : kPasses)
    if (p.name == name) return p.make();
  throw InputError(unknown_name_message("pass", name, pass_names()) +
                   (name == "autodiff" ? "; autodiff runs with --train OPTIMIZER" : ""));
}

std::vector<std::string> parse_pass_list(const std::string& text) {
  std::string spec = text;
  spec.erase(0, spec.find_first_not_of(' '));
  spec.erase(spec.find_last_not_of(' ') + 1);
  if (spec.empty() && !text.empty())  // blanks, as an unset variable in quotes leaves
    throw InputError("a list of blanks: give default, none or a list of passes (" +
                     join(pass_names(), ", ") + ")");
  if (spec == "default") return default_pass_names();
  if (spec.empty() || spec == "none") return {};
  std::vector<std::string> out;
  std::size_t start = 0;
  while (start <= spec.size()) {
    const std::size_t comma = spec.find(',', start);
    std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
    item.erase(0, item.find_first_not_of(' '));  // "dce, cse" as written in prose
    item.erase(item.find_last_not_of(' ') + 1);
    if (item == "default" || item == "none")
      throw InputError("'" + item + "' stands alone: give default, none or a list of passes (" +
                       join(pass_names(), ", ") + ")");
    make_pass(item);  // validates the name
    out.push_back(item);
    if (comma == std::string::npos) break;
    start = comma + 1;
  }
  return out;
}

std::string canonical_pass_list(const std::string& spec) {
  const std::vector<std::string> names = parse_pass_list(spec);
  if (names.empty()) return "none";
  // parse_pass_list read it: a list never names "default", so a spec that has it is the word.
  return spec.find("default") != std::string::npos ? "default" : join(names, ",");
}

std::vector<std::string> parse_passes_option(const std::string& spec) {
  try {
    return parse_pass_list(spec);
  } catch (const InputError& e) {
    throw InputError(std::string("--passes: ") + e.what());
  }
}

PassManager::PassManager(const std::vector<std::string>& names, int max_rounds)
    : max_rounds_(max_rounds) {
  for (const auto& n : names) passes_.push_back(make_pass(n));
}

std::vector<PassStat> PassManager::run(Graph& graph) {
  std::vector<PassStat> stats;
  if (passes_.empty()) return stats;
  for (int round = 1; round <= max_rounds_; ++round) {
    bool any = false;
    for (auto& pass : passes_) {
      PassStat s;
      s.round = round;
      s.pass = std::string(pass->name());
      s.nodes_before = graph.num_nodes();
      const auto t0 = std::chrono::steady_clock::now();
      s.changed = pass->run(graph);
      if (s.changed) infer_shapes(graph);
      s.millis = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      s.nodes_after = graph.num_nodes();
      any = any || s.changed;
      stats.push_back(s);
    }
    if (!any) return stats;
  }
  throw std::logic_error("passes did not reach a fixpoint in " + std::to_string(max_rounds_) +
                         " rounds");
}

std::vector<PassStat> run_passes(Graph& graph, const std::string& spec,
                                 const TrainingOptions* train) {
  std::vector<std::string> names = parse_passes_option(spec);
  // A training graph read back from a file (io/graph_file.h) is differentiated already.
  const bool trained = is_training_graph_name(graph.name());
  if (trained && train)
    throw InputError("--train: " + graph.name() +
                     " is a training graph already (saved with --train); leave --train out");
  if (!train && !trained) return PassManager(names).run(graph);
  auto drop = [&](std::string_view name) {
    const auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) return false;
    names.erase(it);
    return true;
  };
  if (drop("bnfold") && spec != "default")
    throw InputError(
        "--passes: bnfold folds batch norms into the weights, for inference only; "
        "leave it out when training");
  if (trained) return PassManager(names).run(graph);
  // Before autodiff without fuse (it differentiates unfused operators); after it, every pass
  // again: the backward graph has its own duplicates (two transposes of one weight) and dead
  // ends, and a training graph saved and read back (which reruns them) stays the same graph.
  const std::vector<std::string> after = names;
  drop("fuse");
  std::vector<PassStat> stats = PassManager(names).run(graph);
  PassStat s;
  s.round = stats.empty() ? 1 : stats.back().round;
  s.pass = "autodiff";
  s.nodes_before = graph.num_nodes();
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<std::string> outputs;  // the forward's, by name
  for (const NodeId o : graph.outputs()) outputs.push_back(graph.node(o).name);
  graph = training_graph(graph, *train);
  // A training step computes what leads to a weight update (its outputs): a forward output that
  // does not, DCE removes below; it is noted.
  const std::vector<bool> needed = upstream(graph, graph.outputs());
  for (const std::string& name : outputs)
    if (const auto id = graph.find(name); id && !needed[*id])
      graph.add_note("output '" + name +
                     "' leads to no parameter: the training step does not compute it");
  s.millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.nodes_after = graph.num_nodes();
  s.changed = true;
  stats.push_back(s);
  for (PassStat f : PassManager(after).run(graph)) {
    f.round += s.round;
    stats.push_back(f);
  }
  return stats;
}

std::string format_pass_stats(const std::vector<PassStat>& stats) {
  std::string out = "round  pass        nodes before  nodes after  nodes  changed  time (ms)\n";
  char line[160];
  for (const auto& s : stats) {  // nodes: +N added (autodiff), -N removed
    const long long delta =
        static_cast<long long>(s.nodes_after) - static_cast<long long>(s.nodes_before);
    const std::string nodes = delta > 0 ? "+" + std::to_string(delta) : std::to_string(delta);
    std::snprintf(line, sizeof line, "%5d  %-10s  %12zu  %11zu  %5s  %-7s  %9.3f\n", s.round,
                  s.pass.c_str(), s.nodes_before, s.nodes_after, nodes.c_str(),
                  s.changed ? "yes" : "no", s.millis);
    out += line;
  }
  return out +
         "(nodes: every node of the graph, inputs and constants too; the layers are the rest)\n";
}

}  // namespace nocflow::optimizer
