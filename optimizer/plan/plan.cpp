// SPDX-License-Identifier: MIT
#include "optimizer/plan/plan.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>
#include <vector>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/names.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/cost/paper_model.h"
#include "optimizer/io/yaml_file.h"
#include "optimizer/passes/pass_manager.h"

namespace nocflow::optimizer {

Plan make_plan(const PartitionSetup& s, const std::vector<int>& x, const HwDesc& hw,
               const CostModel& model, const std::string& solver) {
  Plan plan;
  plan.network = s.workload.graph ? s.workload.graph->name() : "";
  plan.cost_model = model.name();
  plan.solver = solver;
  plan.pes = hw.num_pes();
  plan.topology = hw.topology.name();
  plan.activation_bytes = activation_bytes(s.workload);
  auto chosen = [&](int l) { return s.choices[static_cast<std::size_t>(l)][static_cast<std::size_t>(x[static_cast<std::size_t>(l)])]; };
  for (std::size_t l = 0; l < s.workload.layers.size(); ++l) {
    const Layer& layer = s.workload.layers[l];
    const Choice c = chosen(static_cast<int>(l));
    const Cost cost = model.layer_cost(layer, c);
    plan.layers.push_back(
        {layer.name, layer.op, c, place(c, hw.grid()).pe, cost.cycles, cost.energy_pj});
    plan.compute_cycles += cost.cycles;
    plan.energy_pj += cost.energy_pj;
  }
  for (const LayerEdge& e : s.workload.edges) {
    const Layer& src = s.workload.layers[static_cast<std::size_t>(e.src)];
    const Layer& dst = s.workload.layers[static_cast<std::size_t>(e.dst)];
    const Choice ci = chosen(e.src), cj = chosen(e.dst);
    const Cost cost = model.edge_cost(s.workload, e, ci, cj);
    plan.edges.push_back({src.name, dst.name, e.input, to_string(redist_type(src, ci, dst, cj)),
                          cost.bytes, cost.cycles, cost.energy_pj});
    plan.redistribution_cycles += cost.cycles;
    plan.energy_pj += cost.energy_pj;
  }
  return plan;
}

std::string plan_dot(const Plan& p) {
  // Fill per dimension; spatial splits share a hue. Index = PartDim.
  static constexpr const char* kFill[] = {"#ffd8a8", "#a5d8ff", "#b2f2bb", "#b2f2bb", "#eebefa"};
  auto num = [](double v) { return fixed(v, v == std::floor(v) ? 0 : 1); };
  std::string out =
      "digraph " + dot_string(p.network) + " {\n  rankdir=TB;\n  label=" +
      dot_string(p.network + " on " + p.topology + ": " + p.solver + " / " + p.cost_model +
                 ", predicted " + num(p.total_cycles()) + " cycles" +
                 (p.pipelined() ? " per micro-batch over all stages" : "") + " (compute " +
                 num(p.compute_cycles) + ", redistribution " + num(p.redistribution_cycles) + ")" +
                 (p.pipelined() ? "\n" + std::to_string(p.micro_batches) +
                                      " micro-batches through " + std::to_string(p.stages.size()) +
                                      " stages: " + num(p.pipeline_cycles) + " cycles"
                                : "") +
                 "\nfill: the largest factor, BATCH orange, OUTP "
                 "blue, OFMP_H/W green, INPP purple") +
      ";\n  labelloc=t;\n  node [shape=box, style=filled, fillcolor=white, "
      "fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", "
      "fontsize=9];\n";
  for (std::size_t i = 0; i < p.layers.size(); ++i) {
    const PlanLayer& l = p.layers[i];
    PartDim widest = PartDim::Batch;
    for (PartDim d : kAllPartDims)
      if (l.choice.factor(d) > l.choice.factor(widest)) widest = d;
    const bool split = l.choice.nodes() > 1;
    out += "  " + dot_string(l.name) + " [label=" +
           dot_string(l.name + "\n" + l.op + "\n" + l.choice.str() + " (" +
                      std::to_string(l.choice.nodes()) + " nodes)\n" + num(l.compute_cycles) +
                      " compute cycles") +
           (split ? std::string(", fillcolor=\"") + kFill[static_cast<int>(widest)] + "\"" : "") +
           "];\n";
  }
  // Pipeline stages as clusters: naming a node in a subgraph makes it a member.
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const PlanStage& st = p.stages[s];
    out += "  subgraph cluster_stage" + std::to_string(s) + " {\n    label=" +
           dot_string("stage " + std::to_string(s) + ": PEs " + st.pe_range() + ", " +
                      num(st.cycles) + " cycles per micro-batch") +
           ";\n    style=dashed;\n";
    for (const PlanLayer& l : p.layers)
      if (l.stage == static_cast<int>(s)) out += "    " + dot_string(l.name) + ";\n";
    out += "  }\n";
  }
  for (const PlanEdge& e : p.edges) {
    const double share = p.redistribution_cycles > 0 ? e.cycles / p.redistribution_cycles : 0;
    out += "  " + dot_string(e.src) + " -> " + dot_string(e.dst) + " [label=" +
           dot_string(e.type + "\n" + num(e.bytes) + " B, " + num(e.cycles) + " cycles") +
           (e.cycles > 0 ? ", penwidth=" + fixed(1 + 9 * share, 2) : ", style=dashed") + "];\n";
  }
  return out + "}\n";
}

namespace {

/// choices_digest's text but for the micro-batch count, which ends it.
std::string choices_text(const Plan& p) {
  std::ostringstream text;
  for (const PlanLayer& l : p.layers) {
    text << l.name << '|' << l.choice.str() << '|';
    for (const int pe : l.pes) text << pe << ',';
    text << '|' << l.stage << '\n';
  }
  for (const PlanStage& st : p.stages)
    text << st.first << '|' << st.last << '|' << st.units << '|' << st.first_pe << '|' << st.pes << '\n';
  return text.str();
}

}  // namespace

std::string choices_digest(const Plan& p) {
  return hex16(fnv1a(std::to_string(p.micro_batches), fnv1a(choices_text(p))));
}

std::optional<int> priced_micro_batches(const Plan& p) {
  if (!p.priced_choices || *p.priced_choices == choices_digest(p)) return std::nullopt;
  const std::uint64_t head = fnv1a(choices_text(p));
  for (int m = 1; m <= kMaxMicroBatches; ++m)
    if (hex16(fnv1a(std::to_string(m), head)) == *p.priced_choices) return m;
  return std::nullopt;
}

std::string costs_digest(const Plan& p) {
  std::ostringstream text;
  text << std::setprecision(12);  // as plan_yaml writes them: the digest survives the file
  text << p.compute_cycles << '|' << p.redistribution_cycles << '|' << p.energy_pj << '\n';
  for (const PlanStage& st : p.stages) text << st.cycles << '\n';
  for (const PlanLayer& l : p.layers) text << l.compute_cycles << '\n';
  for (const PlanEdge& e : p.edges)
    text << e.src << '|' << e.dst << '|' << e.input << '|' << e.type << '|' << e.bytes << '|'
         << e.cycles << '\n';
  return fnv1a_hex(text.str());
}

std::string plan_yaml(const Plan& p) {
  YAML::Emitter y;
  y.SetDoublePrecision(12);
  y << YAML::Comment("nocflow partition plan: cycles, pJ, bytes (see optimizer/plan/plan.h)");
  y << YAML::BeginMap;
  y << YAML::Key << "network" << YAML::Value << p.network;
  y << YAML::Key << "cost_model" << YAML::Value << p.cost_model;
  y << YAML::Key << "solver" << YAML::Value << p.solver;
  y << YAML::Key << "pes" << YAML::Value << p.pes;
  y << YAML::Key << "topology" << YAML::Value << p.topology;
  if (p.batch > 0) y << YAML::Key << "batch" << YAML::Value << p.batch;
  if (!p.hardware.empty()) y << YAML::Key << "hardware" << YAML::Value << p.hardware;
  if (!p.priced_for.empty()) {
    y << YAML::Key << "priced_for" << YAML::Value << YAML::Flow << YAML::BeginMap;
    for (const auto& [key, value] : p.priced_for) y << YAML::Key << key << YAML::Value << value;
    y << YAML::EndMap;
  }
  if (p.calibration) y << YAML::Key << "calibration" << YAML::Value << *p.calibration;
  if (p.bnoc) y << YAML::Key << "bnoc_bytes_per_cycle" << YAML::Value << *p.bnoc;
  if (p.train) y << YAML::Key << "train" << YAML::Value << *p.train;
  if (p.passes) y << YAML::Key << "passes" << YAML::Value << *p.passes;
  if (p.replay_mode) y << YAML::Key << "replay_mode" << YAML::Value << *p.replay_mode;
  if (p.activation_bytes > 0)
    y << YAML::Key << "activation_bytes" << YAML::Value << p.activation_bytes;
  y << YAML::Key << "choices_digest" << YAML::Value << YAML::DoubleQuoted
    << p.priced_choices.value_or(choices_digest(p));
  y << YAML::Key << "costs_digest" << YAML::Value << YAML::DoubleQuoted
    << p.priced_costs.value_or(costs_digest(p));
  if (p.pipelined())
    y << YAML::Newline << YAML::Comment("totals: one micro-batch through every stage in turn; the pipeline's "
                       "time for all micro-batches is pipeline.predicted_cycles");
  y << YAML::Key << "totals" << YAML::Value << YAML::BeginMap
    << YAML::Key << "total_cycles" << YAML::Value << p.total_cycles()
    << YAML::Key << "compute_cycles" << YAML::Value << p.compute_cycles
    << YAML::Key << "redistribution_cycles" << YAML::Value << p.redistribution_cycles
    << YAML::Key << "energy_pj" << YAML::Value << p.energy_pj << YAML::EndMap;
  if (p.pipelined()) {
    y << YAML::Key << "pipeline" << YAML::Value << YAML::BeginMap << YAML::Key << "micro_batches"
      << YAML::Value << p.micro_batches << YAML::Key << "predicted_cycles" << YAML::Value
      << p.pipeline_cycles;
    if (p.resident_weights) y << YAML::Key << "resident_weights" << YAML::Value << true;
    y << YAML::Key << "stages" << YAML::Value << YAML::BeginSeq;
    for (const PlanStage& s : p.stages)
      y << YAML::Flow << YAML::BeginMap << YAML::Key << "first" << YAML::Value << s.first
        << YAML::Key << "last" << YAML::Value << s.last << YAML::Key << "units" << YAML::Value
        << s.units << YAML::Key << "first_pe" << YAML::Value << s.first_pe << YAML::Key << "pes"
        << YAML::Value << s.pes << YAML::Key << "cycles" << YAML::Value << s.cycles << YAML::EndMap;
    y << YAML::EndSeq << YAML::EndMap;
  }
  y << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
  for (const PlanLayer& l : p.layers) {
    y << YAML::BeginMap << YAML::Key << "name" << YAML::Value << l.name << YAML::Key << "op"
      << YAML::Value << l.op << YAML::Key << "choice" << YAML::Value << l.choice.str() << YAML::Key
      << "nodes" << YAML::Value << l.choice.nodes() << YAML::Key << "pes" << YAML::Value
      << YAML::Flow << l.pes << YAML::Key << "compute_cycles" << YAML::Value << l.compute_cycles;
    if (l.stage >= 0) y << YAML::Key << "stage" << YAML::Value << l.stage;
    y << YAML::EndMap;
  }
  y << YAML::EndSeq;
  y << YAML::Key << "edges" << YAML::Value << YAML::BeginSeq;
  for (const PlanEdge& e : p.edges) {
    y << YAML::Flow << YAML::BeginMap << YAML::Key << "src" << YAML::Value << e.src
      << YAML::Key << "dst" << YAML::Value << e.dst << YAML::Key << "input" << YAML::Value << e.input
      << YAML::Key << "type" << YAML::Value << e.type << YAML::Key << "bytes" << YAML::Value << e.bytes
      << YAML::Key << "cycles" << YAML::Value << e.cycles << YAML::EndMap;
  }
  y << YAML::EndSeq << YAML::EndMap;
  return std::string(y.c_str()) + "\n";
}

namespace {

/// "file:line:col", or "file" for a node without a place (an empty file's root).
std::string at(const std::string& file, const YAML::Node& n) {
  if (n.Mark().is_null()) return file;
  return file + ":" + std::to_string(n.Mark().line + 1) + ":" + std::to_string(n.Mark().column + 1);
}

/// A key the reader does not know is a typo or a plan of another version: named, not ignored.
void only_keys(const YAML::Node& n, const std::vector<std::string>& keys, const std::string& file) {
  if (!n.IsMap()) throw InputError(at(file, n) + ": expected a map");
  for (const auto& kv : n) {
    const auto key = kv.first.as<std::string>();
    if (std::find(keys.begin(), keys.end(), key) == keys.end())
      throw InputError(at(file, kv.first) + ": " + unknown_name_message("key", key, keys));
  }
}

/// `context` ("layers") follows the place: "plan.yaml:12:5: layers: missing key 'op'".
template <typename T>
T get(const YAML::Node& n, const std::string& key, const std::string& file,
      const std::string& context = "") {
  const std::string in = context.empty() ? "" : context + ": ";
  const YAML::Node v = n[key];
  if (!v) throw InputError(at(file, n) + ": " + in + "missing key '" + key + "'");
  if (const std::optional<T> read = yaml_as<T>(v)) return *read;
  constexpr bool list = WholeNumbers<T>::value;  // of whole numbers
  const std::string expected = std::is_same_v<T, bool>       ? "true or false"
                               : kWholeNumber<T>             ? "a whole number in decimal"
                               : list                        ? "a list of whole numbers in decimal"
                               : std::is_floating_point_v<T> ? "a number"
                                                             : "text";
  const std::string got = v.IsNull()     ? "nothing"
                          : v.IsScalar() ? "'" + v.Scalar() + "'"
                          : v.IsMap()    ? "a map"
                          : list         ? "an entry that is not one"
                                         : "a list";
  throw InputError(at(file, v) + ": " + in + "key '" + key + "' has the wrong type: expected " +
                   expected + ", got " + got);
}

/// get, and at least `least`: a count, a size or a cost (finite) that a plan cannot have below it.
template <typename T>
T get_at_least(const YAML::Node& n, const std::string& key, T least, const std::string& file,
               const std::string& context = "") {
  const T v = get<T>(n, key, file, context);
  if (!(v >= least) || !std::isfinite(static_cast<double>(v))) {
    std::ostringstream why;
    why << at(file, n[key]) << ": " << (context.empty() ? "" : context + ": ") << key
        << " must be at least " << least << ", got " << v;
    throw InputError(why.str());
  }
  return v;
}

}  // namespace

namespace {

/// n[key], which must be a list (a map or a number was read as no entries, or failed inside
/// yaml-cpp); missing, an empty list unless `required`.
YAML::Node list_of(const YAML::Node& n, const std::string& key, const std::string& file,
                   const std::string& within = "", bool required = true) {
  const YAML::Node list = n[key];
  if (!list && !required) return YAML::Node(YAML::NodeType::Sequence);
  if (!list) throw InputError(at(file, n) + ": " + within + "missing key '" + key + "'");
  if (!list.IsSequence())
    throw InputError(at(file, list) + ": " + within + key + ": expected a list");
  return list;
}

Plan read_plan_file(const std::string& file) {
  const YAML::Node root = load_yaml_file(file, "plan");
  only_keys(root, {"network",        "cost_model",
                   "solver",         "pes",
                   "topology",       "batch",
                   "hardware",       "priced_for",
                   "calibration",    "bnoc_bytes_per_cycle",
                   "train",          "passes",
                   "replay_mode",    "activation_bytes",
                   "choices_digest", "costs_digest",
                   "totals",         "pipeline",
                   "layers",         "edges"},
            file);
  Plan p;
  p.network = get<std::string>(root, "network", file);
  p.cost_model = get<std::string>(root, "cost_model", file);
  if (const std::vector<std::string> models = cost_model_names();
      std::find(models.begin(), models.end(), p.cost_model) == models.end())
    throw InputError(at(file, root["cost_model"]) + ": cost_model: " +
                     unknown_name_message("cost model", p.cost_model, models));
  p.solver = get<std::string>(root, "solver", file);
  p.pes = get_at_least<int>(root, "pes", 1, file);
  p.topology = get<std::string>(root, "topology", file);
  if (root["batch"]) p.batch = get_at_least<int>(root, "batch", 1, file);
  if (root["hardware"]) p.hardware = get<std::string>(root, "hardware", file);
  if (const YAML::Node priced = root["priced_for"]) {
    if (!priced.IsMap())
      throw InputError(at(file, priced) + ": priced_for: expected a map of config keys to values");
    for (const auto& kv : priced) {
      if (!kv.first.IsScalar() || !kv.second.IsScalar())
        throw InputError(at(file, kv.first) +
                         ": priced_for: expected a map of config keys to values");
      p.priced_for.emplace_back(kv.first.as<std::string>(), kv.second.as<std::string>());
    }
  }
  if (root["calibration"]) p.calibration = get<std::string>(root, "calibration", file);
  if (root["bnoc_bytes_per_cycle"])
    p.bnoc = get_at_least<double>(root, "bnoc_bytes_per_cycle", 0.0, file);
  if (root["train"]) p.train = get<std::string>(root, "train", file);
  if (root["passes"]) {
    const std::string passes = get<std::string>(root, "passes", file);
    try {
      p.passes = canonical_pass_list(passes);
    } catch (const InputError& e) {
      throw InputError(at(file, root["passes"]) + ": passes: " + e.what());
    }
  }
  if (root["replay_mode"]) {
    p.replay_mode = get<std::string>(root, "replay_mode", file);
    if (*p.replay_mode != "dataflow" && *p.replay_mode != "barrier")
      throw InputError(at(file, root["replay_mode"]) +
                       ": replay_mode: expected dataflow or barrier, got '" + *p.replay_mode + "'");
  }
  if (root["activation_bytes"])
    p.activation_bytes = get_at_least<std::int64_t>(root, "activation_bytes", 0, file);
  if (root["choices_digest"]) p.priced_choices = get<std::string>(root, "choices_digest", file);
  if (root["costs_digest"]) p.priced_costs = get<std::string>(root, "costs_digest", file);
  const YAML::Node totals = root["totals"];
  if (!totals) throw InputError(file + ": missing key 'totals'");
  only_keys(totals, {"total_cycles", "compute_cycles", "redistribution_cycles", "energy_pj"},
            file);  // total: derived
  p.compute_cycles = get_at_least<double>(totals, "compute_cycles", 0, file, "totals");
  p.redistribution_cycles =
      get_at_least<double>(totals, "redistribution_cycles", 0, file, "totals");
  p.energy_pj = get_at_least<double>(totals, "energy_pj", 0, file, "totals");
  // Derived, so an edit of it alone changed nothing, while a replay still printed the prediction
  // as the plan file's.
  if (totals["total_cycles"]) {
    const double total = get<double>(totals, "total_cycles", file, "totals");
    if (!(std::abs(total - p.total_cycles()) <=
          1e-9 * std::max(1.0, std::abs(p.total_cycles()))))  // NaN too
      throw InputError(at(file, totals["total_cycles"]) + ": totals: total_cycles " +
                       totals["total_cycles"].Scalar() +
                       " is not compute_cycles + redistribution_cycles (" +
                       shortest(p.total_cycles()) + "): edit those, or leave it out");
  }
  if (const YAML::Node pipe = root["pipeline"]) {
    only_keys(pipe, {"micro_batches", "predicted_cycles", "resident_weights", "stages"}, file);
    if (pipe["resident_weights"])
      p.resident_weights = get<bool>(pipe, "resident_weights", file, "pipeline");
    p.micro_batches = get<int>(pipe, "micro_batches", file, "pipeline");
    if (p.micro_batches < 1 || p.micro_batches > kMaxMicroBatches)
      throw InputError(at(file, pipe["micro_batches"]) + ": micro_batches must be in 1 .. " +
                       std::to_string(kMaxMicroBatches));
    int next_pe = 0;  // stages take disjoint bands, in order
    for (const YAML::Node& n : list_of(pipe, "stages", file, "pipeline: ")) {
      only_keys(n, {"first", "last", "units", "first_pe", "pes", "cycles"}, file);
      const std::string at_stage = "pipeline: stages";
      p.stages.push_back(
          {get<std::string>(n, "first", file, at_stage),
           get<std::string>(n, "last", file, at_stage), get<int>(n, "units", file, at_stage),
           get<int>(n, "first_pe", file, at_stage), get<int>(n, "pes", file, at_stage),
           get_at_least<double>(n, "cycles", 0, file, at_stage)});
      const PlanStage& st = p.stages.back();
      if (st.units < 1 || st.pes < 1 || st.first_pe < next_pe || st.first_pe + st.pes > p.pes)
        throw InputError(at(file, n) + ": stage " + std::to_string(p.stages.size() - 1) + ": PEs " +
                         st.pe_range() + " (" + std::to_string(st.units) +
                         " units) is not a band of the " + std::to_string(p.pes) +
                         " PEs after the previous stage's");
      next_pe = st.first_pe + st.pes;
    }
    if (p.stages.empty()) throw InputError(at(file, pipe) + ": pipeline: no stages");
  }
  for (const YAML::Node& n : list_of(root, "layers", file)) {
    only_keys(n, {"name", "op", "choice", "nodes", "pes", "compute_cycles", "stage"},
              file);  // nodes: derived
    PlanLayer l;
    l.name = get<std::string>(n, "name", file, "layers");
    const std::string layer = "layers: " + l.name;
    l.op = get<std::string>(n, "op", file, layer);
    const std::string choice = get<std::string>(n, "choice", file, layer);  // first: it is there
    l.choice = parse_choice(choice, at(file, n["choice"]) + ": layer '" + l.name + "'");
    l.pes = get<std::vector<int>>(n, "pes", file, layer);
    l.compute_cycles = get_at_least<double>(n, "compute_cycles", 0, file, layer);
    if (n["stage"]) l.stage = get<int>(n, "stage", file, layer);
    if (n["nodes"] && get<int>(n, "nodes", file, layer) != l.choice.nodes())  // derived
      throw InputError(at(file, n["nodes"]) + ": layer '" + l.name + "': nodes " +
                       n["nodes"].as<std::string>() + ", but choice " + l.choice.str() + " has " +
                       std::to_string(l.choice.nodes()));
    if (static_cast<int>(l.pes.size()) != l.choice.nodes())
      throw InputError(at(file, n["pes"]) + ": layer '" + l.name +
                       "': " + std::to_string(l.pes.size()) + " PEs listed for a choice of " +
                       std::to_string(l.choice.nodes()) + " nodes");
    // A pipelined plan's layers run in stages, in order, each on its stage's band.
    const int stages = static_cast<int>(p.stages.size());
    const int previous = p.layers.empty() ? 0 : p.layers.back().stage;
    if (p.pipelined() && (l.stage < previous || l.stage >= stages))
      throw InputError(at(file, n["stage"] ? n["stage"] : n) + ": layer '" + l.name + "': stage " +
                       (n["stage"] ? std::to_string(l.stage) : "missing") + ", expected " +
                       std::to_string(previous) + " .. " + std::to_string(stages - 1) +
                       " (stages run in order)");
    if (!p.pipelined() && n["stage"])
      throw InputError(at(file, n["stage"]) + ": layer '" + l.name +
                       "': a stage, but the plan has no pipeline");
    const int lo = p.pipelined() ? p.stages[l.stage].first_pe : 0;
    const int hi = p.pipelined() ? lo + p.stages[l.stage].pes : p.pes;
    if (std::set<int>(l.pes.begin(), l.pes.end()).size() != l.pes.size())
      throw InputError(at(file, n["pes"]) + ": layer '" + l.name + "': a PE listed twice");
    for (int pe : l.pes)
      if (pe < lo || pe >= hi)
        throw InputError(at(file, n["pes"]) + ": layer '" + l.name + "': PE " + std::to_string(pe) +
                         " is outside " + (p.pipelined() ? "its stage's PEs " : "the plan's PEs ") +
                         std::to_string(lo) + "-" + std::to_string(hi - 1));
    p.layers.push_back(std::move(l));
  }
  auto stage_of = [&](const std::string& name) {
    for (const PlanLayer& l : p.layers)
      if (l.name == name) return l.stage;
    return -1;
  };
  for (std::size_t s = 0; s < p.stages.size(); ++s) {
    const PlanStage& st = p.stages[s];
    if (stage_of(st.first) != static_cast<int>(s) || stage_of(st.last) != static_cast<int>(s))
      throw InputError(file + ": pipeline: stage " + std::to_string(s) + " runs '" + st.first +
                       "' .. '" + st.last + "', but its layers say otherwise");
  }
  // An edge names two of the plan's layers and a type the models know (edited, they were
  // taken as edited figures).
  std::set<std::string> layer_names;
  for (const PlanLayer& l : p.layers) layer_names.insert(l.name);
  std::vector<std::string> types{kStageInputType};
  for (RedistType t : kRedistTypes) types.push_back(to_string(t));
  for (const YAML::Node& n : list_of(root, "edges", file, "", false)) {
    only_keys(n, {"src", "dst", "input", "type", "bytes", "cycles"}, file);
    PlanEdge e;
    e.src = get<std::string>(n, "src", file, "edges");
    e.dst = get<std::string>(n, "dst", file, "edges");
    for (const auto& [key, name] : {std::pair{"src", e.src}, std::pair{"dst", e.dst}})
      if (!layer_names.count(name))
        throw InputError(at(file, n[key]) + ": edges: " + key + " '" + name +
                         "' is no layer of the plan");
    e.input = get_at_least<int>(n, "input", 0, file, "edges");
    e.type = get<std::string>(n, "type", file, "edges");
    if (std::find(types.begin(), types.end(), e.type) == types.end())
      throw InputError(at(file, n["type"]) +
                       ": edges: " + unknown_name_message("type", e.type, types));
    e.bytes = get_at_least<double>(n, "bytes", 0, file, "edges");
    e.cycles = get_at_least<double>(n, "cycles", 0, file, "edges");
    p.edges.push_back(std::move(e));
  }
  if (p.pipelined()) {
    // Derived, as totals' total_cycles: the stages' sum + (M − 1) × the slowest, for the count
    // the file was priced with (its micro_batches alone may have been edited since: the replay
    // then predicts from the stages, as --micro-batches does).
    double sum = 0, slowest = 0;
    for (const PlanStage& st : p.stages) {
      sum += st.cycles;
      slowest = std::max(slowest, st.cycles);
    }
    p.pipeline_cycles = sum + (p.micro_batches - 1) * slowest;
    if (const YAML::Node predicted_at = root["pipeline"]["predicted_cycles"]) {
      const int priced = priced_micro_batches(p).value_or(p.micro_batches);
      const double expected = sum + (priced - 1) * slowest;
      const double predicted = get<double>(root["pipeline"], "predicted_cycles", file, "pipeline");
      if (!(std::abs(predicted - expected) <= 1e-9 * std::max(1.0, expected)))  // NaN too
        throw InputError(at(file, predicted_at) + ": pipeline: predicted_cycles " +
                         predicted_at.Scalar() + " is not the stages' cycles summed + " +
                         std::to_string(priced - 1) + " x the slowest (" + shortest(expected) +
                         "): edit those, or leave it out");
    }
  }
  return p;
}

}  // namespace

Plan read_plan(const std::string& file) {
  return yaml_errors_as_input(file, [&] { return read_plan_file(file); });
}

}  // namespace nocflow::optimizer
