// SPDX-License-Identifier: MIT
// Simulations in child processes: several SystemC elaborations from one parent process.
#include "sim/run/child_process.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <csignal>
#include <fstream>
#include <new>
#include <numeric>
#include <optional>
#include <thread>

#include "noc/base/error.h"
#include "sim/config/hw_loader.h"
#include "sim/system/system.h"

namespace nocflow::sim {
namespace {

TEST(ChildProcess, RunsOneSystemCElaborationPerChild) {
  const HwSpec hw = load_hw_config(std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/booksim8x8.yaml",
                                   {"topology.rows=1", "topology.cols=2"});
  std::vector<std::string> totals;
  for (int bytes : {16, 160, 1600}) {
    totals.push_back(run_in_child([&] {
      ProgramSet p(2);
      p.transfer(0, 1, -1, bytes);
      System sys("sys", hw, p);
      return std::to_string(sys.run().total_cycles);
    }));
  }
  // 1 flit of 16 bytes: 12 cycles through 2 routers plus one to the PE (as in System tests).
  // 10 and 100 flits stream behind it at no more than one flit per cycle, and with 4-flit
  // buffers at 4 flits per 5-cycle credit loop.
  EXPECT_EQ(totals[0], "13");
  EXPECT_GE(std::stoi(totals[1]), 13 + 9);
  EXPECT_GE(std::stoi(totals[2]), 13 + 99 * 5 / 4);
  EXPECT_LE(std::stoi(totals[2]), 13 + 99 * 5 / 4 + 16);
}

TEST(ChildProcess, ErrorsKeepTheirTypeAndMessage) {
  try {
    run_in_child([]() -> std::string { throw InputError("bad plan"); });
    FAIL();
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "bad plan");
  }
  EXPECT_THROW(run_in_child([]() -> std::string { throw CheckError("lost flit"); }), CheckError);
  try {
    run_in_child([]() -> std::string {
      std::raise(SIGKILL);
      return "";
    });
    FAIL();
  } catch (const CheckError& e) {
    EXPECT_NE(std::string(e.what()).find("killed by signal 9"), std::string::npos) << e.what();
  }
}

TEST(ChildProcess, ManyChildrenRunAtMostJobsAtOnceAndReportEach) {
  // Each child reports its task and pid; task 3 fails its input, task 5 dies. The children
  // count themselves in a shared page: how many run at once, at most.
  constexpr std::size_t n = 8;
  std::vector<ChildResult> results(n);
  std::vector<std::size_t> order, begun;
  void* page = ::mmap(nullptr, 2 * sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  auto* running = new (page) std::atomic<int>(0);
  auto* peak = new (running + 1) std::atomic<int>(0);
  run_in_children(
      n, 3,
      [&](std::size_t i) -> std::string {
        const int now = ++*running;
        for (int seen = *peak; now > seen && !peak->compare_exchange_weak(seen, now);) {
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(200));
        --*running;
        if (i == 3) throw InputError("task 3 does not fit");
        if (i == 5) std::raise(SIGKILL);
        return std::to_string(i) + " " + std::to_string(::getpid());
      },
      [&](std::size_t i, const ChildResult& r) {
        EXPECT_TRUE(std::find(begun.begin(), begun.end(), i) != begun.end()) << i << " ended before it began";
        results[i] = r;
        order.push_back(i);
      },
      {}, [&](std::size_t i) { begun.push_back(i); });
  // Each task is said to start once, in order, as its child is forked.
  std::vector<std::size_t> in_order(n);
  std::iota(in_order.begin(), in_order.end(), std::size_t{0});
  EXPECT_EQ(begun, in_order);
  ASSERT_EQ(order.size(), n);
  std::sort(order.begin(), order.end());
  EXPECT_TRUE(std::adjacent_find(order.begin(), order.end()) == order.end()) << "a task reported twice";
  for (std::size_t i = 0; i < n; ++i) {
    if (i == 3) {
      EXPECT_EQ(results[i].kind, ChildResult::Kind::InputError);
      EXPECT_EQ(results[i].text, "task 3 does not fit");
    } else if (i == 5) {
      EXPECT_EQ(results[i].kind, ChildResult::Kind::CheckError);
      EXPECT_NE(results[i].text.find("killed by signal 9"), std::string::npos) << results[i].text;
    } else {
      EXPECT_EQ(results[i].kind, ChildResult::Kind::Ok);
      EXPECT_EQ(results[i].text.substr(0, results[i].text.find(' ')), std::to_string(i));
      EXPECT_NE(results[i].text.substr(results[i].text.find(' ') + 1), std::to_string(::getpid()));
    }
  }
  // Never more than 3 at once, and more than one: 8 tasks of 0.2 s leave the parent ample
  // time to start the next while the others sleep.
  EXPECT_LE(peak->load(), 3);
  EXPECT_GE(peak->load(), 2);
  ::munmap(page, 2 * sizeof(std::atomic<int>));
}

TEST(ChildProcess, ClaimedTasksAreAskedForOnlyWhenAJobIsFree) {
  // Tasks 7, 3, 9 claimed in that order, two jobs: the third claim waits for a child to end,
  // the fourth (none left) for another, and claim is not asked again after it.
  const std::vector<std::size_t> tasks{7, 3, 9};
  std::size_t claims = 0, ended = 0;
  std::vector<std::size_t> ended_at_claim, done;
  run_claimed_in_children(
      [&]() -> std::optional<std::size_t> {
        ended_at_claim.push_back(ended);
        return claims < tasks.size() ? std::optional<std::size_t>(tasks[claims++]) : std::nullopt;
      },
      2, [](std::size_t i) { return std::to_string(i * 10); },
      [&](std::size_t i, const ChildResult& r) {
        EXPECT_EQ(r.text, std::to_string(i * 10));
        done.push_back(i);
        ++ended;
      });
  ASSERT_EQ(ended_at_claim.size(), 4u);  // three tasks and the one "none left"
  EXPECT_EQ(ended_at_claim[0], 0u);
  EXPECT_EQ(ended_at_claim[1], 0u);
  EXPECT_GE(ended_at_claim[2], 1u);  // a job had to free
  EXPECT_GE(ended_at_claim[3], 2u);
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<std::size_t>{3, 7, 9}));
}

/// A process's state letter from /proc ("" when it is gone; "Z": ended, not yet reaped).
std::string state(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string skip, letter;
  stat >> skip >> skip >> letter;
  return letter;
}

/// True once `pid` has ended, waiting up to 10 s.
bool ended(pid_t pid) {
  for (int i = 0; i < 1000; ++i) {
    const std::string s = state(pid);
    if (s.empty() || s == "Z") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

/// A parent running two long simulations, as `nocflow sweep --jobs 2`, with its interrupt note
/// set: its pid, its children's, and the read end of its stderr.
struct Family {
  pid_t parent = -1;
  pid_t children[2] = {0, 0};
  int err = -1;
};

Family start_family(bool started_ignoring_hangups = false) {
  Family f;
  int fds[2], err[2];
  if (::pipe(fds) != 0 || ::pipe(err) != 0) return f;
  f.parent = ::fork();
  if (f.parent == 0) {
    if (started_ignoring_hangups) ::signal(SIGHUP, SIG_IGN);  // as under nohup
    ::close(fds[0]);
    ::close(err[0]);
    ::dup2(err[1], STDERR_FILENO);
    set_interrupt_note("interrupted: resume me\n");
    run_in_children(
        2, 2,
        [&](std::size_t) -> std::string {
          const pid_t me = ::getpid();
          if (::write(fds[1], &me, sizeof me) != sizeof me) return "";
          std::this_thread::sleep_for(std::chrono::seconds(60));
          return "";
        },
        [](std::size_t, const ChildResult&) {});
    ::_exit(0);
  }
  ::close(fds[1]);
  ::close(err[1]);
  f.err = err[0];
  for (pid_t& c : f.children)
    if (::read(fds[0], &c, sizeof c) != static_cast<ssize_t>(sizeof c)) c = 0;
  ::close(fds[0]);
  return f;
}

/// Signals the family's parent, waits for it, and checks that its children ended too; returns
/// what the parent wrote to stderr.
std::string end_family(const Family& f, int sig) {
  for (pid_t c : f.children) {
    const std::string s = state(c);
    EXPECT_FALSE(c == 0 || s.empty() || s == "Z") << "child " << c << " should be sleeping";
  }
  ::kill(f.parent, sig);
  int status = 0;
  EXPECT_EQ(::waitpid(f.parent, &status, 0), f.parent);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == sig) << status;
  for (pid_t c : f.children) EXPECT_TRUE(ended(c)) << "child " << c << " outlived its parent";
  std::string said;
  char buf[256];
  for (ssize_t n; (n = ::read(f.err, buf, sizeof buf)) > 0;) said.append(buf, static_cast<std::size_t>(n));
  ::close(f.err);
  return said;
}

// ... and says the note it was given (sweep: how to resume) on its way out.
TEST(ChildProcess, TerminatingTheParentEndsItsChildren) {
  const Family f = start_family();
  ASSERT_GT(f.parent, 0);
  EXPECT_EQ(end_family(f, SIGTERM), "interrupted: resume me\n");
}

// Under nohup a hangup must not end a sweep: a signal ignored from the start stays ignored, in
// the parent and in its children.
TEST(ChildProcess, ASignalIgnoredFromTheStartStaysIgnored) {
  const Family f = start_family(true);
  ASSERT_GT(f.parent, 0);
  ::kill(f.parent, SIGHUP);
  for (pid_t c : f.children) ::kill(c, SIGHUP);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  const std::string parent = state(f.parent);
  EXPECT_TRUE(parent == "S" || parent == "R") << "the parent should still be running: " << parent;
  EXPECT_EQ(end_family(f, SIGTERM), "interrupted: resume me\n");
}

// Killed outright, the parent runs no handler: its children end by the parent-death signal
// (a batch system's hard kill would otherwise leave them simulating).
TEST(ChildProcess, KillingTheParentOutrightEndsItsChildren) {
  const Family f = start_family();
  ASSERT_GT(f.parent, 0);
  EXPECT_EQ(end_family(f, SIGKILL), "");
}

}  // namespace
}  // namespace nocflow::sim
