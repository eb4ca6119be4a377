// SPDX-License-Identifier: MIT
#pragma once
// Reading a YAML file the optimizer's way: a missing or unreadable file, or a syntax error,
// becomes one InputError naming the file (and line:column for syntax errors).
#include <yaml-cpp/yaml.h>

#include <string>

namespace nocflow::optimizer {

/// `what` names the file's role in the message: "cannot read the plan".
YAML::Node load_yaml_file(const std::string& file, const std::string& what);

}  // namespace nocflow::optimizer
