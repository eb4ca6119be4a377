// SPDX-License-Identifier: MIT
#include "sim/sweep/spec.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/input_file.h"
#include "noc/base/limits.h"
#include "noc/base/names.h"
#include "optimizer/cost/cost_model.h"
#include "optimizer/frontend/load_network.h"
#include "optimizer/frontend/zoo.h"
#include "optimizer/io/yaml_file.h"
#include "optimizer/passes/autodiff.h"
#include "optimizer/passes/pass_manager.h"
#include "optimizer/solver/solver.h"
#include "sim/config/hw_loader.h"

namespace nocflow::sim {
namespace {

namespace fs = std::filesystem;

/// Points one spec may have: each is a process and a row; more is a typo in the axes.
constexpr std::size_t kMaxSweepPoints = 1'000'000;

/// "spec.yaml:3:9: " for a node.
std::string where(const std::string& file, const YAML::Node& n) {
  const YAML::Mark m = n.Mark();
  return file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1) + ": ";
}

/// A config error as the spec's reader sees it: load_hw_config names an override as the --set
/// it came in ("--set K=V: K: value ..."), which the spec did not write; the key stays.
std::string without_set(const InputError& e) {
  const std::string what = e.what();
  const auto colon = what.find(": ");
  return what.rfind("--set ", 0) == 0 && colon != std::string::npos ? what.substr(colon + 2) : what;
}

/// A relative path in the spec is relative to the spec's folder.
std::string resolve(const std::string& spec_file, const std::string& path) {
  if (path.empty() || fs::path(path).is_absolute()) return path;
  return (fs::path(spec_file).parent_path() / path).lexically_normal().string();
}

bool is_config_key(const std::string& name) { return name.find('.') != std::string::npos; }

/// The whole of `v` as an integer, or nothing (also for a leading zero: is_decimal_integer).
std::optional<long long> to_int(const std::string& v) {
  if (!is_decimal_integer(v)) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long n = std::stoll(v, &used);
    if (used == v.size()) return n;
  } catch (const std::exception&) {
  }
  return std::nullopt;
}

/// "RxC" or "k" (k x k); sides 1 .. 64.
std::pair<int, int> parse_mesh(const std::string& v) {
  auto side = [&](const std::string& s) {
    const auto k = to_int(s);
    if (!k) throw InputError("'" + v + "' is not a mesh shape (write RxC, e.g. 8x8, or k)");
    if (*k < 1 || *k > 64) throw InputError("mesh side " + s + " is outside 1 .. 64");
    return static_cast<int>(*k);
  };
  const auto x = v.find('x');
  const std::pair<int, int> shape = x == std::string::npos
                                        ? std::pair{side(v), side(v)}
                                        : std::pair{side(v.substr(0, x)), side(v.substr(x + 1))};
  return shape;
}

std::int64_t parse_batch(const std::string& v) {
  const auto b = to_int(v);
  if (!b)
    throw InputError("batch '" + v + "' is not an integer" +
                     (has_leading_zero(v) ? " (no leading zero: it would read as octal)" : ""));
  if (*b < 1 || *b > kMaxBatch)
    throw InputError("batch " + v + " is outside 1 .. " + std::to_string(kMaxBatch));
  return *b;
}

void check_name(const std::string& what, const std::string& v, const std::vector<std::string>& known) {
  if (std::find(known.begin(), known.end(), v) == known.end()) throw InputError(unknown_name_message(what, v, known));
}

/// Applies one value of a non-config axis to a point; throws InputError (without place).
/// Returns what the value means, for telling values that are spelt apart but mean the same.
/// `load_files`: load a network file to check it (read_spec, once per value; the points then
/// use it as checked).
std::string apply(SweepPoint& p, const std::string& axis, const std::string& v,
                  const std::string& spec_file, std::pair<int, int>& mesh, std::string& kind,
                  bool load_files) {
  if (axis == "mesh") {
    mesh = parse_mesh(v);
    return std::to_string(mesh.first) + "x" + std::to_string(mesh.second);
  } else if (axis == "topology") {
    check_name("topology", v, {"mesh", "crossbar"});
    kind = v;
  } else if (axis == "network") {
    if (v.rfind("zoo:", 0) == 0) {
      check_name("zoo network", v.substr(4), optimizer::zoo_names());
      p.network = v;
    } else {
      p.network = resolve(spec_file, v);
      check_input_path(p.network, "network file " + p.network);
      if (!fs::is_regular_file(p.network))
        throw InputError("network file " + p.network +
                         (fs::exists(p.network) ? " is not a file" : " does not exist"));
      // A file that does not load is a bad value too, not an infeasible point (loaded once).
      if (load_files) try {
          optimizer::load_network(p.network);
        } catch (const InputError& e) {
          throw InputError("network " + p.network + ": " + e.what());
        }
      return fs::weakly_canonical(p.network).string();
    }
  } else if (axis == "batch") {
    p.batch = parse_batch(v);
    return std::to_string(p.batch);
  } else if (axis == "solver") {
    check_name("solver", v, optimizer::solver_names());
    p.solver = v;
  } else if (axis == "cost_model") {
    check_name("cost model", v, optimizer::cost_model_names());
    p.cost_model = v;
  } else if (axis == "placement") {
    check_name("placement", v, {"snake", "search"});
    p.placement = v;
  } else if (axis == "mode") {
    check_name("mode", v, {"dataflow", "barrier"});
    p.mode = v;
  } else if (axis == "passes") {
    std::string meaning;
    for (const std::string& pass : optimizer::parse_pass_list(v))
      meaning += pass + ",";  // throws for an unknown pass
    p.passes = v;
    return meaning;
  } else if (axis == "train") {  // none: inference
    std::vector<std::string> known{"none"};
    for (const auto& o : optimizer::optimizer_names()) known.push_back(o);
    check_name("train", v, known);
    p.train = v == "none" ? "" : v;
  }
  return v;
}

}  // namespace

const std::vector<std::string>& sweep_axis_names() {
  static const std::vector<std::string> names = {"mesh",   "topology",   "network",   "batch",
                                                 "solver", "cost_model", "placement", "mode",
                                                 "passes", "train"};
  return names;
}

SweepSpec load_sweep_spec(const std::string& file) {
  SweepSpec s;
  s.file = file;
  {
    check_input_path(file, file);
    std::ifstream in(file, std::ios::binary);
    if (!in)
      throw InputError(
          file + ": cannot read the sweep spec: " +
          (std::filesystem::exists(file) ? "permission denied or unreadable" : "no such file"));
    std::ostringstream bytes;
    bytes << in.rdbuf();
    s.text = bytes.str();
  }
  const YAML::Node root = optimizer::load_yaml_file(file, "sweep spec");
  if (!root.IsMap()) throw InputError(file + ": a sweep spec is a map with keys hw, set, axes");
  std::set<std::string> seen;
  std::vector<YAML::Node> set_keys;  // the `set:` entries' keys, for their lines
  for (const auto& kv : root) {
    const std::string key = kv.first.as<std::string>();
    if (!seen.insert(key).second) throw InputError(where(file, kv.first) + "duplicate key '" + key + "'");
    // A key with no value: its null node's mark is past it, so point at the key.
    const std::string at = where(file, kv.second.IsNull() ? kv.first : kv.second);
    if (key == "hw") {
      if (!kv.second.IsScalar() || kv.second.as<std::string>().empty())
        throw InputError(at + "hw: expected a config file path");
      s.hw = resolve(file, kv.second.as<std::string>());
    } else if (key == "set") {
      if (!kv.second.IsMap()) throw InputError(at + "set: expected a map of config keys to values");
      for (const auto& o : kv.second) {
        if (!o.second.IsScalar())
          throw InputError(where(file, o.second) + "set." + o.first.as<std::string>() + ": expected one value");
        s.overrides.push_back(o.first.as<std::string>() + "=" + o.second.as<std::string>());
        set_keys.push_back(o.first);
      }
    } else if (key == "axes") {
      if (!kv.second.IsMap())
        throw InputError(at + "axes: expected a map of axis names to values");
      if (kv.second.size() == 0)
        throw InputError(at + "axes: no axis (at least network, e.g. network: zoo:resnet18)");
    } else {
      throw InputError(where(file, kv.first) + unknown_name_message("key", key, {"hw", "set", "axes"}));
    }
  }
  if (!root["hw"]) throw InputError(file + ": missing key 'hw' (the base hardware config)");
  if (!root["axes"]) throw InputError(file + ": missing key 'axes'");
  // The base config and fixed overrides must load on their own.
  try {
    load_hw_config(s.hw, s.overrides);
  } catch (const InputError& e) {
    // Blame the first `set:` entry that breaks the config, at its line; else the base file.
    std::vector<std::string> upto;
    for (std::size_t i = 0; i < s.overrides.size(); ++i) {
      upto.push_back(s.overrides[i]);
      try {
        load_hw_config(s.hw, upto);
      } catch (const InputError& at) {
        throw InputError(where(file, set_keys[i]) + "set: " + without_set(at));
      }
    }
    throw InputError(where(file, root["hw"]) + "base config: " + e.what());
  }
  seen.clear();
  for (const auto& kv : root["axes"]) {
    SweepAxis axis{kv.first.as<std::string>(), {}};
    if (!seen.insert(axis.name).second)
      throw InputError(where(file, kv.first) + "duplicate axis '" + axis.name + "'");
    const auto& known = sweep_axis_names();
    if (!is_config_key(axis.name) && std::find(known.begin(), known.end(), axis.name) == known.end())
      throw InputError(where(file, kv.first) + unknown_name_message("axis", axis.name, known) +
                       "; config keys such as router.vcs are axes too");
    for (const YAML::Node& key : set_keys)
      if (key.as<std::string>() == axis.name)
        throw InputError(where(file, kv.first) + "axis '" + axis.name + "' is also in set: (line " +
                         std::to_string(key.Mark().line + 1) + "): use one or the other");
    const YAML::Node& values = kv.second;
    if (values.IsNull()) throw InputError(where(file, kv.first) + "axis '" + axis.name + "' has no value");
    if (values.IsScalar()) {
      axis.values.push_back(values.as<std::string>());
    } else if (values.IsSequence()) {
      if (values.size() == 0)
        throw InputError(where(file, values) + "axis '" + axis.name + "' is empty");
      for (const auto& v : values) {
        if (!v.IsScalar()) throw InputError(where(file, v) + "axis '" + axis.name + "': expected a list of values");
        axis.values.push_back(v.as<std::string>());
      }
    } else {
      throw InputError(where(file, values) + "axis '" + axis.name + "': expected a value or a list of values");
    }
    // Check each value alone, so the error points at it; two values that mean the same
    // ("1 MiB" and 1048576, 8 and 8x8) would give the same points twice.
    std::map<std::string, std::string> meanings;  // what a value means -> the value
    for (std::size_t i = 0; i < axis.values.size(); ++i) {
      const YAML::Node node = values.IsSequence() ? values[i] : values;
      const std::string& value = axis.values[i];
      std::string meaning;
      try {
        if (is_config_key(axis.name)) {
          std::vector<std::string> o = s.overrides;
          o.push_back(axis.name + "=" + value);
          meaning = resolved_yaml(load_hw_config(s.hw, o));
        } else {
          SweepPoint p;
          std::pair<int, int> mesh;
          std::string kind;
          meaning = apply(p, axis.name, value, file, mesh, kind, true);
        }
      } catch (const InputError& e) {
        // A config key's error names the key already, after the --set it came in.
        const std::string bare = without_set(e);
        const std::string message =
            where(file, node) + (bare != e.what() ? bare : "axis '" + axis.name + "': " + bare);
        if (!is_config_key(axis.name)) throw InputError(message);
        // It may load beside other axes' values (another topology, a key that must agree).
        s.alone_errors.push_back({s.axes.size(), value, message});
        meaning = "value " + value;
      }
      const auto [same, fresh] = meanings.emplace(meaning, value);
      if (!fresh)
        throw InputError(
            where(file, node) + "axis '" + axis.name + "': value '" + value + "' " +
            (same->second == value ? "appears twice" : "means the same as '" + same->second + "'"));
    }
    s.axes.push_back(std::move(axis));
  }
  std::size_t points = 1;
  for (const auto& a : s.axes) {
    points *= a.values.size();
    if (points > kMaxSweepPoints)
      throw InputError(where(file, root["axes"]) + "more than " + std::to_string(kMaxSweepPoints) +
                       " points: split the sweep into several specs");
  }
  // The mesh and topology axes set topology.*: an axis or a `set:` entry of such a key beside
  // them would be ignored.
  if (seen.count("mesh") || seen.count("topology")) {
    for (const auto& kv : root["axes"])
      if (kv.first.as<std::string>().rfind("topology.", 0) == 0)
        throw InputError(
            where(file, kv.first) + "axis '" + kv.first.as<std::string>() +
            "' beside a mesh or topology axis, which set the topology: use one or the other");
    for (const YAML::Node& key : set_keys)
      if (key.as<std::string>().rfind("topology.", 0) == 0)
        throw InputError(
            where(file, key) + "set: '" + key.as<std::string>() +
            "' beside a mesh or topology axis, which set the topology: use one or the other");
  }
  if (!seen.count("network"))
    throw InputError(where(file, root["axes"]) +
                     "no network: add an axis 'network' (e.g. network: zoo:resnet18)");
  return s;
}

std::vector<SweepPoint> sweep_points(const SweepSpec& spec) {
  std::size_t total = 1;
  for (const auto& a : spec.axes) total *= a.values.size();
  std::vector<SweepPoint> points;
  points.reserve(total);
  std::unordered_map<std::size_t, std::size_t> runs;  // hash of what a point runs -> its index
  std::set<std::pair<std::string, std::int64_t>> checked_batches;  // (network file, batch)
  const HwSpec base = load_hw_config(spec.hw, spec.overrides);
  std::map<std::size_t, std::string> failures;  // point index -> why it does not load
  for (std::size_t index = 0; index < total; ++index) {
    SweepPoint p;
    p.index = index;
    // Mixed radix, last axis fastest.
    std::size_t rest = index;
    p.values.resize(spec.axes.size());
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
      p.values[a] = spec.axes[a].values[rest % spec.axes[a].values.size()];
      rest /= spec.axes[a].values.size();
    }
    std::vector<std::string> overrides = spec.overrides;
    std::pair<int, int> mesh{0, 0};
    std::string kind;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
      const std::string& name = spec.axes[a].name;
      // A value with a space is quoted, so that the key still splits on spaces.
      const std::string& v = p.values[a];
      p.key +=
          (a ? " " : "") + name + "=" + (v.find(' ') == std::string::npos ? v : "\"" + v + "\"");
      if (is_config_key(name))
        overrides.push_back(name + "=" + p.values[a]);
      else
        apply(p, name, p.values[a], spec.file, mesh, kind, false);
    }
    try {
      // The point's topology goes in with its other keys, so the whole machine is checked.
      if (mesh.first != 0 || !kind.empty()) {
        const auto& t = base.topology;
        if (kind.empty()) kind = t.kind;
        if (mesh.first == 0) mesh = t.kind == "mesh" ? std::pair{t.rows, t.cols} : std::pair{t.ports, 1};
        overrides.push_back("topology.kind=" + kind);
        if (kind == "mesh") {
          overrides.push_back("topology.rows=" + std::to_string(mesh.first));
          overrides.push_back("topology.cols=" + std::to_string(mesh.second));
        } else {
          const int ports = mesh.first * mesh.second;
          if (ports < 2 || ports > 64) throw InputError("a crossbar has 2 .. 64 ports, not " + std::to_string(ports));
          overrides.push_back("topology.ports=" + std::to_string(ports));
        }
      }
      p.hw = load_hw_config(spec.hw, overrides);
    } catch (const InputError& e) {
      failures.emplace(index, spec.file + ": point " + p.key + ": " + without_set(e));
      points.push_back(std::move(p));
      continue;
    }
    // Values that differ but run the same (a crossbar's 16 ports from 4x4 and 2x8, beside the
    // meshes of those shapes; a network file's own element size whatever data.width_bytes
    // says, unless an ONNX model's floats take it; placement search on a crossbar, which has
    // no rows to place by): the first such point's index, for a note.
    HwSpec runs_on = p.hw;
    const bool onnx_takes_width =
        p.hw.data.onnx_float_bytes() > 0 && optimizer::is_onnx_file(p.network);
    if (p.network_file() && !onnx_takes_width) runs_on.data.width_bytes = 0;
    const bool crossbar = p.hw.topology.kind != "mesh";
    const std::size_t run = std::hash<std::string>{}(
        resolved_yaml(runs_on) + "|" + p.network + "|" + std::to_string(p.batch) + "|" + p.solver +
        "|" + p.cost_model + "|" + (crossbar ? "snake" : p.placement) + "|" + p.mode + "|" +
        p.passes + "|" + p.train);
    if (const auto [same, fresh] = runs.emplace(run, index); !fresh) p.same_run_as = same->second;
    // A network file takes a batch only if it is its own, as load_network checks it.
    if (p.batch != 0 && p.network_file() &&
        checked_batches.insert({p.network, p.batch}).second) try {
        optimizer::load_network(p.network, optimizer::ZooOptions{p.batch});
      } catch (const InputError& e) {
        throw InputError(spec.file + ": point " + p.key + ": " + e.what());
      }
    points.push_back(std::move(p));
  }
  if (!failures.empty()) {
    // A value that fails alone, and for its own key in every point that has it, is the
    // value's fault: its place.
    for (const auto& e : spec.alone_errors) {
      const std::string key = spec.axes[e.axis].name;
      bool its_fault = true;
      for (const SweepPoint& p : points)
        if (p.values[e.axis] == e.value) {
          const auto f = failures.find(p.index);
          if (f == failures.end() || f->second.find(": " + key + ":") == std::string::npos) its_fault = false;
        }
      if (its_fault) throw InputError(e.message);
    }
    throw InputError(failures.begin()->second);
  }
  return points;
}

}  // namespace nocflow::sim
