// SPDX-License-Identifier: MIT
#pragma once
// SystemC can elaborate only once per process, so commands that run many simulations
// (validate, sweep) run each one in a forked child. The child runs a function and sends back
// the string it returns. An InputError or CheckError thrown in the child comes back with the
// same type and message; any other failure (another exception, a crash, a signal) is a
// CheckError that says how the child ended. While children run, SIGINT, SIGTERM, SIGHUP and
// SIGPIPE (output piped into a reader that quit, e.g. `head`) to the parent kill them before
// ending the parent, so that no orphan keeps simulating; a parent killed outright (SIGKILL)
// takes them with it too (Linux's parent-death signal).
#include <cstddef>
#include <functional>
#include <optional>
#include <string>

namespace nocflow::sim {

/// Forks; the child runs fn; returns its string or throws its error (see above).
std::string run_in_child(const std::function<std::string()>& fn);

/// How one of several children ended.
struct ChildResult {
  enum class Kind { Ok, InputError, CheckError } kind = Kind::Ok;
  std::string text;  ///< the returned string, or the error message
};

/// Runs task(0) .. task(n-1), each in its own forked child, at most `jobs` (≤ 256) at a time. In the
/// parent, started(i) is called as each child is forked, done(i, result) as each ends (completion
/// order), and tick() about once a second while children run (progress display). Errors do not
/// stop the others.
void run_in_children(std::size_t n, int jobs, const std::function<std::string(std::size_t)>& task,
                     const std::function<void(std::size_t, const ChildResult&)>& done,
                     const std::function<void()>& tick = {},
                     const std::function<void(std::size_t)>& started = {});

/// As run_in_children, for tasks handed out one at a time (shared with other processes: the
/// ranks of an MPI sweep): claim() gives the next task to start, or nullopt when none is left.
/// It is called only when a job is free, and not again once it has said none is left.
void run_claimed_in_children(const std::function<std::optional<std::size_t>()>& claim, int jobs,
                             const std::function<std::string(std::size_t)>& task,
                             const std::function<void(std::size_t, const ChildResult&)>& done,
                             const std::function<void()>& tick = {},
                             const std::function<void(std::size_t)>& started = {});

/// A line written to stderr when one of those signals ends the parent (e.g. how to resume);
/// "" for none. Kept until replaced; while one is set, the signals end the process with it
/// whether or not children run. A signal the process was started ignoring stays ignored
/// (nohup's SIGHUP, a shell's background job's SIGINT), in the children too.
void set_interrupt_note(const std::string& note);

/// Clears the interrupt note when it goes out of scope: a run that ends by an error leaves no
/// note of a stage it has left.
struct InterruptNoteScope {
  InterruptNoteScope() = default;
  InterruptNoteScope(const InterruptNoteScope&) = delete;
  InterruptNoteScope& operator=(const InterruptNoteScope&) = delete;
  ~InterruptNoteScope() { set_interrupt_note(""); }
};

}  // namespace nocflow::sim
