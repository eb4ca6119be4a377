// SPDX-License-Identifier: MIT
#pragma once
// SystemC can elaborate only once per process, so commands that run many simulations
// (validate, sweep) run each one in a forked child. run_in_child(fn) forks; the child runs fn
// and sends back the string it returns; the parent returns that string. An InputError or
// CheckError thrown in the child is thrown again in the parent with the same type and
// message; any other failure (another exception, a crash, a signal) becomes a CheckError that
// says how the child ended.
#include <functional>
#include <string>

namespace nocflow::sim {

std::string run_in_child(const std::function<std::string()>& fn);

}  // namespace nocflow::sim
