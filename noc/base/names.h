// SPDX-License-Identifier: MIT
#pragma once
// Small helpers for name look-ups: "did you mean" suggestions and lists of known names, used
// wherever an implementation or key is chosen by name.
#include <string>
#include <string_view>
#include <vector>

namespace nocflow {

/// Levenshtein distance between two strings.
std::size_t edit_distance(std::string_view a, std::string_view b);

/// The candidate closest to `name` if it is close enough to be a plausible typo, else "".
std::string closest_name(std::string_view name, const std::vector<std::string>& candidates);

/// "a, b, c"
std::string join(const std::vector<std::string>& items, std::string_view sep = ", ");

/// "unknown <what> 'name'; did you mean 'x'? (known: a, b, c)"
std::string unknown_name_message(std::string_view what, std::string_view name,
                                 const std::vector<std::string>& known);

}  // namespace nocflow
