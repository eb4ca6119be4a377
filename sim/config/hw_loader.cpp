// SPDX-License-Identifier: MIT
#include "sim/config/hw_loader.h"

#include <yaml-cpp/yaml.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <optional>
#include <sstream>
#include <vector>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/input_file.h"
#include "noc/base/names.h"
#include "noc/router/router.h"
#include "noc/router/routing.h"
#include "noc/topology/topology.h"
#include "sim/config/param.h"

namespace nocflow::sim {
namespace {

/// Where a value came from, for error messages.
struct Origin {
  std::string where;  ///< "file:line:col" or "--set key=value"
  bool from_set = false;  ///< given by --set, not by the file
};

struct RawValue {
  YAML::Node node;
  Origin origin;
};

[[noreturn]] void fail(const Origin& at, const std::string& path, const std::string& what) {
  throw InputError(at.where + ": " + (path.empty() ? "" : path + ": ") + what);
}

Origin origin_of(const std::string& file, const YAML::Node& node) {
  const YAML::Mark m = node.Mark();
  if (m.is_null()) return {file};
  return {file + ":" + std::to_string(m.line + 1) + ":" + std::to_string(m.column + 1)};
}

std::vector<std::string> all_paths() {
  std::vector<std::string> out;
  for (const auto& p : hw_params()) out.push_back(p.path);
  return out;
}

std::vector<std::string> all_sections() {
  std::vector<std::string> out;
  for (const auto& p : hw_params())
    if (p.path.find('.') != std::string::npos &&
        std::find(out.begin(), out.end(), p.section()) == out.end())
      out.push_back(p.section());
  return out;
}

std::string unknown_key(const std::string& path) {
  // A section given a value: name its keys.
  const auto sections = all_sections();
  if (std::find(sections.begin(), sections.end(), path) != sections.end()) {
    std::vector<std::string> keys;
    for (const auto& p : hw_params())
      if (p.section() == path) keys.push_back(p.path);
    return "is a section, not a key; its keys: " + join(keys) + " (see configs/README.md)";
  }
  std::string msg = "unknown key";
  auto guess = closest_name(path, all_paths());
  if (guess.empty()) {
    const auto dot = path.find('.');
    if (dot == std::string::npos) guess = closest_name(path, all_sections());
  }
  if (!guess.empty()) {
    msg += "; did you mean '" + guess + "'?";
  } else {  // too far to spell alike: the keys holding each of its words (clock_ghz)
    std::vector<std::string> words, holding;
    for (std::size_t at = 0; at < path.size();) {
      const std::size_t end = std::min(path.find_first_of("._", at), path.size());
      if (end > at) words.push_back(path.substr(at, end - at));
      at = end + 1;
    }
    if (words.size() > 1)
      for (const std::string& key : all_paths())
        if (std::all_of(words.begin(), words.end(),
                        [&](const std::string& w) { return key.find(w) != std::string::npos; }))
          holding.push_back("'" + key + "'");
    if (!holding.empty() && holding.size() <= 3)
      msg += "; did you mean " + join(holding, " or ") + "?";
  }
  msg += " (see configs/README.md)";
  return msg;
}

/// Flatten the file's mapping into path → value, rejecting unknown keys and misplaced maps.
void flatten(const std::string& file, const YAML::Node& root,
             std::map<std::string, RawValue>& out) {
  if (root.IsNull()) return;
  if (!root.IsMap()) fail(origin_of(file, root), "", "expected a mapping of sections at top level");
  const auto sections = all_sections();
  std::set<std::string> seen;  // top-level keys: a section written twice would merge silently
  for (const auto& kv : root) {
    if (!kv.first.IsScalar())
      fail(origin_of(file, kv.first), "", "a key must be a name, not a list or map");
    const std::string key = kv.first.as<std::string>();
    const Origin at = origin_of(file, kv.first);
    const Param* p = find_param(key);  // a top-level parameter
    if (!p && std::find(sections.begin(), sections.end(), key) == sections.end())
      fail(at, key, unknown_key(key));
    if (!seen.insert(key).second) fail(at, key, p ? "key given twice" : "section given twice");
    if (p) {
      out[p->path] = {kv.second, origin_of(file, kv.second)};
      continue;
    }
    if (kv.second.IsNull()) continue;  // `router:` with nothing under it: the defaults
    if (!kv.second.IsMap())
      fail(origin_of(file, kv.second), key, "expected a mapping (a section of keys), got a " +
                                                std::string(kv.second.IsScalar() ? "scalar"
                                                                                 : "list"));
    for (const auto& inner : kv.second) {
      if (!inner.first.IsScalar())
        fail(origin_of(file, inner.first), key, "a key must be a name, not a list or map");
      const std::string path = key + "." + inner.first.as<std::string>();
      if (!find_param(path)) fail(origin_of(file, inner.first), path, unknown_key(path));
      if (out.count(path)) fail(origin_of(file, inner.first), path, "key given twice");
      out[path] = {inner.second, origin_of(file, inner.second)};
    }
  }
}


std::string type_name(ParamType t) {
  switch (t) {
    case ParamType::Integer: return "integer";
    case ParamType::Real: return "number";
    case ParamType::Boolean: return "boolean";
    case ParamType::Choice: return "choice";
    case ParamType::Text: return "string";
  }
  return "?";
}

std::string range_text(const Param& p) {
  return "[" + format_value(p.type == ParamType::Integer ? ParamValue(std::int64_t(p.min))
                                                         : ParamValue(p.min)) +
         ", " +
         format_value(p.type == ParamType::Integer ? ParamValue(std::int64_t(p.max))
                                                   : ParamValue(p.max)) +
         "]";
}

/// Convert and validate one YAML value for parameter p.
ParamValue convert(const Param& p, const RawValue& raw) {
  const YAML::Node& n = raw.node;
  if (!n.IsScalar()) {
    const std::string type = type_name(p.type);
    fail(raw.origin, p.path,
         std::string("expected ") +
             (std::string("aeiou").find(type[0]) != std::string::npos ? "an " : "a ") + type +
             ", got " +
             (n.IsMap()    ? "a mapping"
              : n.IsNull() ? "nothing"
                           : "a list"));
  }
  const std::string text = n.Scalar();
  switch (p.type) {
    case ParamType::Integer: {
      auto v = parse_integer(text, p.unit == "bytes");
      if (!v)
        fail(raw.origin, p.path,
             "expected an integer, got '" + text + "'" +
                 (has_leading_zero(text) ? " (no leading zero: it would read as octal elsewhere)"
                  : p.unit == "bytes"
                      ? " (a byte count; the suffixes KiB, MiB and GiB are allowed)"
                      : ""));
      if (*v < p.min || *v > p.max)
        fail(raw.origin, p.path,
             "value " + text + " is out of range " + range_text(p) + " " + p.unit + " (" +
                 p.description + ")");
      return *v;
    }
    case ParamType::Real: {
      const std::optional<double> number = parse_decimal_number(text);
      if (!number) fail(raw.origin, p.path, "expected a number, got '" + text + "'");
      const double v = *number;
      if (v < p.min || v > p.max)
        fail(raw.origin, p.path,
             "value " + text + " is out of range " + range_text(p) + " " + p.unit + " (" +
                 p.description + ")");
      return v;
    }
    case ParamType::Boolean: {
      // YAML 1.2's core schema. yaml-cpp also decodes YAML 1.1's yes/no/on/off/y/n, which
      // YAML 1.2 readers take as strings.
      if (text == "true" || text == "True" || text == "TRUE") return true;
      if (text == "false" || text == "False" || text == "FALSE") return false;
      fail(raw.origin, p.path, "expected true or false, got '" + text + "'");
    }
    case ParamType::Choice:
      if (std::find(p.choices.begin(), p.choices.end(), text) == p.choices.end())
        fail(raw.origin, p.path, unknown_name_message("value", text, p.choices));
      return text;
    case ParamType::Text: return text;
  }
  return text;
}

void check_consistency(const HwSpec& h, const std::map<std::string, RawValue>& given) {
  // `--set topology.kind=K` turns the file's machine into another kind: the file's keys of
  // its own kind (a mesh's rows and cols, a crossbar's ports) no longer apply and are dropped.
  const auto kind = given.find("topology.kind");
  const bool kind_overridden = kind != given.end() && kind->second.origin.from_set;
  for (const Param& p : hw_params()) {
    auto it = given.find(p.path);
    if (it == given.end() || !p.applies || p.applies(h)) continue;
    if (kind_overridden && !it->second.origin.from_set && p.path.rfind("topology.", 0) == 0)
      continue;
    fail(it->second.origin, p.path, "applies to " + p.applies_text + " only");
  }
  if ((h.pe.array_rows == 0) != (h.pe.array_cols == 0)) {
    auto it = given.find("pe.array_rows");
    if (it == given.end()) it = given.find("pe.array_cols");
    fail(it != given.end() ? it->second.origin : Origin{"config"}, "pe.array_rows",
         "pe.array_rows and pe.array_cols must both be 0 (no array) or both positive");
  }
  auto origin_of = [&](const char* a, const char* b) {
    auto it = given.find(a);
    if (it == given.end()) it = given.find(b);
    return it != given.end() ? it->second.origin : Origin{"config"};
  };
  if (const std::string why = noc::routing_mismatch(h.router.routing, h.topology.kind);
      !why.empty())
    fail(origin_of("router.routing", "topology.kind"), "router.routing", why);
  // The routers' limit (noc::Router), checked here so that the key and its place are named.
  const int ports = noc::Topology::build(h.topology).max_ports();
  if (ports * h.router.vcs > noc::Router::kMaxInputVcs)
    fail(origin_of("router.vcs", "topology.ports"), "router.vcs",
         std::to_string(ports) + " ports x " + std::to_string(h.router.vcs) +
             " VCs: a router supports at most " + std::to_string(noc::Router::kMaxInputVcs) +
             " input VCs");
  // A flit in flight on a link or in a router stage moves no flit for that long: the watchdog
  // must wait longer than one hop, or it reports a deadlock that is not one.
  const std::int64_t hop = h.link.latency + h.router.routing_delay + h.router.vc_alloc_delay +
                           h.router.sw_alloc_delay + h.router.st_delay;
  if (h.run.watchdog_cycles <= hop)
    fail(origin_of("run.watchdog_cycles", "link.latency"), "run.watchdog_cycles",
         std::to_string(h.run.watchdog_cycles) + " cycles is not longer than one hop (" +
             std::to_string(hop) + " cycles: link.latency + the router's delays)");
}

}  // namespace

HwSpec load_hw_config(const std::string& file, const std::vector<std::string>& overrides) {
  std::map<std::string, RawValue> given;
  if (!file.empty()) {
    check_input_path(file, file);
    // A directory opens as an empty stream: refuse it rather than read it as an empty config.
    if (std::filesystem::is_directory(file)) throw InputError(file + ": cannot open hardware config: it is a directory");
    std::ifstream in(file);
    if (!in)
      throw InputError(file + ": cannot open hardware config: " +
                       (std::filesystem::exists(file) ? "cannot read it" : "no such file"));
    std::stringstream text;
    text << in.rdbuf();
    std::vector<YAML::Node> docs;
    try {
      docs = YAML::LoadAll(text.str());
    } catch (const YAML::ParserException& e) {
      throw InputError(file + ":" + std::to_string(e.mark.line + 1) + ":" +
                       std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
    }
    // A second document ('---') would be ignored: refuse it (as optimizer/io/yaml_file.h does).
    if (docs.size() > 1)
      fail(origin_of(file, docs[1]), "", "a second YAML document (after '---'): give one per file");
    flatten(file, docs.empty() ? YAML::Node() : docs[0], given);
  }
  const bool file_sets_no_key = !file.empty() && given.empty();
  const bool crossbar_file =  // before --set
      given.count("topology.kind") && given.at("topology.kind").node.Scalar() == "crossbar";
  for (const std::string& o : overrides) {
    const Origin at{"--set " + o, true};
    const auto eq = o.find('=');
    if (eq == std::string::npos || eq == 0) fail(at, "", "expected key.path=value");
    std::string path = o.substr(0, eq);  // "router.vcs = 2" as written in prose
    path.erase(path.find_last_not_of(' ') + 1);
    path.erase(0, path.find_first_not_of(' '));
    if (path.empty()) fail(at, "", "expected key.path=value");
    if (!find_param(path)) fail(at, path, unknown_key(path));
    YAML::Node value;
    try {
      value = YAML::Load(o.substr(eq + 1));
    } catch (const YAML::Exception& e) {
      fail(at, path, "cannot parse value: " + e.msg);
    }
    if (value.IsNull()) fail(at, path, "missing value");
    if (auto was = given.find(path); was != given.end() && was->second.origin.from_set)
      fail(at, path, "given twice (also " + was->second.origin.where + "): give it once");
    given[path] = {value, at};
  }

  // The preset first: it supplies defaults for router.* keys.
  const Param& preset_param = *find_param("router.preset");
  std::string preset_name = std::get<std::string>(preset_param.default_value);
  if (auto it = given.find("router.preset"); it != given.end())
    preset_name = std::get<std::string>(convert(preset_param, it->second));
  const Preset* preset = nullptr;
  for (const auto& ps : router_presets())
    if (ps.name == preset_name) preset = &ps;

  HwSpec spec;
  for (const Param& p : hw_params()) {
    ParamValue v = p.default_value;
    if (preset)
      for (const auto& [path, value] : preset->values)
        if (path == p.path) v = value;
    if (auto it = given.find(p.path); it != given.end()) v = convert(p, it->second);
    p.set(spec, v);
  }
  // `--set topology.kind=crossbar` on a mesh file keeps its PEs: as many ports as the mesh had
  // routers (as a sweep's topology axis does), unless topology.ports is given.
  if (const auto kind = given.find("topology.kind");
      kind != given.end() && kind->second.origin.from_set && spec.topology.kind == "crossbar" &&
      !given.count("topology.ports") && (given.count("topology.rows") || given.count("topology.cols"))) {
    const auto pes = spec.topology.rows * spec.topology.cols;
    if (pes < 2 || pes > 64)
      fail(kind->second.origin, "topology.kind",
           "the " + std::to_string(spec.topology.rows) + "x" + std::to_string(spec.topology.cols) +
               " mesh has " + std::to_string(pes) +
               " PEs, and a crossbar 2 to 64 ports: give --set topology.ports=N");
    spec.topology.ports = static_cast<int>(pes);
  }
  // And `--set topology.kind=mesh` on a crossbar file keeps its PEs: a square mesh of as many
  // (16 ports: 4x4), or the other side of one given (16 ports, 8 rows: 8x2; not its default 4).
  if (const auto kind = given.find("topology.kind");
      kind != given.end() && kind->second.origin.from_set && spec.topology.kind == "mesh" &&
      crossbar_file && !(given.count("topology.rows") && given.count("topology.cols"))) {
    const bool rows = given.count("topology.rows") > 0, cols = given.count("topology.cols") > 0;
    const int ports = spec.topology.ports;
    int side = rows ? spec.topology.rows : cols ? spec.topology.cols : 1;
    while (!rows && !cols && (side + 1) * (side + 1) <= ports) ++side;
    if (rows || cols ? ports % side != 0 : side * side != ports)
      fail(kind->second.origin, "topology.kind",
           "the crossbar has " + std::to_string(ports) + " ports, " +
               (rows || cols
                    ? "not a multiple of " + std::to_string(side) + (rows ? " rows" : " columns")
                    : std::string("no square mesh has as many PEs")) +
               ": give --set topology.rows=R --set topology.cols=C");
    spec.topology.rows = cols ? ports / side : side;
    spec.topology.cols = rows ? ports / side : side;
  }
  check_consistency(spec, given);
  if (!file.empty()) spec.name = std::filesystem::path(file).stem().string();
  if (file_sets_no_key) spec.file_setting_no_key = file;
  return spec;
}

std::string resolved_yaml(const HwSpec& spec) {
  YAML::Emitter out;
  out << YAML::Comment("nocflow hardware config, fully resolved (defaults, preset and --set "
                       "applied); reference: configs/README.md");
  out << YAML::BeginMap;
  std::string open_section;
  for (const Param& p : hw_params()) {
    if (p.section() != open_section) {
      if (!open_section.empty()) out << YAML::EndMap;
      open_section = p.section();
      out << YAML::Key << open_section << YAML::Value << YAML::BeginMap;
    }
    if (p.applies && !p.applies(spec)) continue;
    out << YAML::Key << p.key() << YAML::Value << format_value(p.get(spec));
    std::string comment = p.unit;
    if (p.path == "router.alloc_iterations" && spec.router.alloc_iterations == 0)
      comment += " (0: by topology, here " +
                 std::to_string(noc::alloc_iterations_for(spec.router, spec.topology)) + ")";
    if (!comment.empty()) out << YAML::Comment(comment);
  }
  if (!open_section.empty()) out << YAML::EndMap;
  out << YAML::EndMap;
  return std::string(out.c_str()) + "\n";
}

std::string reference_markdown() {
  std::ostringstream md;
  md << "# Hardware configuration reference\n\n"
     << "<!-- Generated by `nocflow config --reference` from sim/config/hw_params.cpp. "
        "Do not edit by hand: a test fails when this file is out of date. -->\n\n"
     << "A hardware config is a YAML file of sections (`clock`, `topology`, `router`, ...), each "
        "a mapping of the keys below. Every key is optional: a missing key takes the router "
        "preset's value (for `router.*` keys) or else its default. Unknown keys, wrong types and "
        "values out of range are errors that name the file, line, column and key.\n\n"
     << "Check a file with `nocflow config --check FILE`. Every command that takes `--hw FILE` "
        "also takes `--set key.path=value` (repeatable, one key each time), which overrides the "
        "file (`--set "
        "topology.kind=crossbar` on a mesh file drops the file's `rows` and `cols` and gives the "
        "crossbar as many ports as the mesh had routers, unless `--set topology.ports=N` is given "
        "too, and `--set topology.kind=mesh` on a crossbar file of k x k ports makes a k x k mesh, "
        "any other port count needing `topology.rows` and `topology.cols`, or one of them: the "
        "other then keeps the ports, 16 ports with 8 rows making 8x2); commands that "
        "write an output folder save the fully resolved config there as `config.resolved.yaml`. "
        "Integer byte sizes accept the suffixes `KiB`, `MiB` and `GiB`. Integers are decimal, "
        "without a leading zero (`010` is refused: YAML 1.1 readers take it as octal 8); other "
        "numbers are decimal too (`0x10` is refused, which `std::stod` reads as 16).\n\n"
     << "Shipped configs: `configs/hw/` (`mesh4x4`, `mesh8x8`, `mesh16x16`, `crossbar16`, "
        "`booksim8x8`).\n";
  std::string open_section;
  for (const Param& p : hw_params()) {
    if (p.section() != open_section) {
      open_section = p.section();
      md << "\n## `" << open_section << "`\n\n"
         << "| key | type | unit | default | allowed | description |\n"
         << "|---|---|---|---|---|---|\n";
    }
    std::string allowed;
    if (p.type == ParamType::Choice) {
      for (const auto& c : p.choices) allowed += (allowed.empty() ? "" : ", ") + ("`" + c + "`");
    } else if (p.type == ParamType::Integer || p.type == ParamType::Real) {
      allowed = range_text(p);
    } else if (p.type == ParamType::Boolean) {
      allowed = "`true`, `false`";
    }
    md << "| `" << p.path << "` | " << type_name(p.type) << " | " << (p.unit.empty() ? "-" : p.unit)
       << " | `" << format_value(p.default_value) << "` | " << allowed << " | " << p.description
       << (p.applies_text.empty() ? "" : " (" + p.applies_text + " only)") << " |\n";
  }
  md << "\n## Router presets\n\n"
     << "`router.preset` supplies these values; any key written explicitly overrides them.\n\n"
     << "| preset | description | sets |\n|---|---|---|\n";
  for (const Preset& ps : router_presets()) {
    std::string sets;
    for (const auto& [path, value] : ps.values)
      sets += (sets.empty() ? "" : ", ") + ("`" + path + "=" + format_value(value) + "`");
    md << "| `" << ps.name << "` | " << ps.description << " | " << sets << " |\n";
  }
  return md.str();
}

std::string topology_summary(const HwSpec& h) {
  return (h.topology.kind == "crossbar"
              ? "crossbar " + std::to_string(h.topology.ports) + " ports"
              : "mesh " + std::to_string(h.topology.rows) + "x" + std::to_string(h.topology.cols)) +
         " (" + std::to_string(h.topology.num_nodes()) +
         (h.topology.num_nodes() == 1 ? " PE)" : " PEs)");
}

std::string one_line_summary(const HwSpec& h) {
  // A crossbar is one hop: nothing to route.
  return topology_summary(h) + ", " + components_summary(h, h.topology.kind != "crossbar");
}

std::string components_summary(const HwSpec& h, bool with_routing) {
  // The router's pipeline as the stage keys make it (they may differ from the preset's).
  const int pipeline = (h.router.lookahead_routing ? 0 : h.router.routing_delay) +
                       h.router.vc_alloc_delay + h.router.sw_alloc_delay -
                       (h.router.speculative ? 1 : 0) + h.router.st_delay;
  std::ostringstream s;
  s << "router " << h.router.preset << " (" << pipeline << "-cycle pipeline): " << h.router.vcs
    << " VCs x " << h.router.buffer_depth << " flits, "
    << (with_routing ? h.router.routing + ", " : "");
  if (const int iterations = noc::alloc_iterations_for(h.router, h.topology); iterations > 1)
    s << iterations << " iSLIP iterations, ";
  s << h.link.width_bytes << " B/flit, link " << counted(h.link.latency, "cycle") << ", NI "
    << h.ni.channels << (h.ni.channels == 1 ? " channel, " : " channels, ")
    << format_value(h.clock.frequency_ghz) << " GHz, " << h.pe.macs_per_cycle << " MACs/cycle/PE";
  if (h.pe.array_rows > 0) s << " (" << h.pe.array_rows << "x" << h.pe.array_cols << " array)";
  s << ", " << binary_size(h.pe.sram_bytes) << " SRAM/PE";
  return s.str();
}

std::vector<std::string> hw_notes(const HwSpec& h) {
  std::vector<std::string> notes;
  if (!h.file_setting_no_key.empty())
    notes.push_back(
        h.file_setting_no_key +
        " sets no key: every value not given by --set is its default (configs/README.md)");
  if (h.pe.array_rows > 0 && h.pe.array_rows * h.pe.array_cols != h.pe.macs_per_cycle)
    notes.push_back(
        "pe.array_rows x pe.array_cols = " + std::to_string(h.pe.array_rows * h.pe.array_cols) +
        " MACs, pe.macs_per_cycle " + std::to_string(h.pe.macs_per_cycle) +
        ": the array's shape sets its utilisation, pe.macs_per_cycle its rate (a bigger "
        "array at the same rate computes slower); set them to agree");
  if (h.router.lookahead_routing && h.router.routing_delay != 1)
    notes.push_back("router.routing_delay " + std::to_string(h.router.routing_delay) +
                    " has no effect: with router.lookahead_routing each router computes the next "
                    "one's route, outside the pipeline");
  if (h.topology.kind == "crossbar" && h.router.routing != "xy")
    notes.push_back("router.routing " + h.router.routing +
                    " has no effect: a crossbar has one route between any two ports");
  return notes;
}

}  // namespace nocflow::sim
