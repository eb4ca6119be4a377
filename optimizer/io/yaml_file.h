// SPDX-License-Identifier: MIT
#pragma once
// Reading a YAML file the optimizer's way: a missing or unreadable file, or a syntax error,
// becomes one InputError naming the file (and line:column for syntax errors).
#include <yaml-cpp/yaml.h>

#include <array>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "noc/base/error.h"
#include "noc/base/format.h"

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

/// f(), with a yaml-cpp error (a node read as a kind it is not: a list where a map belongs)
/// turned into an InputError at its line and column of `origin`. Readers check what they
/// expect and say so in their words; this is the net for what they miss, which was an internal
/// error (exit 1).
template <class F>
auto yaml_errors_as_input(const std::string& origin, F&& f) -> decltype(f()) {
  try {
    return f();
  } catch (const YAML::Exception& e) {
    throw InputError(e.mark.is_null() ? origin + ": " + e.msg
                                      : origin + ":" + std::to_string(e.mark.line + 1) + ":" +
                                            std::to_string(e.mark.column + 1) + ": " + e.msg);
  }
}

template <class T>
inline constexpr bool kWholeNumber = std::is_integral_v<T> && !std::is_same_v<T, bool>;
template <class T>
struct WholeNumbers : std::false_type {};
template <class T, class A>
struct WholeNumbers<std::vector<T, A>> : std::bool_constant<kWholeNumber<T>> {};
template <class T, std::size_t N>
struct WholeNumbers<std::array<T, N>> : std::bool_constant<kWholeNumber<T>> {};

/// `n` as a T, or nullopt when it is not one. An integer, alone or in a list, must be written
/// in decimal without a leading zero (is_decimal_integer): yaml-cpp alone reads "010" as octal
/// 8 and "0x10" as 16.
template <class T>
std::optional<T> yaml_as(const YAML::Node& n) {
  if constexpr (kWholeNumber<T>)
    if (!n.IsScalar() || !is_decimal_integer(n.Scalar())) return std::nullopt;
  if constexpr (WholeNumbers<T>::value) {
    if (!n.IsSequence()) return std::nullopt;
    for (const YAML::Node& e : n)
      if (!e.IsScalar() || !is_decimal_integer(e.Scalar())) return std::nullopt;
  }
  try {
    return n.as<T>();
  } catch (const YAML::Exception&) {
    return std::nullopt;
  }
}

}  // namespace nocflow::optimizer
