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

/// An InputError that another process reports: an MPI rank other than 0 stopping on the verdict
/// rank 0 also stops on and prints (nocflow sweep). The command line exits 2 and prints nothing,
/// so that mpirun shows the message once, not once per rank.
class QuietInputError : public InputError {
 public:
  using InputError::InputError;
};

/// A run's self-check failed: a flit lost or duplicated, credits not conserved, a deadlock
/// caught by the watchdog. The message names router, port and VC.
class CheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A CheckError that another process reports (as QuietInputError): exit 3, nothing printed.
class QuietCheckError : public CheckError {
 public:
  using CheckError::CheckError;
};

}  // namespace nocflow
