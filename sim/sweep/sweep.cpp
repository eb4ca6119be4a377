// SPDX-License-Identifier: MIT
#include "sim/sweep/sweep.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include "noc/base/cores.h"
#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/progress.h"
#include "optimizer/partition/workload.h"
#include "sim/config/hw_loader.h"
#include "sim/lower/workload_setup.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"
#include "sim/run/child_process.h"
#include "sim/run/replay.h"
#include "sim/sweep/results_file.h"
#include "sim/sweep/sweep_inputs.h"

namespace nocflow::sim {
namespace {

namespace fs = std::filesystem;
namespace opt = optimizer;
using Clock = std::chrono::steady_clock;

/// "12 ms", "3.4 s"
std::string seconds_text(double s) { return s < 1 ? fixed(1000 * s, 1) + " ms" : fixed(s, 1) + " s"; }

}  // namespace

const std::vector<std::string>& sweep_result_columns() {
  static const std::vector<std::string> c = {
      "pes",           "status",           "total_cycles",
      "total_us",      "compute_cycles",   "communication_cycles",
      "energy_pj",     "predicted_cycles", "prediction_error",
      "solve_seconds", "tabulate_seconds", "sim_wall_seconds",
      "memory_plan_bytes", "fits_sram", "message"};
  return c;
}

std::vector<std::string> run_sweep_point(const SweepPoint& p, int threads) {
  const opt::Graph graph = prepare_network(p.network, p.batch, p.hw, p.passes, p.train);
  const SolvedPlan solved =
      solve_plan(graph, hw_desc_of(p.hw), p.solver, p.cost_model, threads, p.placement == "search");
  const ReplayOutcome o = replay(p.hw, opt::build_workload(graph), solved.plan,
                                 p.mode == "barrier" ? ExecMode::Barrier : ExecMode::Dataflow);
  const double predicted = solved.plan.total_cycles();
  const double error = o.total_cycles > 0 ? predicted / static_cast<double>(o.total_cycles) - 1 : 0;
  // At the point's clock: a clock axis changes the time, not the cycles.
  const double us = static_cast<double>(o.total_cycles) / (p.hw.clock.frequency_ghz * 1e3);
  const std::string note = o.sram_note(p.hw.pe.sram_bytes);
  return {std::to_string(o.total_cycles),
          fixed(us, 3),
          std::to_string(o.compute_cycles),
          std::to_string(o.communication_cycles),
          fixed(o.energy_pj, 1),
          fixed(predicted, 1),
          fixed(error, 6),
          fixed(solved.solve_seconds, 6),
          fixed(solved.tabulate_seconds, 4),
          fixed(o.wall_seconds, 4),
          std::to_string(o.memory_plan_bytes),
          note.empty() ? "true" : "false",
          note};
}

namespace {

/// Runs the points of `pending` (heaviest first) that this rank claims, `o.jobs` at a time:
/// each finished row goes to the rank's partial file and to `rows`. Returns how many failed.
/// `total`: the sweep's points, of which those not pending were done before.
int run_claimed_points(const std::vector<const SweepPoint*>& pending, const SweepSpec& spec,
                       const SweepOptions& o, const Cluster& cluster, const std::string& head,
                       std::size_t total, std::vector<std::string>& rows) {
  const fs::path dir = o.out;
  const std::size_t n = pending.size();
  std::size_t claimed = 0;  // pending[0 .. claimed) are claimed, here or by other ranks (as known)
  auto claim = [&]() -> std::optional<std::size_t> {
    const std::size_t i = cluster.claim();
    claimed = std::min(i + 1, n);
    if (i >= n) return std::nullopt;
    return i;
  };

  const bool ranks = cluster.size > 1;
  const std::string who = ranks ? "[rank " + std::to_string(cluster.rank) + "] " : "";
  if (!o.quiet && cluster.rank == 0)
    std::cout << who << "nocflow sweep: " << total << " points, " << total - n << " already done, "
              << n << " to run"
              << (ranks ? " among " + std::to_string(cluster.size) +
                              " ranks (each takes the next point when one of its jobs is free)"
                        : "")
              << " with " << o.jobs << " job(s)" << (ranks ? " per rank" : "") << std::endl;

  // mpirun binds each of up to two ranks to one core by default, and so their jobs.
  const int cores = usable_cores();
  if (!o.quiet && o.jobs > cores)
    std::cout << who << "nocflow sweep: note: " << o.jobs << " jobs share "
              << counted(cores, "core")
              << " this process may use (its CPU affinity: taskset, a batch system's cpuset, or "
                 "mpirun's binding, which `mpirun --bind-to none` or `--map-by node:PE=N` lifts)"
              << std::endl;

  create_folder(dir);
  // A row cut short by a hard kill stays a line of its own (finished_rows skips it): the next
  // row starts on a new line rather than completing the cut one.
  const bool cut = [&] {
    std::ifstream in(dir / partial_name(cluster.rank), std::ios::binary | std::ios::ate);
    if (!in || in.tellg() <= 0) return false;
    in.seekg(-1, std::ios::end);
    return in.get() != '\n';
  }();
  OutputFile partial(dir / partial_name(cluster.rank), std::ios::app);
  if (partial.tellp() == 0) partial << head << "\n" << std::flush;
  if (cut) partial << "\n" << std::flush;
  int failures = 0;
  // Under mpirun a rank's stderr is a pipe and the ranks' lines interleave: no bar, only the
  // line every 30 s.
  const bool bar = !o.quiet && !ranks && ::isatty(STDERR_FILENO);
  const auto start = Clock::now();
  std::size_t finished_here = 0;
  std::map<std::size_t, Clock::time_point> running;  // point index -> when it started
  SweepPace pace;                                    // of this rank's finished points
  // Time left at this rank's pace: what each of its running points has still to go, and the
  // unclaimed points, shared by every rank's jobs.
  // (seconds, whether every running point has gone past its pace: its time to go is then 0)
  struct Left {
    double seconds;  ///< at this pace
    bool any_past;   ///< a running point has taken longer than this pace says: a floor
    bool all_past;   ///< every running point has, and none is queued
  };
  auto time_left = [&] {
    pace.forget_running();
    for (const auto& [i, since] : running) pace.run(*pending[i], seconds_since(since));
    std::vector<double> to_go, queued;
    for (const auto& [i, since] : running)
      to_go.push_back(std::max(0.0, pace.seconds(*pending[i]) - seconds_since(since)));
    for (std::size_t i = claimed; i < n; ++i) queued.push_back(pace.seconds(*pending[i]));
    // A running point past its pace makes the time left a floor (its own pace is only what it
    // has taken so far: dp's 12x12 point timed at greedy's read "~0s left" for 23 s).
    const auto past = [](double s) { return s <= 0; };
    const Left left{
        seconds_left(to_go, queued, o.jobs * cluster.size),
        std::any_of(to_go.begin(), to_go.end(), past),
        !to_go.empty() && queued.empty() && std::all_of(to_go.begin(), to_go.end(), past)};
    // Every rank's jobs take the unclaimed points; the other ranks' running ones are unknown.
    return left;
  };
  // "5/42 points"; under MPI the points started on every rank, as far as this rank knows.
  auto count_text = [&] {
    if (!ranks) return std::to_string(finished_here) + "/" + std::to_string(n) + " points";
    return std::to_string(claimed) + "/" + std::to_string(n) + " points started on " +
           std::to_string(cluster.size) + " ranks, " + std::to_string(finished_here) + " done here";
  };
  auto last_line = start;  // without a terminal: a plain line every 30 s between points
  std::size_t bar_drawn = 0;  // characters of the bar on screen
  auto draw_bar = [&] {
    if (!bar) {
      if (o.quiet || cluster.rank != 0 || Clock::now() - last_line < std::chrono::seconds(30))
        return;
      last_line = Clock::now();
      std::cerr << "  ... " << count_text() << ", "
                << duration_text(std::chrono::duration<double>(last_line - start).count())
                << " elapsed; running" << (ranks ? " here: " : ": ");
      int listed = 0;  // at most 4 named: jobs may be up to 256
      for (const auto& [i, since] : running) {
        if (listed == 4) {
          std::cerr << "; ...";
          break;
        }
        std::cerr << (listed++ ? "; " : "") << pending[i]->key << " ("
                  << duration_text(seconds_since(since)) << ")";
      }
      std::cerr << std::endl;
      return;
    }
    const int width = 30;
    const int fill = n ? static_cast<int>(width * (ranks ? claimed : finished_here) / n) : width;
    std::ostringstream line;
    line << "  [" << std::string(static_cast<std::size_t>(fill), '#')
         << std::string(static_cast<std::size_t>(width - fill), '.') << "] " << count_text() << ", "
         << running.size() << " running" << (ranks ? " here, " : ", ")
         << duration_text(seconds_since(start)) << " elapsed";
    if (finished_here > 0 && (claimed < n || !running.empty())) {
      const Left left = time_left();
      line << (left.all_past ? ", the last points running past this pace"
               : left.any_past
                   ? ", a point runs past this pace" +
                         (left.seconds >= 1 ? ", over ~" + duration_text(left.seconds) + " left"
                                            : std::string())
                   : ", ~" + duration_text(left.seconds) + " left at this pace");
    }
    // Spaces over what a longer line before left.
    const std::size_t drawn = line.str().size();
    std::cerr << "\r" << line.str() << std::string(bar_drawn > drawn ? bar_drawn - drawn : 0, ' ') << std::flush;
    bar_drawn = drawn;
  };
  auto clear_bar = [&] {
    std::cerr << "\r" << std::string(bar_drawn, ' ') << "\r";
    bar_drawn = 0;
  };
  // The jobs share the cores this process may use: each tabulates on its part of them.
  const int threads = std::max(1, cores / std::max(o.jobs, 1));
  const InterruptNoteScope note_scope;
  set_interrupt_note("\nnocflow sweep: interrupted; the finished points are in " + o.out +
                     "/results.partial-*.csv: `nocflow sweep --spec " + spec.file + " --out " +
                     o.out + (o.jobs > 1 ? " --jobs " + std::to_string(o.jobs) : "") +
                     " --resume` runs the rest\n");
  run_claimed_in_children(
      claim, o.jobs, [&](std::size_t i) { return csv_line(run_sweep_point(*pending[i], threads)); },
      [&](std::size_t i, const ChildResult& r) {
        const SweepPoint& p = *pending[i];
        std::vector<std::string> row{p.key};
        row.insert(row.end(), p.values.begin(), p.values.end());
        row.push_back(std::to_string(p.hw.topology.num_nodes()));
        std::string shown;
        if (r.kind == ChildResult::Kind::Ok) {
          const auto fields = parse_csv_line(r.text);
          row.push_back("ok");
          row.insert(row.end(), fields.begin(), fields.end());
          shown = fields[0] + " cycles = " + fields[1] + " us (predicted " +
                  fixed(std::stod(fields[5]), 0) + " cycles, error " + signed_percent(std::stod(fields[6])) +
                  "), tabulate + solve " +
                  seconds_text(std::stod(fields[8]) + std::stod(fields[7])) + ", simulation " +
                  seconds_text(std::stod(fields[9]));
          if (!fields.back().empty()) shown += "; note: " + fields.back();
        } else {
          const bool infeasible = r.kind == ChildResult::Kind::InputError;
          failures += infeasible ? 0 : 1;
          row.push_back(infeasible ? "infeasible" : "failed");
          row.resize(row.size() + sweep_result_columns().size() - 3);
          row.push_back(r.text);
          shown = (infeasible ? "infeasible: " : "FAILED: ") + r.text;
        }
        const std::string line = csv_line(row);
        partial << line << "\n" << std::flush;
        rows.push_back(line);
        ++finished_here;
        pace.finished(p, seconds_since(running[i]));
        running.erase(i);
        last_line = Clock::now();
        if (!o.quiet) {
          if (bar) clear_bar();
          std::cout << who << "  [" << finished_here
                    << (ranks ? " done here" : "/" + std::to_string(n)) << "] " << p.key << ": "
                    << shown << std::endl;
        }
        draw_bar();
      },
      [&] {
        if (ranks && cluster.rank == 0) claimed = std::max(claimed, std::min(cluster.claimed(), n));
        draw_bar();
      },
      [&](std::size_t i) { running[i] = Clock::now(); });
  set_interrupt_note("");
  if (bar) {
    clear_bar();
    std::cerr << std::flush;
  }
  partial.close();
  if (ranks && cluster.rank == 0 && !o.quiet)
    std::cout << who << "nocflow sweep: " << counted(finished_here, "point")
              << " done here; waiting for the other ranks" << std::endl;
  return failures;
}

}  // namespace

int run_sweep(const SweepSpec& spec, const std::vector<SweepPoint>& points, const SweepOptions& o,
              const Cluster& cluster) {
  const fs::path dir = o.out;
  const std::string head = results_header(spec);

  // Rank 0 decides what is finished; every rank gets the same list.
  std::string finished_keys;
  std::map<std::string, std::string> finished;
  std::string setup_error;
  std::string inputs;  // sweep_inputs, on rank 0 when there are others to check theirs
  if (cluster.rank == 0) {
    try {
      const bool had_sweep = fs::exists(dir / "sweep.yaml");
      if (had_sweep && !o.resume) {
        bool complete = false;  // this very sweep, every point's row in results.csv
        try {
          complete = same_yaml(file_text(dir / "sweep.yaml"), spec.text) &&
                     fs::exists(dir / "results.csv") &&
                     finished_rows(dir, head).size() == points.size();
        } catch (const InputError&) {  // rows of other columns: not this sweep's
        }
        throw InputError(
            complete
                ? o.out + " already holds this sweep, finished (results.csv has all " +
                      std::to_string(points.size()) + " points): give another --out to run it again"
                : o.out + " already holds a sweep: use --resume to finish it, or another --out");
      }
      if (!had_sweep && fs::is_directory(dir))  // another command's run would mix with this one
        for (const auto& e : fs::directory_iterator(dir)) {
          const std::string name = e.path().filename().string();
          if (name != "results.csv" && name != "config.resolved.yaml" && name != "inputs.txt" &&
              !is_partial_file(e.path()))
            throw InputError(o.out + " holds " + name +
                             ", which a sweep does not write: give a new or empty folder");
        }
      const std::string config = resolved_yaml(load_hw_config(spec.hw, spec.overrides));
      const std::string networks = network_digests(spec, points);
      std::string started_by;  // the build that started the sweep in the folder, if it says
      if (had_sweep) {
        if (!same_yaml(file_text(dir / "sweep.yaml"), spec.text))
          throw InputError("--resume: " + (dir / "sweep.yaml").string() + " differs from " +
                           spec.file + "; a changed spec needs another --out");
        // The rows already there were run on these inputs: a changed file would mix two machines.
        // (A folder from before session 61 has no inputs.txt: not checked.)
        auto unchanged = [&](const char* name, const std::string& then, const std::string& now,
                             const std::string& what, int first_line = 1) {
          if (then != now)
            throw InputError("--resume: " + what + " (" + (dir / name).string() + ", " +
                             first_difference(then, now, "then", "now", first_line) +
                             "); a changed input needs another --out");
        };
        if (fs::exists(dir / "config.resolved.yaml"))
          unchanged("config.resolved.yaml", file_text(dir / "config.resolved.yaml"), config,
                    spec.hw + " resolves to another machine than the sweep's");
        if (fs::exists(dir / "inputs.txt")) {
          // Since session 79 its first line is the build that started the sweep. Another build
          // may resume (that is how a fix reaches the points left); it is noted.
          std::string then = file_text(dir / "inputs.txt");
          int first_line = 1;  // of `then` in the file
          if (then.rfind("# nocflow ", 0) == 0) {
            started_by = inputs_build(then).substr(std::string("nocflow ").size());
            then.erase(0, then.find('\n') + 1);
            first_line = 2;
          }
          unchanged("inputs.txt", then, networks, "a network file changed since the sweep started",
                    first_line);
        }
        finished = finished_rows(dir, head);
        if (!started_by.empty() && started_by != nocflow_build() && !finished.empty())
          std::cout << "nocflow sweep: note: --resume: the sweep started on nocflow " << started_by
                    << ", this run is nocflow " << nocflow_build()
                    << ": a change between the two may show in "
                    << "the rows of the " << finished.size() << " already done" << std::endl;
      }
      if (o.resume && !had_sweep)  // a mistyped --out would otherwise rerun everything unsaid
        std::cout << "nocflow sweep: note: --resume: " << o.out
                  << " holds no sweep; running every point" << std::endl;
      create_folder(dir, "output folder");
      write_file(dir / "sweep.yaml", spec.text);
      write_file(dir / "config.resolved.yaml", config);
      // The build that started the sweep: a resume by another keeps it, and one of a folder
      // that does not say (written before session 79) does not claim it.
      write_file(dir / "inputs.txt", (!started_by.empty() ? "# nocflow " + started_by + "\n"
                                      : had_sweep         ? std::string()
                                                          : "# nocflow " + nocflow_build() + "\n") +
                                         networks);
      for (const auto& [key, row] : finished) finished_keys += key + "\n";
      if (cluster.size > 1) inputs = inputs_text(spec, config, networks);
    } catch (const std::exception& e) {
      setup_error = std::string("E") + e.what();
    }
  }
  const std::string rank0_inputs = cluster.size > 1 ? cluster.broadcast(inputs) : inputs;
  const std::string shared =
      cluster.broadcast(setup_error.empty() ? "K" + finished_keys : setup_error);
  const auto rethrow = [](const std::string& e) {
    if (e[0] == 'I') throw InputError(e.substr(1));
    throw CheckError(e.substr(1));
  };
  // A verdict every rank stops on: rank 0 prints it, the others exit with its code alone.
  const auto stop_every_rank = [&](const std::string& e) {
    if (cluster.rank == 0) rethrow(e);
    if (e[0] == 'I') throw QuietInputError(e.substr(1));
    throw QuietCheckError(e.substr(1));
  };
  if (shared[0] == 'E') stop_every_rank("I" + shared.substr(1));
  std::string error;        // this rank's: 'I' (input) or 'C' (check), then the message
  if (cluster.rank != 0) {  // each rank read the spec and what it names itself
    try {
      inputs = sweep_inputs(spec, points);
      // A rank built from another commit may price and simulate otherwise.
      if (inputs_build(inputs) != inputs_build(rank0_inputs))
        error = "Iit runs another nocflow than rank 0 ('" + inputs_build(rank0_inputs) +
                "' on rank 0, '" + inputs_build(inputs) +
                "' here): every rank must run the same build";
      else if (inputs != rank0_inputs)
        error = "Iit read other inputs than rank 0 (" + spec.file + " and what it names, " +
                first_difference(rank0_inputs, inputs, "on rank 0", "here") +
                "): every rank must read the same spec, machine and network files";
    } catch (const std::exception& e) {
      error = std::string("I") + e.what();
    }
  }
  if (cluster.size > 1) {  // such a rank stops every rank now, not after the points (hours)
    const std::vector<std::string> verdicts = cluster.gather(error);
    std::string stop;
    for (std::size_t r = 1; r < verdicts.size() && stop.empty(); ++r)
      if (!verdicts[r].empty())
        stop =
            verdicts[r].substr(0, 1) + "rank " + std::to_string(r) + ": " + verdicts[r].substr(1);
    stop = cluster.broadcast(stop);
    if (!stop.empty()) stop_every_rank(stop);
  }
  std::set<std::string> done;
  {
    std::istringstream in(shared.substr(1));
    for (std::string k; std::getline(in, k);) done.insert(k);
  }
  std::vector<const SweepPoint*> pending;
  for (const SweepPoint& p : points)
    if (!done.count(p.key)) pending.push_back(&p);
  // Every rank sorts the same, and claims the next of them whenever one of its jobs is free.
  // An error here (this rank's folder or file, a child it cannot start) still reaches the
  // gather below, so that no rank waits there for one that has left.
  const auto start = Clock::now();
  std::vector<std::string> new_rows;
  int failures = 0;
  try {  // (a rank's error on its inputs stopped every rank above)
    failures = run_claimed_points(heaviest_first(std::move(pending)), spec, o, cluster, head,
                                  points.size(), new_rows);
  } catch (const InputError& e) {
    error = std::string("I") + e.what();
  } catch (const std::exception& e) {
    error = std::string("C") + e.what();
  }

  // Gather every rank's new rows on rank 0, and its error after a '!'; rank 0 writes
  // results.csv in point order, and every rank keeps its partial file until then, so that
  // --resume finds the rows if results.csv cannot be written.
  std::string mine_text;
  for (const auto& r : new_rows) mine_text += r + "\n";
  if (!error.empty()) mine_text += "!" + error;
  const std::vector<std::string> all = cluster.gather(mine_text);
  // Rank 0's word to every rank: "ok", or why results.csv is not written ('I' or 'C' first).
  std::string written = "ok";
  int failed_total = 0;
  if (cluster.rank == 0) {
    try {
      failed_total = write_results(spec, points, finished, all, head, o.out, seconds_since(start));
    } catch (const InputError& e) {
      written = std::string("I") + e.what();
    } catch (const std::exception& e) {
      written = std::string("C") + e.what();
    }
  }
  written = cluster.broadcast(written);
  if (!error.empty()) rethrow(error);
  if (cluster.rank != 0) {
    std::error_code ignored;
    if (written == "ok") fs::remove(dir / partial_name(cluster.rank), ignored);
    return failures ? 3 : 0;
  }
  for (std::size_t r = 0; r < all.size(); ++r)  // another rank's error, its rows written
    if (const std::size_t at = error_at(all[r]); at != std::string::npos)
      rethrow(all[r].substr(at + 1, 1) + "rank " + std::to_string(r) + ": " +
              all[r].substr(at + 2));
  if (written != "ok") rethrow(written);
  return failed_total ? 3 : 0;
}

}  // namespace nocflow::sim
