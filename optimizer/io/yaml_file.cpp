// SPDX-License-Identifier: MIT
#include "optimizer/io/yaml_file.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <unordered_set>
#include <vector>

#include "noc/base/error.h"
#include "noc/base/input_file.h"
#include "noc/base/text_input.h"

namespace nocflow::optimizer {

YAML::Node parse_one_document(const std::string& text, const std::string& origin) {
  check_utf8_file(text, origin);  // yaml-cpp takes any bytes, and names go on to JSON
  try {
    const std::vector<YAML::Node> docs = YAML::LoadAll(text);
    if (docs.size() > 1) {
      const YAML::Mark m = docs[1].Mark();
      throw InputError(origin + ":" + std::to_string(m.line + 1) + ":" +
                       std::to_string(m.column + 1) +
                       ": a second YAML document (after '---'): give one per file");
    }
    return docs.empty() ? YAML::Node() : docs[0];
  } catch (const YAML::ParserException& e) {
    throw InputError(origin + ":" + std::to_string(e.mark.line + 1) + ":" +
                     std::to_string(e.mark.column + 1) + ": YAML syntax error: " + e.msg);
  }
}

YAML::Node load_yaml_file(const std::string& file, const std::string& what) {
  check_input_path(file, file);
  // A directory opens, then fails to read with a stream error: say what it is instead.
  if (std::filesystem::is_directory(file)) throw InputError(file + ": cannot read the " + what + ": it is a directory");
  std::ifstream in(file, std::ios::binary);
  if (!in)
    throw InputError(
        file + ": cannot read the " + what + ": " +
        (std::filesystem::exists(file) ? "permission denied or unreadable" : "no such file"));
  std::ostringstream text;
  text << in.rdbuf();
  YAML::Node root = parse_one_document(text.str(), file);
  reject_duplicate_keys(root, file);
  return root;
}

namespace {

/// reject_duplicate_keys below `node`, each list and map once: an alias is the node it names
/// (the same mark), and nine levels of lists of nine aliases took 20 s to walk.
void check_keys(const YAML::Node& node, const std::string& origin,
                std::unordered_set<int>& walked) {
  if (!node.IsSequence() && !node.IsMap()) return;
  if (const int at = node.Mark().pos; at >= 0 && !walked.insert(at).second) return;
  if (node.IsSequence()) {
    for (const auto& item : node) check_keys(item, origin, walked);
    return;
  }
  std::map<std::string, int> seen;  // scalar key → its line
  for (const auto& kv : node) {
    // `? [a, b]` or `? {a: 1}` makes a list or map a key; every reader expects names.
    if (!kv.first.IsScalar())
      throw InputError(origin + ":" + std::to_string(kv.first.Mark().line + 1) + ":" +
                       std::to_string(kv.first.Mark().column + 1) +
                       ": a key must be a name, not a list or map");
    const auto [it, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark().line + 1);
    if (!fresh)
      throw InputError(origin + ":" + std::to_string(kv.first.Mark().line + 1) + ":" +
                       std::to_string(kv.first.Mark().column + 1) + ": key '" + kv.first.Scalar() +
                       "' given twice (first at line " + std::to_string(it->second) + ")");
    check_keys(kv.second, origin, walked);
  }
}

}  // namespace

void reject_duplicate_keys(const YAML::Node& node, const std::string& origin) {
  std::unordered_set<int> walked;
  check_keys(node, origin, walked);
}

}  // namespace nocflow::optimizer
