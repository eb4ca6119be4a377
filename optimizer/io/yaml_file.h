// SPDX-License-Identifier: MIT
#pragma once
// Reading a YAML file the optimizer's way: a missing or unreadable file, or a syntax error,
// becomes one InputError naming the file (and line:column for syntax errors).
#include <yaml-cpp/yaml.h>

#include <string>

namespace nocflow::optimizer {

/// `what` names the file's role in the message: "cannot read the plan". A key given twice in
/// one mapping is refused (reject_duplicate_keys).
YAML::Node load_yaml_file(const std::string& file, const std::string& what);

/// `text` as one YAML document: a syntax error, or a second document ('---'), which readers
/// would ignore, is an InputError naming `origin`, line and column. Empty text is a null node.
YAML::Node parse_one_document(const std::string& text, const std::string& origin);

/// Throws InputError "origin:line:col: key 'k' given twice (first at line L)" for the first
/// mapping, at any depth, that has a key twice: YAML parsers keep both and readers take one.
/// A key that is a list or map (`? [a, b]`) is refused the same way.
void reject_duplicate_keys(const YAML::Node& node, const std::string& origin);

}  // namespace nocflow::optimizer
