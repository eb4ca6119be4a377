// SPDX-License-Identifier: MIT
#include "sim/run/child_process.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

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

}  // namespace

std::string run_in_child(const std::function<std::string()>& fn) {
  int fds[2];
  if (::pipe(fds) != 0) throw CheckError(std::string("cannot create a pipe: ") + std::strerror(errno));
  std::fflush(nullptr);  // nothing buffered twice
  const pid_t pid = ::fork();
  if (pid < 0) throw CheckError(std::string("cannot fork: ") + std::strerror(errno));
  if (pid == 0) {  // child: report, then leave without running the parent's destructors
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
  std::string report;
  char buf[65536];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) report.append(buf, static_cast<std::size_t>(n));
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (report.empty()) {
    const std::string how = WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                                : "exited with code " + std::to_string(WEXITSTATUS(status));
    throw CheckError("a simulation child process " + how + " without reporting");
  }
  const std::string body = report.substr(1);
  switch (report[0]) {
    case kOk: return body;
    case kInput: throw InputError(body);
    case kCheck: throw CheckError(body);
    default: throw CheckError("a simulation child process failed: " + body);
  }
}

}  // namespace nocflow::sim
