// SPDX-License-Identifier: MIT
#include "noc/traffic/batch.h"

#include <algorithm>
#include <charconv>
#include <deque>
#include <numeric>
#include <regex>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/limits.h"
#include "noc/base/text_input.h"

namespace nocflow::noc {
namespace {

/// Records, per message, when its last packet's tail arrived.
class BatchListener : public DeliveryListener {
 public:
  explicit BatchListener(std::vector<int> packets)
      : left_(std::move(packets)), delivered_(left_.size(), -1) {}
  void delivered(const Packet& p, Cycle now) override {
    const auto m = static_cast<std::size_t>(p.tag);
    if (--left_[m] == 0) delivered_[m] = now;
  }
  std::vector<Cycle> take() { return std::move(delivered_); }

 private:
  std::vector<int> left_;
  std::vector<Cycle> delivered_;
};

}  // namespace

std::vector<BatchMessage> read_messages(std::istream& in, const std::string& name, int nodes,
                                        const NocSpec* spec, std::string* machine) {
  std::vector<BatchMessage> out;
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM
    check_text_line(line, name + ":" + std::to_string(number));
    static const std::string kMachine = "# machine: ";
    if (machine && line.rfind(kMachine, 0) == 0) {
      *machine = line.substr(kMachine.size());
      while (!machine->empty() && (machine->back() == '\r' || machine->back() == ' ')) machine->pop_back();
    }
    std::istringstream words(line.substr(0, line.find('#')));
    std::vector<std::string> fields;
    for (std::string w; words >> w;) fields.push_back(w);
    if (fields.empty()) continue;  // blank or comment
    auto fail = [&](const std::string& why) {
      throw InputError(name + ":" + std::to_string(number) + ": " + why +
                       " (expected: src dst bytes [start_cycle])");
    };
    if (fields.size() < 3) fail("not three integers");
    if (fields.size() > 4) fail("unexpected '" + fields[4] + "'");
    static const char* const what[] = {"src", "dst", "bytes", "start_cycle"};
    std::int64_t v[4] = {0, 0, 0, 0};
    for (std::size_t i = 0; i < fields.size(); ++i) {
      const std::string& f = fields[i];
      if (has_leading_zero(f))  // as everywhere else: 010 reads as 8 in some readers, 10 in others
        fail(std::string(what[i]) + " '" + f +
             "': write whole numbers without a leading zero (it would read as octal)");
      if (i == 2) {  // bytes as the configs write them: 4096, 4KiB
        const std::optional<std::int64_t> bytes = parse_integer(f, true);
        static const std::regex count(R"(-?[0-9]+ *(KiB|MiB|GiB)?)");  // one past 64 bits
        if (!bytes && std::regex_match(f, count))
          fail("bytes must be in 1 .. " + std::to_string(kMaxMessageBytes) + ", got " + f);
        if (!bytes) fail("bytes '" + f + "' is not an integer (KiB, MiB and GiB allowed)");
        v[i] = *bytes;
        continue;
      }
      const auto [end, error] = std::from_chars(f.data(), f.data() + f.size(), v[i]);
      if (error == std::errc::result_out_of_range && end == f.data() + f.size())
        fail(i == 3 ? "start_cycle must be in 0 .. " + std::to_string(kMaxCycles) + ", got " + f
                    : "node " + f + " is outside the machine's 0.." + std::to_string(nodes - 1));
      if (error != std::errc() || end != f.data() + f.size())
        fail(std::string(what[i]) + " '" + f + "' is not an integer");
    }
    for (int i : {0, 1})
      if (v[i] < 0 || v[i] >= nodes)
        fail("node " + std::to_string(v[i]) + " is outside the machine's 0.." +
             std::to_string(nodes - 1));
    const BatchMessage m{static_cast<int>(v[0]), static_cast<int>(v[1]), v[2], v[3]};
    if (m.src == m.dst)
      fail("a message from node " + std::to_string(m.src) + " to itself never enters the NoC");
    if (m.bytes < 1 || m.bytes > kMaxMessageBytes)
      fail("bytes must be in 1 .. " + std::to_string(kMaxMessageBytes));
    if (m.start < 0 || m.start > kMaxCycles)
      fail("start_cycle must be in 0 .. " + std::to_string(kMaxCycles));
    if (spec) {
      try {
        cut_message(*spec, m.bytes);
      } catch (const InputError& e) {  // well formed: no format to recall
        throw InputError(name + ":" + std::to_string(number) + ": " + e.what());
      }
    }
    out.push_back(m);
  }
  if (out.empty()) throw InputError(name + ": no messages");
  return out;
}

BatchResult run_batch(Network& net, const std::vector<BatchMessage>& messages,
                      const Advance& advance) {
  BatchResult r;
  std::vector<MessageCut> cuts;
  std::vector<int> packets;
  for (const BatchMessage& m : messages) {
    cuts.push_back(cut_message(net.spec(), m.bytes));
    r.flits.push_back(cuts.back().flits);
    packets.push_back(cuts.back().packets);
    r.packets += cuts.back().packets;
  }
  BatchListener listener(packets);
  net.set_source(nullptr);  // resets the network
  net.set_listener(&listener);

  // Messages in start order (list order within a cycle); a full bounded source queue holds
  // its node's later messages back until it takes them.
  std::vector<std::size_t> order(messages.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return messages[a].start < messages[b].start;
  });
  std::vector<std::deque<std::size_t>> waiting(static_cast<std::size_t>(net.num_nodes()));
  std::size_t next = 0, blocked = 0;
  const Cycle first = messages[order.front()].start;
  while (next < order.size() || blocked > 0) {
    const Cycle now = blocked > 0 ? net.now() : messages[order[next]].start;
    advance(now);
    for (; next < order.size() && messages[order[next]].start <= now; ++next, ++blocked)
      waiting[static_cast<std::size_t>(messages[order[next]].src)].push_back(order[next]);
    for (auto& queue : waiting)
      while (!queue.empty()) {
        const std::size_t i = queue.front();
        const BatchMessage& m = messages[i];
        if (!net.send(m.src, {m.dst, cuts[i].flits, now, static_cast<std::int64_t>(i), false,
                              cuts[i].packet_flits}))
          break;
        queue.pop_front();
        --blocked;
      }
    if (blocked > 0) advance(now + 1);
  }
  advance(kNever);
  net.verify_drained();
  net.set_listener(nullptr);

  r.delivered = listener.take();
  Cycle last = first;
  for (std::size_t i = 0; i < messages.size(); ++i) {
    if (r.delivered[i] < 0)
      throw CheckError("message " + std::to_string(i) + " (node " +
                       std::to_string(messages[i].src) + " -> node " +
                       std::to_string(messages[i].dst) + ") was never delivered");
    last = std::max(last, r.delivered[i] + 1);
  }
  r.cycles = last - first;
  r.router_steps = net.router_steps();
  r.links = link_loads(net, r.cycles);
  return r;
}

}  // namespace nocflow::noc
