// SPDX-License-Identifier: MIT
#include "optimizer/io/yaml_file.h"

#include <filesystem>

#include "noc/base/error.h"

namespace nocflow::optimizer {

YAML::Node load_yaml_file(const std::string& file, const std::string& what) {
  // A directory opens, then fails to read with a stream error: say what it is instead.
  if (std::filesystem::is_directory(file)) throw InputError(file + ": cannot read the " + what + ": it is a directory");
  try {
    return YAML::LoadFile(file);
  } catch (const YAML::BadFile&) {
    throw InputError(
        file + ": cannot read the " + what + ": " +
        (std::filesystem::exists(file) ? "permission denied or unreadable" : "no such file"));
  } catch (const YAML::ParserException& e) {
    throw InputError(file + ":" + std::to_string(e.mark.line + 1) + ":" + std::to_string(e.mark.column + 1) +
                     ": YAML syntax error: " + e.msg);
  }
}

}  // namespace nocflow::optimizer
