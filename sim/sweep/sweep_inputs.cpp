// SPDX-License-Identifier: MIT
#include "sim/sweep/sweep_inputs.h"

#include <yaml-cpp/yaml.h>

#include <fstream>
#include <map>
#include <sstream>

#include "noc/base/format.h"
#include "sim/config/hw_loader.h"
#include "sim/output/build_id.h"

namespace nocflow::sim {

std::string file_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string network_digests(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  std::map<std::string, std::string> files;  // as the spec names it -> the file read
  for (std::size_t a = 0; a < spec.axes.size(); ++a)
    if (spec.axes[a].name == "network")
      for (const SweepPoint& p : points)
        if (p.network_file()) files.emplace(p.values[a], p.network);
  std::string out = "# network files the sweep read (size, FNV-1a 64): --resume checks them\n";
  for (const auto& [f, path] : files) {
    const std::string bytes = file_text(path);
    out += f + " " + std::to_string(bytes.size()) + " " + fnv1a_hex(bytes) + "\n";
  }
  return out;
}

std::string inputs_text(const SweepSpec& spec, const std::string& config,
                        const std::string& networks) {
  return "# nocflow " + nocflow_build() + "\n" + spec.text + "\n# the machine\n" + config +
         networks;
}

std::string inputs_build(const std::string& inputs) {
  const std::string line = inputs.substr(0, inputs.find('\n'));
  return line.rfind("# ", 0) == 0 ? line.substr(2) : line;
}

std::string sweep_inputs(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
  return inputs_text(spec, resolved_yaml(load_hw_config(spec.hw, spec.overrides)),
                     network_digests(spec, points));
}

std::string first_difference(const std::string& then, const std::string& now,
                             const std::string& then_name, const std::string& now_name,
                             int first_line) {
  std::istringstream a(then), b(now);
  std::string x, y;
  for (int line = first_line;; ++line) {
    const bool more_a = static_cast<bool>(std::getline(a, x)),
               more_b = static_cast<bool>(std::getline(b, y));
    if (!more_a && !more_b) return "";
    if (!more_a || !more_b || x != y)
      return "line " + std::to_string(line) + ": " + (more_a ? "'" + x + "'" : "(none)") + " " +
             then_name + ", " + (more_b ? "'" + y + "'" : "(none)") + " " + now_name;
  }
}

bool same_yaml(const std::string& a, const std::string& b) {
  if (a == b) return true;
  try {
    auto normal = [](const std::string& text) {
      YAML::Emitter out;
      out << YAML::Load(text);
      return std::string(out.c_str());
    };
    return normal(a) == normal(b);
  } catch (const YAML::Exception&) {
    return false;
  }
}

}  // namespace nocflow::sim
