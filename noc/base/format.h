// SPDX-License-Identifier: MIT
#pragma once
// Numbers as text for reports and progress lines, and back (parse_integer); text as a CSV field
// or a Graphviz string, or as a digest.
#include <charconv>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <limits>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>

namespace nocflow {

/// FNV-1a 64 of `bytes`, continuing from the state `h` (the offset basis for a fresh digest).
inline std::uint64_t fnv1a(std::string_view bytes, std::uint64_t h = 0xcbf29ce484222325ull) {
  for (const unsigned char c : bytes) h = (h ^ c) * 0x100000001b3ull;
  return h;
}

/// `h` as 16 hex digits.
inline std::string hex16(std::uint64_t h) {
  std::ostringstream o;
  o << std::hex << std::setw(16) << std::setfill('0') << h;
  return o.str();
}

/// FNV-1a 64 of `bytes` as 16 hex digits: a digest that says whether a file or a text changed.
inline std::string fnv1a_hex(std::string_view bytes) {
  return hex16(fnv1a(bytes));
}

/// `v` with `digits` digits after the point: fixed(2.345) == "2.3", fixed(2.345, 2) == "2.35";
/// a value that rounds to zero has no sign (fixed(-0.01) == "0.0").
inline std::string fixed(double v, int digits = 1) {
  std::ostringstream o;
  o << std::fixed << std::setprecision(digits) << v;
  std::string s = o.str();
  if (s[0] == '-' && s.find_first_not_of("0.", 1) == std::string::npos) s.erase(0, 1);
  return s;
}

/// Wall seconds as a progress line shows them, to the second: "7s", "2m05s", "1h02m05s".
inline std::string duration_text(double seconds) {
  const long t = std::lround(seconds);
  std::ostringstream o;
  if (t >= 3600) o << t / 3600 << "h";
  if (t >= 60) o << std::setw(t >= 3600 ? 2 : 1) << std::setfill('0') << (t / 60) % 60 << "m";
  o << std::setw(t >= 60 ? 2 : 1) << std::setfill('0') << t % 60 << "s";
  return o.str();
}

/// `v` to 12 significant digits, as plan.yaml writes its figures: a sum's last-bit noise
/// (204.79999999999998 for 204.8) left out of a JSON that shows the same figure.
inline double as_written(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::general, 12);
  double out = v;
  std::from_chars(buf, r.ptr, out);
  return out;
}

/// The shortest text that reads back as the same double ("1338", "0.25", "1e+20"): a CSV value
/// from which derived columns recompute exactly.
inline std::string shortest(double v) {
  char buf[32];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, r.ptr);
}

/// A count and its noun, singular for one: counted(1, "layer") == "1 layer", counted(3, "layer")
/// == "3 layers", counted(2, "micro-batch") == "2 micro-batches".
inline std::string counted(std::int64_t n, const std::string& noun) {
  const bool es = !noun.empty() && (noun.back() == 'h' || noun.back() == 's' || noun.back() == 'x');
  return std::to_string(n) + " " + noun + (n == 1 ? "" : es ? "es" : "s");
}

/// A fraction as a signed percentage: signed_percent(0.0043) == "+0.4%", signed_percent(-0.71)
/// == "-71.0%"; one that rounds to zero has no sign ("0.0%").
inline std::string signed_percent(double fraction, int digits = 1) {
  const std::string s = fixed(100 * fraction, digits);
  return (s[0] == '-' || s.find_first_not_of("0.") == std::string::npos ? s : "+" + s) + "%";
}

/// The unit to print an energy of `pj` picojoules in: the largest of uJ, nJ and pJ in which it
/// is at least 1 (pJ below), as {picojoules per unit, name}: energy_unit(7.3e7) == {1e6, "uJ"},
/// energy_unit(2048) == {1e3, "nJ"}, energy_unit(736) == {1, "pJ"} (a 2-flit message's NoC
/// energy, which printed as "0.000 uJ").
inline std::pair<double, const char*> energy_unit(double pj) {
  if (pj >= 1e6) return {1e6, "uJ"};
  if (pj >= 1e3) return {1e3, "nJ"};
  return {1, "pJ"};
}

/// An energy with 3 decimals in its energy_unit: energy_text(7.2233e7) == "72.233 uJ",
/// energy_text(736) == "736.000 pJ".
inline std::string energy_text(double pj) {
  const auto [per, unit] = energy_unit(pj);
  return fixed(pj / per, 3) + " " + unit;
}

/// A byte count in the largest binary unit that divides it: "1 MiB", "512 KiB", "1000 B".
inline std::string binary_size(std::int64_t bytes) {
  for (const auto& [unit, size] :
       {std::pair{"GiB", 1LL << 30}, {"MiB", 1LL << 20}, {"KiB", 1LL << 10}})
    if (bytes >= size && bytes % size == 0) return std::to_string(bytes / size) + " " + unit;
  return std::to_string(bytes) + " B";
}

/// "010", "-07": a number some readers take as octal (YAML 1.1, yaml-cpp, CLI11: 8), others as
/// decimal.
inline bool has_leading_zero(const std::string& text) {
  const std::size_t at = !text.empty() && (text[0] == '-' || text[0] == '+') ? 1 : 0;
  return text.size() > at + 1 && text[at] == '0' && text[at + 1] >= '0' && text[at + 1] <= '9';
}

/// Decimal digits, after a minus sign or none, without a leading zero: a whole number that
/// every reader takes alike ("12", "-3", "0"; not "010", "0x10", "+4", "1e3", "2.5", " 4").
inline bool is_decimal_integer(const std::string& text) {
  const std::size_t at = !text.empty() && text[0] == '-' ? 1 : 0;
  return text.size() > at && text.find_first_not_of("0123456789", at) == std::string::npos &&
         !has_leading_zero(text);
}

/// An integer as the config reads one: decimal digits, with `allow_binary_suffix` also a count
/// of KiB, MiB or GiB ("4KiB", "1 MiB"); nullopt when it is not one (is_decimal_integer: no
/// leading zero, no plus sign) or would overflow.
inline std::optional<std::int64_t> parse_integer(std::string text, bool allow_binary_suffix) {
  std::int64_t scale = 1;
  if (allow_binary_suffix) {
    static const std::pair<const char*, std::int64_t> suffixes[] = {
        {"KiB", 1LL << 10}, {"MiB", 1LL << 20}, {"GiB", 1LL << 30}};
    for (const auto& [suffix, factor] : suffixes) {
      const std::string s = suffix;
      if (text.size() > s.size() && text.compare(text.size() - s.size(), s.size(), s) == 0) {
        text = text.substr(0, text.size() - s.size());
        while (!text.empty() && text.back() == ' ') text.pop_back();
        scale = factor;
        break;
      }
    }
  }
  if (!is_decimal_integer(text)) return std::nullopt;
  std::size_t used = 0;
  try {
    const long long v = std::stoll(text, &used, 10);
    if (used != text.size()) return std::nullopt;
    if (v > std::numeric_limits<std::int64_t>::max() / scale ||
        v < std::numeric_limits<std::int64_t>::min() / scale)
      return std::nullopt;  // would wrap
    return static_cast<std::int64_t>(v) * scale;
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

/// A finite decimal number ("2.5", "-3", "1e-3", ".5"); nullopt for anything else, hexadecimal
/// ("0x10", which std::stod reads as 16), inf and nan, or blanks around it included.
inline std::optional<double> parse_decimal_number(const std::string& text) {
  if (text.empty() || text.find_first_not_of("0123456789.eE+-") != std::string::npos)
    return std::nullopt;
  try {
    std::size_t used = 0;
    const double v = std::stod(text, &used);
    if (used == text.size() && std::isfinite(v)) return v;
  } catch (const std::exception&) {  // no number, or out of range
  }
  return std::nullopt;
}

/// `s` as one CSV field: quoted (quotes doubled, newlines as spaces) when it holds a comma, a
/// quote or a newline.
inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

/// `s` as a quoted Graphviz (dot) string: quotes and backslashes escaped, a newline in `s` as
/// dot's line break (\n).
inline std::string dot_string(const std::string& s) {
  std::string q = "\"";
  for (char c : s)
    q += c == '"' ? "\\\"" : c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return q + "\"";
}

}  // namespace nocflow
