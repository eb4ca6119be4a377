// SPDX-License-Identifier: MIT
#pragma once
// JSON as every output file writes it.
#include <string>

namespace nocflow {

/// `j` as text (`indent` -1: compact). A string that is not UTF-8 (a path given on the command
/// line) has its bad bytes replaced by U+FFFD, where nlohmann's default threw after the run.
template <class Json>
std::string json_text(const Json& j, int indent = -1) {
  return j.dump(indent, ' ', false, Json::error_handler_t::replace);
}

}  // namespace nocflow
