// SPDX-License-Identifier: MIT
#pragma once
// What a call refuses: the message of the InputError it throws.
#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "noc/base/error.h"

/// Expects `part` in the message `text` (printed whole when it is not).
#define EXPECT_HAS(text, part) EXPECT_NE((text).find(part), std::string::npos) << (text)

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
