// SPDX-License-Identifier: MIT
#include "sim/system/system.h"

#include <chrono>
#include <cmath>
#include <sstream>

#include "noc/base/error.h"

namespace nocflow::sim {

System::System(const sc_core::sc_module_name& name, const HwSpec& hw, const ProgramSet& programs)
    : sc_core::sc_module(name),
      programs_(programs),
      net_(hw.noc()),
      noc_("noc", net_, hw.clock.frequency_ghz,
           sc_core::sc_time(0.5 / hw.clock.frequency_ghz, sc_core::SC_NS)),
      messages_(net_, [this](int dst) { pes_[dst]->arrival.notify(noc_.period() / 2); }) {
  if (static_cast<int>(programs.pe.size()) != net_.num_nodes())
    throw InputError("programs for " + std::to_string(programs.pe.size()) + " PEs, but the hardware has " +
                     std::to_string(net_.num_nodes()));
  // Here too, since an exception thrown inside a SystemC process reaches the caller wrapped as
  // an internal error.
  check_messages_fit(net_.spec(), programs);
  for (int p = 0; p < net_.num_nodes(); ++p)
    pes_.push_back(std::make_unique<PeModule>(("pe_" + std::to_string(p)).c_str(), p, programs.pe[p], *this));
}

void check_messages_fit(const noc::NocSpec& spec, const ProgramSet& programs) {
  for (std::size_t p = 0; p < programs.pe.size(); ++p)
    for (const Step& s : programs.pe[p])
      if (s.kind == StepKind::Send) try {
          noc::cut_message(spec, s.bytes);
        } catch (const InputError& e) {
          throw InputError("PE " + std::to_string(p) + ": " + e.what());
        }
}

System::~System() = default;

noc::Cycle System::cycle_now() const {
  // Integer time units, rounded to the nearest cycle (PEs act at half cycles).
  const auto t = sc_core::sc_time_stamp().value(), p = noc_.period().value();
  return static_cast<noc::Cycle>((t + p / 2) / p);
}

bool System::send(int pe, const Step& s) {
  if (s.peer < 0 || s.peer >= net_.num_nodes())
    throw InputError("PE " + std::to_string(pe) + " sends to PE " + std::to_string(s.peer) + ", which does not exist");
  if (!messages_.send(pe, s.peer, s.bytes, s.tag, cycle_now())) return false;
  noc_.wake();
  return true;
}

std::optional<noc::Cycle> System::take(int pe, const Step& s) {
  return messages_.take(s.peer, pe, s.tag, s.bytes);
}

void System::arrive_at_barrier(int pe, std::int64_t id) {
  if (id != barrier_id_ + 1 && id != barrier_id_)
    throw InputError("PE " + std::to_string(pe) + " reached barrier " + std::to_string(id) +
                     " while barrier " + std::to_string(barrier_id_ + 1) + " was expected");
  barrier_id_ = id;
  if (++barrier_count_ == net_.num_nodes()) {
    barrier_count_ = 0;
    barriers_passed_ = id;
    // Every message sent before the barrier has been received: the network is drained. Its
    // arbitration starts afresh, so that each phase runs as it would alone (`traffic
    // --messages` of its sends gives its cycles exactly).
    net_.reset_arbitration();
    barrier_event_.notify(sc_core::SC_ZERO_TIME);
  }
}

std::string System::waiting_report() const {
  std::ostringstream s;
  int lines = 0;
  for (const auto& pe : pes_) {
    if (pe->finished() || lines >= 16) continue;
    const Step* step = pe->current();
    s << "  PE " << pe->id() << " waits in " << step_name(step->kind);
    if (step->kind == StepKind::Recv)
      s << " for " << step->bytes << " bytes from PE " << step->peer << " (tag " << step->tag << ")";
    if (step->kind == StepKind::Barrier) s << " " << step->tag;
    s << "\n";
    ++lines;
  }
  return s.str();
}

std::vector<std::int64_t> System::link_counts() const {
  std::vector<std::int64_t> counts;
  const noc::Topology& t = net_.topology();
  for (int n = 0; n < t.num_nodes(); ++n) counts.push_back(net_.injected_at(n));
  for (int r = 0; r < t.num_routers(); ++r)
    for (int p = 0; p < t.num_ports(r); ++p)
      if (t.out(r, p).kind != noc::PortPeer::Kind::None) counts.push_back(net_.router(r).flits_sent(p));
  return counts;
}

void System::close_windows(noc::Cycle before) {
  // Every flit counted so far departed before cycle `before`.
  if (window_ <= 0 || before < window_start_ + window_) return;
  std::vector<std::int64_t> counts = link_counts();
  LinkWindow w{window_start_, {}};
  for (std::size_t i = 0; i < counts.size(); ++i)
    if (counts[i] != window_base_[i])
      w.flits.emplace_back(static_cast<int>(i), counts[i] - window_base_[i]);
  if (!w.flits.empty()) result_.link_windows.push_back(std::move(w));
  window_base_ = std::move(counts);
  window_start_ = before / window_ * window_;
}

void System::after_cycle(noc::Cycle now) {
  if (on_progress && (++cycles_seen_ & 0xfff) == 0 && progress_.due() >= 0) on_progress(now);
}

RunResult System::run() {
  const auto t0 = std::chrono::steady_clock::now();
  progress_.restart();
  window_base_ = link_counts();
  noc_.before_cycle = [this](noc::Cycle c) { close_windows(c); };
  noc_.on_cycle = [this](noc::Cycle now) { after_cycle(now); };
  noc_.free_run();
  sc_core::sc_start();
  noc_.rethrow_error();
  result_.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

  bool all_done = true;
  for (const auto& pe : pes_) all_done &= pe->finished();
  if (!all_done)
    throw CheckError("the programs did not complete: nothing left to happen, but\n" + waiting_report());
  messages_.verify_all_taken();
  if (!net_.empty()) throw CheckError("the network still holds flits after every PE finished");
  net_.verify_drained();

  for (const auto& pe : pes_) {
    result_.pe_finish.push_back(pe->finish_cycle());
    result_.total_cycles = std::max(result_.total_cycles, pe->finish_cycle());
  }
  result_.messages = messages_.messages();
  result_.packets = messages_.packets();
  result_.flits = messages_.flits();
  result_.bytes = messages_.bytes();
  close_windows(noc::kNever / 2);  // the last, partial window
  result_.links = noc::link_loads(net_, std::max<noc::Cycle>(result_.total_cycles, 1));
  // Hops as the cost models and the seed count them: router-to-router links, or on a crossbar
  // (no such links) its one switch, which every flit crosses once on its way out.
  const bool crossbar = net_.topology().num_routers() == 1;
  for (const auto& l : result_.links)
    if (l.kind == (crossbar ? noc::LinkLoad::Kind::Ejection : noc::LinkLoad::Kind::RouterToRouter))
      result_.flit_hops += l.flits;
  return result_;
}

}  // namespace nocflow::sim
