// SPDX-License-Identifier: MIT
#include "sim/system/program.h"

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <tuple>
#include <unordered_map>
#include <unordered_set>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "noc/base/input_file.h"
#include "noc/base/limits.h"
#include "noc/base/text_input.h"

namespace nocflow::sim {

const char* step_name(StepKind k) {
  switch (k) {
    case StepKind::Compute: return "compute";
    case StepKind::Reduce: return "reduce";
    case StepKind::Send: return "send";
    case StepKind::Recv: return "recv";
    case StepKind::Barrier: return "barrier";
  }
  return "?";
}

namespace {

/// A name as one word of a program line: as is, or quoted as dot_string quotes it (\", \\,
/// \n) if it is empty or holds whitespace, a quote, a backslash or '#'.
std::string word(const std::string& name) {
  if (!name.empty() && name.find_first_of(" \t\r\n\"#\\") == std::string::npos) return name;
  return dot_string(name);
}

}  // namespace

void write_program(std::ostream& out, const ProgramSet& set, int pe,
                   const std::vector<std::string>& edge_names) {
  out << "# PE " << pe << ": " << set.pe[pe].size() << " steps\n";
  for (const Step& s : set.pe[pe]) {
    out << step_name(s.kind);
    if (s.layer >= 0 && s.layer < static_cast<int>(set.layer_names.size()))
      out << "  layer=" << word(set.layer_names[s.layer]);
    switch (s.kind) {
      case StepKind::Compute:
      case StepKind::Reduce: out << "  cycles=" << s.cycles; break;
      case StepKind::Send: out << "  to=PE" << s.peer << "  bytes=" << s.bytes << "  tag=" << s.tag; break;
      case StepKind::Recv: out << "  from=PE" << s.peer << "  bytes=" << s.bytes << "  tag=" << s.tag; break;
      case StepKind::Barrier: out << "  id=" << s.tag; break;
    }
    if (s.edge >= 0 && s.edge < static_cast<int>(edge_names.size()))
      out << "  edge=" << word(edge_names[s.edge]);
    out << "\n";
  }
}

void write_names(std::ostream& out, const ProgramSet& set,
                 const std::vector<std::string>& edge_names) {
  // Only names some step uses (an edge that moves nothing has none): a replay notes the others.
  std::vector<bool> layer_used(set.layer_names.size()), edge_used(edge_names.size());
  for (const Program& p : set.pe)
    for (const Step& s : p) {
      if (s.layer >= 0 && s.layer < static_cast<int>(layer_used.size())) layer_used[s.layer] = true;
      if (s.edge >= 0 && s.edge < static_cast<int>(edge_used.size())) edge_used[s.edge] = true;
    }
  out << "# layer and edge names in the plan's order (simulate --programs lists them so)\n";
  for (std::size_t i = 0; i < layer_used.size(); ++i)
    if (layer_used[i]) out << "layer " << word(set.layer_names[i]) << "\n";
  for (std::size_t i = 0; i < edge_used.size(); ++i)
    if (edge_used[i]) out << "edge " << word(edge_names[i]) << "\n";
}

namespace {

/// Where a step came from, for messages.
struct Origin {
  std::string file;
  int line = 0;
  std::string str() const { return file + ":" + std::to_string(line); }
};

/// Numbers names in order of first appearance.
class NameTable {
 public:
  explicit NameTable(std::vector<std::string>& names) : names_(names) {}
  int id(const std::string& name) {
    const auto [it, added] = ids_.emplace(name, static_cast<int>(names_.size()));
    if (added) names_.push_back(name);
    return it->second;
  }

 private:
  std::vector<std::string>& names_;
  std::unordered_map<std::string, int> ids_;
};

/// A program line's words, split at whitespace outside double quotes, quotes and escapes
/// (\", \\, \n) undone; a '#' outside quotes starts a comment.
std::vector<std::string> split_words(const std::string& line, const Origin& at) {
  std::vector<std::string> words;
  bool in_word = false, quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"') {
        quoted = false;
      } else if (c == '\\') {
        if (++i == line.size()) break;
        words.back() += line[i] == 'n' ? '\n' : line[i];
      } else {
        words.back() += c;
      }
      continue;
    }
    if (c == '#') break;
    if (c == ' ' || c == '\t' || c == '\r') {
      in_word = false;
      continue;
    }
    if (!in_word) words.emplace_back(), in_word = true;
    if (c == '"')
      quoted = true;
    else
      words.back() += c;
  }
  if (quoted) throw InputError(at.str() + ": a quoted name is not closed (missing '\"')");
  return words;
}

/// One line of a program file: `kind key=value ...`.
Step parse_step(const std::vector<std::string>& line, const Origin& at, int pe, int pes,
                NameTable& layers, NameTable& edges) {
  const std::string& kind_word = line.front();
  auto fail = [&](const std::string& why) { throw InputError(at.str() + ": " + why); };
  Step s;
  bool known = false;
  std::string kinds;
  for (StepKind k : {StepKind::Compute, StepKind::Reduce, StepKind::Send, StepKind::Recv,
                     StepKind::Barrier}) {
    if (kind_word == step_name(k)) s.kind = k, known = true;
    kinds += (kinds.empty() ? "" : ", ") + std::string(step_name(k));
  }
  if (!known) fail("unknown step '" + kind_word + "' (known: " + kinds + ")");
  // The keys each kind takes, required first.
  std::vector<std::string> required, optional = {"layer", "edge"};
  switch (s.kind) {
    case StepKind::Compute:
      required = {"cycles"}, optional = {"layer"};
      break;
    case StepKind::Reduce:
      required = {"cycles"};
      break;
    case StepKind::Send:
      required = {"to", "bytes", "tag"};
      break;
    case StepKind::Recv:
      required = {"from", "bytes", "tag"};
      break;
    case StepKind::Barrier:
      required = {"id"}, optional = {};
      break;
  }
  auto number = [&](const std::string& key, const std::string& text, std::int64_t min,
                    std::int64_t max = std::numeric_limits<std::int64_t>::max()) {
    std::int64_t v = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (error != std::errc() || end != text.data() + text.size() || text.empty())
      fail(key + "=" + text + ": expected an integer");
    if (v < min) fail(key + "=" + text + ": must be at least " + std::to_string(min));
    if (v > max) fail(key + "=" + text + ": must be at most " + std::to_string(max));
    return v;
  };
  std::vector<std::string> seen;
  for (std::size_t w = 1; w < line.size(); ++w) {
    const std::string& word = line[w];
    const auto eq = word.find('=');
    if (eq == std::string::npos || eq == 0) fail("expected key=value, got '" + word + "'");
    const std::string key = word.substr(0, eq), value = word.substr(eq + 1);
    auto among = [&key](const std::vector<std::string>& keys) {
      return std::find(keys.begin(), keys.end(), key) != keys.end();
    };
    if (!among(required) && !among(optional)) {
      std::string all;
      for (const auto& k : required) all += (all.empty() ? "" : ", ") + k;
      for (const auto& k : optional) all += (all.empty() ? "" : ", ") + k;
      fail("unknown key '" + key + "' for " + kind_word + " (known: " + all + ")");
    }
    if (among(seen)) fail("'" + key + "' given twice");
    seen.push_back(key);
    if (key == "layer")
      s.layer = layers.id(value);
    else if (key == "edge")
      s.edge = edges.id(value);
    else if (key == "cycles")
      s.cycles = number(key, value, 0, kMaxCycles);
    else if (key == "bytes")
      s.bytes = number(key, value, 1, kMaxMessageBytes);
    else if (key == "tag" || key == "id")
      s.tag = number(key, value, key == "id" ? 1 : 0);
    else {  // to, from: PEn
      if (value.rfind("PE", 0) != 0) fail(key + "=" + value + ": expected PEn");
      const std::int64_t peer = number(key, value.substr(2), 0);
      if (peer >= pes)
        fail(key + "=" + value + ": the hardware has PEs 0.." + std::to_string(pes - 1));
      if (peer == pe) fail(key + "=" + value + ": a message to its own PE never enters the NoC");
      s.peer = static_cast<int>(peer);
    }
  }
  for (const auto& key : required)
    if (std::find(seen.begin(), seen.end(), key) == seen.end())
      fail(kind_word + " needs '" + key + "='");
  return s;
}

/// Calls f(words, origin) for each line of `in` (read from `file`) that holds words: a UTF-8
/// BOM, blank lines and comments skipped, control characters refused.
template <class F>
void for_each_line(std::istream& in, const std::string& file, F&& f) {
  std::string line;
  for (int number = 1; std::getline(in, line); ++number) {
    if (number == 1 && line.rfind("\xEF\xBB\xBF", 0) == 0) line.erase(0, 3);  // a UTF-8 BOM
    const Origin at{file, number};
    check_text_line(line, at.str());
    const std::vector<std::string> words = split_words(line, at);
    if (!words.empty()) f(words, at);
  }
  if (in.bad()) throw InputError(file + ": cannot read");
}

/// Numbers the names of DIR/names.txt, if there is one, before any program's.
void read_names(const std::string& dir, NameTable& layers, NameTable& edges) {
  const std::string file = (std::filesystem::path(dir) / "names.txt").string();
  check_input_path(file, file);
  if (!std::filesystem::exists(file)) return;
  if (std::filesystem::is_directory(file))
    throw InputError(file + ": cannot read: it is a directory");
  std::ifstream in(file);
  if (!in) throw InputError(file + ": cannot open");
  for_each_line(in, file, [&](const std::vector<std::string>& words, const Origin& at) {
    if (words.size() != 2 || (words[0] != "layer" && words[0] != "edge"))
      throw InputError(at.str() + ": expected 'layer NAME' or 'edge NAME'");
    (words[0] == "layer" ? layers : edges).id(words[1]);
  });
}

/// Renumbers a step field's names keeping only those some step uses, in their order; returns
/// those left out.
std::vector<std::string> drop_unused(std::vector<Program>& programs, int Step::*field,
                                     std::vector<std::string>& names) {
  std::vector<int> id(names.size(), -1);
  for (const Program& p : programs)
    for (const Step& s : p)
      if (s.*field >= 0) id[static_cast<std::size_t>(s.*field)] = 0;
  std::vector<std::string> kept, unused;
  for (std::size_t i = 0; i < names.size(); ++i)
    if (id[i] == 0) {
      id[i] = static_cast<int>(kept.size());
      kept.push_back(std::move(names[i]));
    } else {
      unused.push_back(std::move(names[i]));
    }
  for (Program& p : programs)
    for (Step& s : p)
      if (s.*field >= 0) s.*field = id[static_cast<std::size_t>(s.*field)];
  names = std::move(kept);
  return unused;
}

/// Drops the names no step uses; a note names those names.txt gave (a program edited since
/// --dump-programs wrote it, or a misspelt name).
void drop_unused_names(ProgramFiles& files, const std::string& dir) {
  const std::string file = (std::filesystem::path(dir) / "names.txt").string();
  for (const auto& [field, names, kind] :
       {std::tuple{&Step::layer, &files.programs.layer_names, "layer"},
        std::tuple{&Step::edge, &files.edge_names, "edge"}}) {
    const std::vector<std::string> unused = drop_unused(files.programs.pe, field, *names);
    if (unused.empty()) continue;
    constexpr std::size_t kShown = 5;
    std::string list;
    for (std::size_t i = 0; i < std::min(unused.size(), kShown); ++i)
      list += (i ? ", " : "") + unused[i];
    if (unused.size() > kShown) list += ", ...";
    files.notes.push_back(file + ": " + std::to_string(unused.size()) + " " + kind +
                          (unused.size() == 1 ? " name" : " names") + " that no program uses (" +
                          list + "); ignored");
  }
}

}  // namespace

int program_file_pe(const std::string& name) {
  int n = -1;
  if (std::sscanf(name.c_str(), "pe_%d.txt", &n) == 1 && n >= 0 &&
      name == "pe_" + std::to_string(n) + ".txt")
    return n;
  return -1;
}

namespace {

/// Runs the programs on their waits alone (sends never wait, computes and adds take no time):
/// what is left stuck would hang a run. Throws InputError naming the cycle of waits it is in: a
/// receive waits for its sender, a barrier for the first PE that has not reached it.
void check_waits_resolve(const ProgramSet& set, const std::vector<std::vector<Origin>>& where) {
  const int pes = static_cast<int>(set.pe.size());
  std::vector<std::size_t> at(set.pe.size(), 0);
  auto step = [&](int pe) -> const Step* {
    const Program& p = set.pe[static_cast<std::size_t>(pe)];
    return at[static_cast<std::size_t>(pe)] < p.size() ? &p[at[static_cast<std::size_t>(pe)]]
                                                       : nullptr;
  };
  auto at_barrier = [&](int pe) { return step(pe) && step(pe)->kind == StepKind::Barrier; };
  // Each PE runs until it waits; a send wakes the PE waiting for it, the last PE to reach a
  // barrier all of them (every PE passes the same barriers in order: checked). A message is
  // (source, destination, tag), messages sent and not yet received are `in_flight`.
  // A PE is queued at most once: one woken before it first ran would otherwise run again from
  // the barrier it stopped at and be counted there twice.
  std::unordered_set<MessageKey, MessageKeyHash> in_flight;
  std::vector<int> runnable(set.pe.size());
  for (int pe = 0; pe < pes; ++pe) runnable[static_cast<std::size_t>(pe)] = pes - 1 - pe;
  std::vector<bool> queued(set.pe.size(), true);
  auto wake = [&](int q) {
    if (!queued[static_cast<std::size_t>(q)]) runnable.push_back(q);
    queued[static_cast<std::size_t>(q)] = true;
  };
  int at_barriers = 0;
  while (!runnable.empty()) {
    const int pe = runnable.back();
    runnable.pop_back();
    queued[static_cast<std::size_t>(pe)] = false;
    for (const Step* s; (s = step(pe)); ++at[static_cast<std::size_t>(pe)]) {
      if (s->kind == StepKind::Send) {
        in_flight.insert({pe, s->peer, s->tag});
        const Step* there = step(s->peer);  // the receiver, if it waits for this one
        if (there && there->kind == StepKind::Recv && there->peer == pe && there->tag == s->tag)
          wake(s->peer);
      } else if (s->kind == StepKind::Recv) {
        if (!in_flight.erase({s->peer, pe, s->tag})) break;
      } else if (s->kind == StepKind::Barrier) {
        if (++at_barriers < pes) break;
        at_barriers = 0;
        for (int q = 0; q < pes; ++q)
          if (q != pe) ++at[static_cast<std::size_t>(q)], wake(q);
      }
    }
  }
  int first = -1;
  for (int pe = 0; pe < pes && first < 0; ++pe)
    if (step(pe)) first = pe;
  if (first < 0) return;
  auto waited_for = [&](int pe) {
    if (!at_barrier(pe)) return step(pe)->peer;
    int q = 0;
    while (at_barrier(q)) ++q;  // some PE is not at the barrier, or all would have passed it
    return q;
  };
  std::vector<int> chain;
  std::vector<bool> seen(set.pe.size(), false);
  for (int pe = first; !seen[static_cast<std::size_t>(pe)]; pe = waited_for(pe)) {
    seen[static_cast<std::size_t>(pe)] = true;
    chain.push_back(pe);
  }
  const int loop = waited_for(chain.back());
  std::string text;
  for (auto i = std::find(chain.begin(), chain.end(), loop); i != chain.end(); ++i) {
    const Step& s = *step(*i);
    text += "\n  " + where[static_cast<std::size_t>(*i)][at[static_cast<std::size_t>(*i)]].str() +
            ": PE " + std::to_string(*i) + " " +
            (s.kind == StepKind::Barrier
                 ? "at barrier " + std::to_string(s.tag)
                 : "receives tag " + std::to_string(s.tag) + " from PE " + std::to_string(s.peer)) +
            ", waiting for PE " + std::to_string(waited_for(*i));
  }
  throw InputError("the programs cannot complete: these PEs wait for each other in a cycle" + text);
}

}  // namespace

ProgramFiles read_programs(const std::string& dir, int pes,
                           const std::function<void(std::int64_t bytes)>& check_send) {
  namespace fs = std::filesystem;
  check_input_path(dir, dir);
  if (!fs::is_directory(dir))
    throw InputError(dir + (fs::exists(dir) ? ": not a folder (give the folder of pe_N.txt files)"
                                            : ": no such folder of programs"));
  ProgramFiles out{ProgramSet(pes), {}, {}};
  NameTable layers(out.programs.layer_names), edges(out.edge_names);
  read_names(dir, layers, edges);
  std::vector<std::vector<Origin>> where(pes);  // per PE, per step
  for (int pe = 0; pe < pes; ++pe) {
    const std::string file = (fs::path(dir) / ("pe_" + std::to_string(pe) + ".txt")).string();
    check_input_path(file, file);
    // A folder opens as a stream that reads nothing: it would pass for an empty program.
    if (fs::is_directory(file)) throw InputError(file + ": cannot read: it is a directory");
    std::ifstream in(file);
    if (!in)
      throw InputError(file + ": cannot open (the hardware has " + std::to_string(pes) +
                       " PEs: give pe_0.txt ... pe_" + std::to_string(pes - 1) + ".txt)");
    for_each_line(in, file, [&](const std::vector<std::string>& words, const Origin& at) {
      const Step& s =
          out.programs.pe[pe].emplace_back(parse_step(words, at, pe, pes, layers, edges));
      if (check_send && s.kind == StepKind::Send) try {
          check_send(s.bytes);
        } catch (const InputError& e) {
          throw InputError(at.str() + ": " + e.what());
        }
      where[pe].push_back(at);
    });
  }
  for (const auto& entry : fs::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (program_file_pe(name) >= pes)
      throw InputError(entry.path().string() + ": the hardware has only " + std::to_string(pes) +
                       " PEs");
    // pe_01.txt or pe_-1.txt would be left out unsaid: a program file is pe_N.txt.
    const bool numbered = name.size() > 7 && name.rfind("pe_", 0) == 0 &&
                          name.compare(name.size() - 4, 4, ".txt") == 0 &&
                          name.find_first_not_of("+-0123456789", 3) == name.size() - 4;
    if (numbered && program_file_pe(name) < 0)
      throw InputError(entry.path().string() +
                       ": not a program file name (pe_N.txt, N a PE number without leading zeros)");
  }

  // Sends and receives pair up by (source, destination, tag).
  struct Ends {
    const Step* send = nullptr;
    const Step* recv = nullptr;
    Origin send_at, recv_at;
  };
  std::map<std::tuple<int, int, std::int64_t>, Ends> messages;
  std::int64_t barriers_of_pe0 = 0;
  for (int pe = 0; pe < pes; ++pe) {
    std::int64_t barriers = 0;
    for (std::size_t i = 0; i < out.programs.pe[pe].size(); ++i) {
      const Step& s = out.programs.pe[pe][i];
      const Origin& at = where[pe][i];
      if (s.kind == StepKind::Barrier && s.tag != ++barriers)
        throw InputError(at.str() + ": barrier " + std::to_string(s.tag) + " where barrier " +
                         std::to_string(barriers) +
                         " comes next (barriers are passed 1, 2, 3, ...)");
      if (s.kind != StepKind::Send && s.kind != StepKind::Recv) continue;
      const bool send = s.kind == StepKind::Send;
      Ends& e = messages[{send ? pe : s.peer, send ? s.peer : pe, s.tag}];
      const Step*& slot = send ? e.send : e.recv;
      if (slot)
        throw InputError(at.str() + ": a second " + step_name(s.kind) + " of tag " +
                         std::to_string(s.tag) + (send ? " to PE" : " from PE") +
                         std::to_string(s.peer) +
                         " (the first: " + (send ? e.send_at : e.recv_at).str() + ")");
      slot = &s;
      (send ? e.send_at : e.recv_at) = at;
    }
    if (pe == 0) barriers_of_pe0 = barriers;
    if (barriers != barriers_of_pe0)
      throw InputError((where[pe].empty() ? dir : where[pe].back().str()) + ": PE " +
                       std::to_string(pe) + " passes " + std::to_string(barriers) +
                       " barriers, PE 0 " + std::to_string(barriers_of_pe0) +
                       ": every PE must reach every barrier");
  }
  drop_unused_names(out, dir);
  out.programs.next_tag = 1;
  for (const auto& [key, e] : messages) {
    const auto& [src, dst, tag] = key;
    out.programs.next_tag = std::max(out.programs.next_tag, tag + 1);
    if (!e.recv)
      throw InputError(e.send_at.str() + ": nothing receives this message: PE " +
                       std::to_string(dst) + " has no 'recv from=PE" + std::to_string(src) +
                       " tag=" + std::to_string(tag) + "'");
    if (!e.send)
      throw InputError(e.recv_at.str() + ": nothing sends this message: PE " + std::to_string(src) +
                       " has no 'send to=PE" + std::to_string(dst) + " tag=" + std::to_string(tag) +
                       "'");
    if (e.send->bytes != e.recv->bytes)
      throw InputError(e.recv_at.str() + ": receives " + std::to_string(e.recv->bytes) +
                       " bytes of a message of " + std::to_string(e.send->bytes) + " (" +
                       e.send_at.str() + ")");
    // The tables count a message once, under its edge: both ends must name the same one.
    if (e.send->edge != e.recv->edge) {
      auto edge = [&](int id) {
        return id < 0 ? std::string("no edge")
                      : "edge=" + word(out.edge_names[static_cast<std::size_t>(id)]);
      };
      throw InputError(e.recv_at.str() + ": receives as " + edge(e.recv->edge) +
                       " a message sent as " + edge(e.send->edge) + " (" + e.send_at.str() +
                       "): both ends of a message name the same edge");
    }
  }
  check_waits_resolve(out.programs, where);
  return out;
}

}  // namespace nocflow::sim
