// SPDX-License-Identifier: MIT
#pragma once
// Error types shared by every nocflow library. Library code throws; only the command line
// turns an error into a message and an exit code (InputError → 2, CheckError → 3, others → 1).
#include <stdexcept>
#include <string>

namespace nocflow {

/// Bad user input: config, network, plan, command-line values. The message is complete and
/// names where the problem is (file:line:col and key path where known).
class InputError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A run's self-check failed: a flit lost or duplicated, credits not conserved, a deadlock
/// caught by the watchdog. The message names router, port and VC.
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace nocflow
