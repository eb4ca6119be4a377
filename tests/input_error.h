// SPDX-License-Identifier: MIT
#pragma once
// What a call refuses: the message of the InputError it throws.
#include <functional>
#include <string>

#include "noc/base/error.h"

namespace nocflow::testing {

/// The InputError message of `f`, or "(no InputError)" when it returns.
inline std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace nocflow::testing
