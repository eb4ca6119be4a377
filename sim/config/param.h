// SPDX-License-Identifier: MIT
#pragma once
// A hardware parameter is declared exactly once (sim/config/hw_params.cpp) with its key path,
// type, unit, default, range and description, plus how to store it into HwSpec. The loader,
// the resolved-config writer and the generated reference (configs/README.md) all read these.
#include <cstdint>
#include <functional>
#include <string>
#include <variant>
#include <vector>

#include "sim/config/hw_spec.h"

namespace nocflow::sim {

enum class ParamType { Integer, Real, Boolean, Choice, Text };

using ParamValue = std::variant<std::int64_t, double, bool, std::string>;

struct Param {
  std::string path;  ///< "router.vcs"
  ParamType type = ParamType::Integer;
  std::string unit;  ///< "cycles", "flits", "bytes", ... ("" when unitless)
  ParamValue default_value;
  double min = 0;  ///< inclusive range for Integer and Real
  double max = 0;
  std::vector<std::string> choices;  ///< for Choice
  std::string description;
  std::function<void(HwSpec&, const ParamValue&)> set;
  std::function<ParamValue(const HwSpec&)> get;
  /// When set, the key is meaningful only if this holds (e.g. topology.rows for a mesh); giving
  /// it otherwise is an error, and the resolved config leaves it out.
  std::function<bool(const HwSpec&)> applies;
  std::string applies_text;  ///< "kind: mesh"

  std::string section() const { return path.substr(0, path.find('.')); }
  std::string key() const { return path.substr(path.find('.') + 1); }
};

/// A router preset: a named set of values for router.* keys, applied before explicit keys.
struct Preset {
  std::string name;
  std::string description;
  std::vector<std::pair<std::string, ParamValue>> values;
};

const std::vector<Param>& hw_params();
/// The parameter at `path` ("router.vcs"), or nullptr.
const Param* find_param(const std::string& path);
const std::vector<Preset>& router_presets();

/// "4", "1.5", "true", "xy"
std::string format_value(const ParamValue& v);

// Declaration helpers: bind a parameter to a member of a section of HwSpec.
namespace detail {
template <class T>
ParamType type_of() {
  if constexpr (std::is_same_v<T, bool>) return ParamType::Boolean;
  else if constexpr (std::is_integral_v<T>) return ParamType::Integer;
  else if constexpr (std::is_floating_point_v<T>) return ParamType::Real;
  else return ParamType::Text;
}
template <class T>
ParamValue to_value(const T& v) {
  if constexpr (std::is_same_v<T, bool>) return v;
  else if constexpr (std::is_integral_v<T>) return static_cast<std::int64_t>(v);
  else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
  else return std::string(v);
}
template <class T>
T from_value(const ParamValue& v) {
  if constexpr (std::is_same_v<T, bool>) return std::get<bool>(v);
  else if constexpr (std::is_integral_v<T>) return static_cast<T>(std::get<std::int64_t>(v));
  else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(std::get<double>(v));
  else return std::get<std::string>(v);
}
}  // namespace detail

/// Fluent builder: field("router.vcs", &HwSpec::router, &noc::RouterSpec::vcs).unit(...)...
class ParamBuilder {
 public:
  explicit ParamBuilder(Param p) : p_(std::move(p)) {}
  ParamBuilder& unit(std::string u) { p_.unit = std::move(u); return *this; }
  ParamBuilder& def(ParamValue v) { p_.default_value = std::move(v); return *this; }
  ParamBuilder& range(double lo, double hi) { p_.min = lo; p_.max = hi; return *this; }
  ParamBuilder& choices(std::vector<std::string> c) {
    p_.type = ParamType::Choice;
    p_.choices = std::move(c);
    return *this;
  }
  ParamBuilder& doc(std::string d) { p_.description = std::move(d); return *this; }
  ParamBuilder& only_if(std::function<bool(const HwSpec&)> pred, std::string text) {
    p_.applies = std::move(pred);
    p_.applies_text = std::move(text);
    return *this;
  }
  operator Param() const { return p_; }  // NOLINT: builder converts implicitly by design

 private:
  Param p_;
};

template <class Section, class T>
ParamBuilder field(std::string path, Section HwSpec::*section, T Section::*member) {
  Param p;
  p.path = std::move(path);
  p.type = detail::type_of<T>();
  p.set = [section, member](HwSpec& h, const ParamValue& v) {
    (h.*section).*member = detail::from_value<T>(v);
  };
  p.get = [section, member](const HwSpec& h) { return detail::to_value((h.*section).*member); };
  return ParamBuilder(std::move(p));
}

}  // namespace nocflow::sim
