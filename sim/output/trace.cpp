// SPDX-License-Identifier: MIT
#include "sim/output/trace.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <vector>

#include "noc/base/format.h"
#include "noc/base/json_text.h"
#include "sim/output/build_id.h"
#include "sim/output/output_file.h"

namespace nocflow::sim {

std::size_t write_chrome_trace(std::ostream& out, const RunResult& run,
                               const std::vector<std::string>& layer_names, double clock_ghz,
                               noc::Cycle window) {
  // Cycles to µs by one division, correctly rounded: 576 cycles at 1 GHz print as 0.576, where
  // a multiplication by 1e-3 gave 0.5760000000000001.
  const double cycles_per_us = clock_ghz * 1e3;
  auto us = [&](noc::Cycle cycles) { return static_cast<double>(cycles) / cycles_per_us; };
  // Written as they are made, not held as one document (a 1-cycle window on a long run makes
  // millions of samples): the same text nlohmann's compact dump of it gave.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";
  bool first = true;
  const auto emit = [&](const nlohmann::ordered_json& event) {
    out << (first ? "" : ",") << json_text(event);
    first = false;
  };
  emit({{"name", "process_name"}, {"ph", "M"}, {"pid", 1}, {"args", {{"name", "PEs"}}}});
  emit({{"name", "process_name"}, {"ph", "M"}, {"pid", 2}, {"args", {{"name", "links"}}}});
  for (std::size_t p = 0; p < run.pe_finish.size(); ++p) {
    emit({{"name", "thread_name"},
          {"ph", "M"},
          {"pid", 1},
          {"tid", p},
          {"args", {{"name", "PE " + std::to_string(p)}}}});
    // In PE order (by name a viewer puts PE 10 before PE 2).
    emit({{"name", "thread_sort_index"},
          {"ph", "M"},
          {"pid", 1},
          {"tid", p},
          {"args", {{"sort_index", p}}}});
  }
  std::size_t spans = 0;
  std::vector<int> barriers(run.pe_finish.size(), 0);  // per PE: every PE joins every barrier
  for (const Span& s : run.spans) {
    const std::string layer = s.layer >= 0 && s.layer < static_cast<int>(layer_names.size())
                                  ? layer_names[s.layer] : "";
    nlohmann::ordered_json args = {{"layer", layer}, {"start_cycle", s.start}, {"end_cycle", s.end}};
    if (s.kind == StepKind::Send || s.kind == StepKind::Recv) {
      args["peer_pe"] = s.peer;
      args["bytes"] = s.bytes;
    }
    std::string suffix = layer.empty() ? "" : " " + layer;
    if (s.kind == StepKind::Barrier &&
        layer.empty()) {  // a barrier belongs to no layer: its number
      const int k = ++barriers[static_cast<std::size_t>(s.pe)];
      args["barrier"] = k;
      suffix = " " + std::to_string(k);
    }
    emit({{"name", std::string(step_name(s.kind)) + suffix},
          {"cat", step_name(s.kind)},
          {"ph", "X"},
          {"ts", us(s.start)},
          {"dur", us(s.end - s.start)},
          {"pid", 1},
          {"tid", s.pe},
          {"args", args}});
    ++spans;
  }
  // A counter holds its last sample until the next, so a link's track gets a sample where its
  // count changes only: a 0 where an idle stretch starts (idle windows are not in
  // link_windows), and every track ends at 0. A link streaming one flit a cycle for 10,000
  // cycles under --trace-window 1 is one sample, not 10,000.
  const std::string per = "flits per " + counted(window, "cycle");
  auto sample = [&](int i, noc::Cycle at, std::int64_t flits) {
    const noc::LinkLoad& l = run.links[static_cast<std::size_t>(i)];
    emit({{"name", l.from + " -> " + l.to},
          {"ph", "C"},
          {"ts", us(at)},
          {"pid", 2},
          {"args", {{per, flits}}}});
  };
  struct Shown {
    int link;
    std::int64_t flits;
  };
  std::vector<Shown> busy, now;  // links whose counter shows more than 0, by index
  auto idle_from = [&](noc::Cycle at) {
    for (const Shown& b : busy) sample(b.link, at, 0);
    busy.clear();
  };
  // A link that never carried a flit: one 0, so that its track is there (as in the VCD).
  for (std::size_t i = 0; i < run.links.size(); ++i)
    if (run.links[i].flits == 0) sample(static_cast<int>(i), 0, 0);
  noc::Cycle next = -1;  // where the window after the previous one starts
  for (const LinkWindow& w : run.link_windows) {
    if (next >= 0 && w.start > next) idle_from(next);
    // By index: this window's links where their count changed, and a 0 for each busy one it
    // does not have.
    auto b = busy.begin();
    now.clear();
    for (const auto& [i, flits] : w.flits) {
      for (; b != busy.end() && b->link < i; ++b) sample(b->link, w.start, 0);
      const bool shown = b != busy.end() && b->link == i && b->flits == flits;
      if (b != busy.end() && b->link == i) ++b;
      if (!shown) sample(i, w.start, flits);
      now.push_back({i, flits});
    }
    for (; b != busy.end(); ++b) sample(b->link, w.start, 0);
    busy.swap(now);
    next = w.start + window;
  }
  if (next >= 0) idle_from(std::min(next, run.total_cycles));  // the last window ends with the run
  // Viewers ignore otherData; a reader of the file learns what the counters count there, as
  // the VCD's header says it.
  const noc::Cycle last = run.total_cycles > 0 ? (run.total_cycles - 1) / window * window : 0;
  out << "],\"otherData\":"
      << json_text(nlohmann::ordered_json{
             {"nocflow", nocflow_build()},
             {"link_counters", per + ", in windows from cycle 0; the last, cycles " +
                                   std::to_string(last) + " to " +
                                   std::to_string(run.total_cycles) + " (the run's end), is " +
                                   counted(run.total_cycles - last, "cycle") + " long"}})
      << "}\n";
  return spans;
}

void write_vcd(std::ostream& out, const RunResult& run, int num_pes, noc::Cycle window,
               double clock_ghz) {
  auto code = [](std::size_t i) {  // printable VCD identifiers
    std::string s;
    do {
      s += static_cast<char>('!' + i % 94);
      i /= 94;
    } while (i);
    return s;
  };
  const double ps_per_cycle = 1000 / clock_ghz;
  out << "$version nocflow " << nocflow_build() << " $end\n$timescale 1ps $end\n$comment clock "
      << clock_ghz << " GHz: one cycle is " << ps_per_cycle
      << " ps $end\n$comment pe_N_state: 0 idle, 1 compute, 2 reduce, 3 send, 4 recv, 5 barrier; "
         "links: flits per "
      << window << "-cycle window (the last one ends with the run, at cycle " << run.total_cycles
      << ") $end\n";
  out << "$scope module pes $end\n";
  // An 8-bit vector (a VCD integer is 32 bits whatever its declared size).
  for (int p = 0; p < num_pes; ++p)
    out << "$var wire 8 " << code(p) << " pe_" << p << "_state $end\n";
  out << "$upscope $end\n$scope module links $end\n";
  for (std::size_t i = 0; i < run.links.size(); ++i) {
    std::string name = run.links[i].from + "_to_" + run.links[i].to;
    std::replace_if(name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
    out << "$var integer 32 " << code(num_pes + i) << " " << name << " $end\n";
  }
  out << "$upscope $end\n$enddefinitions $end\n";
  // Value changes in time order: the spans' (a start sets the state, an end returns to idle),
  // sorted once, merged with the windows' as they come (a window's links take their flits at
  // its start and 0 at its end, unless the next window starts then), not held all at once: a
  // 1-cycle window on a long run makes tens of millions.
  struct Change {
    noc::Cycle time;
    std::size_t signal;
    std::int64_t value;
  };
  std::vector<Change> pe_changes;
  for (const Span& s : run.spans) {
    if (s.end == s.start) continue;
    pe_changes.push_back({s.start, static_cast<std::size_t>(s.pe), 1 + static_cast<int>(s.kind)});
    pe_changes.push_back({s.end, static_cast<std::size_t>(s.pe), 0});
  }
  std::stable_sort(pe_changes.begin(), pe_changes.end(),
                   [](const Change& a, const Change& b) { return a.time < b.time; });
  auto bits = [](std::int64_t v) {
    std::string b;
    do {
      b.insert(b.begin(), static_cast<char>('0' + (v & 1)));
      v >>= 1;
    } while (v);
    return b;
  };
  const std::size_t signals = static_cast<std::size_t>(num_pes) + run.links.size();
  std::vector<std::int64_t> value(signals, 0);  // what each signal holds
  bool opened = false;
  // Every signal's value at time 0: 0 unless it changes then.
  const auto open = [&] {
    if (opened) return;
    opened = true;
    out << "#0\n";
    for (std::size_t i = 0; i < signals; ++i)
      out << "b" << bits(value[i]) << " " << code(i) << "\n";
  };
  const auto stamp = [&](noc::Cycle time) {
    out << "#" << std::llround(static_cast<double>(time) * ps_per_cycle) << "\n";
  };
  // One time's changes, the links' after the spans': each signal's last change (a span ending
  // where the next starts, a window where the next begins), written only if it differs from the
  // value the signal holds: no zero-width glitches.
  using Links = std::vector<std::pair<std::size_t, std::int64_t>>;
  std::map<std::size_t, std::int64_t> last;  // signal -> value, at one time
  std::size_t next_pe = 0;
  noc::Cycle stamped = 0;
  const auto write_time = [&](noc::Cycle time, const Links& links) {
    last.clear();
    for (; next_pe < pe_changes.size() && pe_changes[next_pe].time == time; ++next_pe)
      last[pe_changes[next_pe].signal] = pe_changes[next_pe].value;
    for (const auto& [signal, v] : links) last[signal] = v;
    if (time == 0) {
      for (const auto& [signal, v] : last) value[signal] = v;
      return;
    }
    open();
    for (const auto& [signal, v] : last) {
      if (value[signal] == v) continue;
      value[signal] = v;
      if (stamped != time) stamp(time);
      stamped = time;
      out << "b" << bits(v) << " " << code(signal) << "\n";
    }
  };
  const auto spans_before = [&](noc::Cycle limit) {  // the spans' own times before `limit`
    while (next_pe < pe_changes.size() && pe_changes[next_pe].time < limit)
      write_time(pe_changes[next_pe].time, {});
  };
  Links batch, ending;  // ending: the previous window's links, 0 at its end
  noc::Cycle end = -1;
  for (const LinkWindow& w : run.link_windows) {
    // A flit departs before its receiver, and so before the run, ends: no window starts after.
    if (w.start >= run.total_cycles) break;
    batch.clear();
    if (end == w.start) batch.swap(ending);
    if (end >= 0 && end < w.start) {
      spans_before(end);
      write_time(end, ending);
    }
    for (const auto& [i, flits] : w.flits)
      batch.push_back({num_pes + static_cast<std::size_t>(i), flits});
    spans_before(w.start);
    write_time(w.start, batch);
    ending.clear();
    for (const auto& [i, flits] : w.flits)
      ending.push_back({num_pes + static_cast<std::size_t>(i), 0});
    end = std::min(w.start + window, run.total_cycles);  // the last ends with the run
  }
  if (end >= 0) {
    spans_before(end);
    write_time(end, ending);
  }
  spans_before(noc::kNever);
  open();
  if (stamped < run.total_cycles) stamp(run.total_cycles);  // the trace ends with the run
}

std::string write_traces(const std::string& out, bool chrome, bool vcd, const RunResult& run,
                         const std::vector<std::string>& layer_names, int num_pes, double clock_ghz,
                         noc::Cycle window) {
  namespace fs = std::filesystem;
  std::string written;
  if (chrome) {
    const fs::path json = fs::path(out) / "trace.json";
    write_file(
        json, [&](std::ostream& f) { write_chrome_trace(f, run, layer_names, clock_ghz, window); });
    written += ", trace.json";
    // Its link samples are most of it: they shrink as the window grows.
    constexpr double kGiB = 1 << 30;
    if (const double size = static_cast<double>(fs::file_size(json)); size > kGiB)
      std::cout << "  note: trace.json is " << fixed(size / kGiB) << " GiB; Perfetto's UI opens "
                << "traces up to about 2 GB: --trace-window "
                << static_cast<noc::Cycle>(std::ceil(size / kGiB)) * window
                << " or more gives about 1 GiB or less\n";
  }
  if (vcd) {
    write_file(fs::path(out) / "trace.vcd",
               [&](std::ostream& f) { write_vcd(f, run, num_pes, window, clock_ghz); });
    written += ", trace.vcd";
  }
  return written;
}

}  // namespace nocflow::sim
