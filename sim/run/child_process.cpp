// SPDX-License-Identifier: MIT
#include "sim/run/child_process.h"

#include <poll.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <vector>

#include "noc/base/error.h"

namespace nocflow::sim {
namespace {

// First byte of the child's report: how it ended.
constexpr char kOk = 'O', kInput = 'I', kCheck = 'C', kOther = 'X';

void write_all(int fd, const std::string& data) {
  std::size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n <= 0) return;
    done += static_cast<std::size_t>(n);
  }
}

// Running children, for the signal handler below (a fixed array: async-signal-safe).
constexpr int kMaxChildren = 256;
volatile pid_t g_children[kMaxChildren] = {};
// The interrupt note, written by the handler with write(2) (async-signal-safe): two buffers,
// the one in use named by g_note_index, so that rewriting the note never shows the handler a
// half-written one.
constexpr std::size_t kNoteBytes = 512;
char g_notes[2][kNoteBytes] = {};
volatile std::sig_atomic_t g_note_sizes[2] = {0, 0};
volatile std::sig_atomic_t g_note_index = 0;

/// SIGINT, SIGTERM, SIGHUP or SIGPIPE to the parent (Ctrl-C, mpirun stopping a rank, a batch
/// system's kill, output piped into a reader that quit) ends the children too, then the parent
/// as the signal would have: no orphaned simulation keeps running.
void end_children_and_exit(int sig) {
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] > 0) ::kill(g_children[i], SIGKILL);
  const int at = g_note_index;
  if (g_note_sizes[at] > 0) [[maybe_unused]]
    const auto n = ::write(STDERR_FILENO, g_notes[at], static_cast<std::size_t>(g_note_sizes[at]));
  ::signal(sig, SIG_DFL);
  ::raise(sig);
}

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

// Who needs the handler installed (a ForwardSignals, a set note), and the handlers it replaced.
int g_forwarding_users = 0;
struct sigaction g_replaced[std::size(kForwarded)] = {};

/// Installs end_children_and_exit while any user holds it (in any order); the first user saves
/// the handlers it replaces and the last restores them. A signal the process was started
/// ignoring stays ignored: `nohup nocflow sweep ...` must outlive a hangup, and a shell starts
/// a background job ignoring SIGINT.
void hold_forwarding() {
  if (g_forwarding_users++ > 0) return;
  struct sigaction a {};
  a.sa_handler = end_children_and_exit;
  sigemptyset(&a.sa_mask);
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) {
    ::sigaction(kForwarded[i], nullptr, &g_replaced[i]);
    if (g_replaced[i].sa_handler != SIG_IGN) ::sigaction(kForwarded[i], &a, nullptr);
  }
}

void release_forwarding() {
  if (--g_forwarding_users > 0) return;
  for (std::size_t i = 0; i < std::size(kForwarded); ++i) ::sigaction(kForwarded[i], &g_replaced[i], nullptr);
}

/// Holds the forwarding while alive.
class ForwardSignals {
 public:
  ForwardSignals() { hold_forwarding(); }
  ~ForwardSignals() { release_forwarding(); }
  ForwardSignals(const ForwardSignals&) = delete;
  ForwardSignals& operator=(const ForwardSignals&) = delete;
};

void remember(pid_t pid) {
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] == 0) {
      g_children[i] = pid;
      return;
    }
}

void forget(pid_t pid) {
  for (int i = 0; i < kMaxChildren; ++i)
    if (g_children[i] == pid) g_children[i] = 0;
}

/// A running child: its pid and the read end of its report pipe.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string report;
  std::size_t task = 0;
};

Child spawn(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) throw CheckError(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered twice
  // The forwarded signals wait until the parent has noted the child's pid.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  ::sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    throw CheckError(std::string("cannot fork: ") + std::strerror(errno));
  }
  if (pid == 0) {  // child: report, then leave without running the parent's destructors
    // A parent killed outright (SIGKILL: no handler runs) takes its children with it; one that
    // died before this line was set has already left the child an orphan.
    if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || ::getppid() != parent) ::_exit(1);
    for (int sig : kForwarded) {  // the parent's handler goes; an ignored signal stays ignored
      struct sigaction now {};
      ::sigaction(sig, nullptr, &now);
      if (now.sa_handler == end_children_and_exit) ::signal(sig, SIG_DFL);
    }
    ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    ::close(fds[0]);
    std::string report;
    try {
      report = kOk + fn();
    } catch (const InputError& e) {
      report = kInput + std::string(e.what());
    } catch (const CheckError& e) {
      report = kCheck + std::string(e.what());
    } catch (const std::exception& e) {
      report = kOther + std::string(e.what());
    } catch (...) {
      report = kOther + std::string("unknown exception");
    }
    write_all(fds[1], report);
    ::close(fds[1]);
    std::fflush(nullptr);
    ::_exit(0);
  }
  ::close(fds[1]);
  remember(pid);
  ::sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  return {pid, fds[0], {}, 0};
}

/// Reads what is available; true at end of file.
bool read_some(Child& c) {
  char buf[65536];
  const ssize_t n = ::read(c.fd, buf, sizeof buf);
  if (n > 0) {
    c.report.append(buf, static_cast<std::size_t>(n));
    return false;
  }
  if (n < 0 && errno == EINTR) return false;
  return true;
}

/// Closes the pipe, reaps the child and decodes its report.
ChildResult finish(Child& c) {
  ::close(c.fd);
  int status = 0;
  while (::waitpid(c.pid, &status, 0) < 0 && errno == EINTR) {
  }
  forget(c.pid);
  if (c.report.empty()) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with code " + std::to_string(WEXITSTATUS(status));
    return {ChildResult::Kind::CheckError, "a simulation child process " + how + " without reporting"};
  }
  std::string body = c.report.substr(1);
  switch (c.report[0]) {
    case kOk: return {ChildResult::Kind::Ok, std::move(body)};
    case kInput: return {ChildResult::Kind::InputError, std::move(body)};
    case kCheck: return {ChildResult::Kind::CheckError, std::move(body)};
    default: return {ChildResult::Kind::CheckError, "a simulation child process failed: " + body};
  }
}

}  // namespace

void set_interrupt_note(const std::string& note) {
  // While a note is set the signals say it, between children too (a command's own work).
  const bool had = g_note_sizes[g_note_index] > 0;
  const int next = 1 - g_note_index;
  std::size_t n = std::min(note.size(), kNoteBytes);
  std::copy_n(note.data(), n, g_notes[next]);
  if (n == kNoteBytes && note.size() > n && note.back() == '\n') g_notes[next][n - 1] = '\n';  // cut, still a line
  g_note_sizes[next] = static_cast<std::sig_atomic_t>(n);
  std::atomic_signal_fence(std::memory_order_seq_cst);  // the buffer before the switch to it
  g_note_index = next;
  if (n > 0 && !had) hold_forwarding();
  if (n == 0 && had) release_forwarding();
}

std::string run_in_child(const std::function<std::string()>& fn) {
  const ForwardSignals forward;
  Child c = spawn(fn);
  while (!read_some(c)) {
  }
  ChildResult r = finish(c);
  switch (r.kind) {
    case ChildResult::Kind::Ok: return std::move(r.text);
    case ChildResult::Kind::InputError: throw InputError(r.text);
    default: throw CheckError(r.text);
  }
}

void run_in_children(std::size_t n, int jobs, const std::function<std::string(std::size_t)>& task,
                     const std::function<void(std::size_t, const ChildResult&)>& done,
                     const std::function<void()>& tick, const std::function<void(std::size_t)>& started) {
  std::size_t next = 0;
  run_claimed_in_children(
      [&]() -> std::optional<std::size_t> {
        if (next == n) return std::nullopt;
        return next++;
      },
      jobs, task, done, tick, started);
}

void run_claimed_in_children(const std::function<std::optional<std::size_t>()>& claim, int jobs,
                             const std::function<std::string(std::size_t)>& task,
                             const std::function<void(std::size_t, const ChildResult&)>& done,
                             const std::function<void()>& tick,
                             const std::function<void(std::size_t)>& started) {
  const ForwardSignals forward;
  jobs = std::clamp(jobs, 1, kMaxChildren);
  std::vector<Child> running;
  // A done() that throws leaves children running: they end here, reaped, not left to a signal.
  struct EndRunning {
    std::vector<Child>& running;
    ~EndRunning() {
      for (Child& c : running) {
        ::kill(c.pid, SIGKILL);
        finish(c);
      }
    }
  } end_running{running};
  bool more = true;  // claim() has not yet said none is left
  while (more || !running.empty()) {
    while (more && static_cast<int>(running.size()) < jobs) {
      const std::optional<std::size_t> claimed = claim();
      if (!claimed) {
        more = false;
        break;
      }
      const std::size_t i = *claimed;
      Child c = spawn([&task, i] { return task(i); });
      c.task = i;
      running.push_back(std::move(c));
      if (started) started(i);
    }
    if (running.empty()) continue;  // nothing was left to claim: no wait for none
    std::vector<pollfd> fds;
    for (const Child& c : running) fds.push_back({c.fd, POLLIN, 0});
    const int ready = ::poll(fds.data(), fds.size(), 1000);
    if (ready < 0 && errno != EINTR) throw CheckError(std::string("poll failed: ") + std::strerror(errno));
    if (ready <= 0) {
      if (tick) tick();
      continue;
    }
    // Children whose pipe has data or closed; finished ones leave `running` (order kept).
    for (std::size_t k = running.size(); k-- > 0;) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      if (!read_some(running[k])) continue;
      Child c = std::move(running[k]);
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      done(c.task, finish(c));
    }
  }
}

}  // namespace nocflow::sim
