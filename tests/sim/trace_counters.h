// SPDX-License-Identifier: MIT
#pragma once
// The link counters of a Chrome trace (sim/output/trace.h) read back: a track is sampled where
// its count changes, and a sample holds over every window until the track's next one.
#include <cmath>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace nocflow::testing {

struct CounterTracks {
  std::map<std::string, std::int64_t> flits;  ///< per link: Σ samples × the windows each holds
  std::map<std::string, std::int64_t> last;   ///< per link: its last sample
  std::int64_t samples = 0;
  std::int64_t repeats = 0;  ///< samples equal to their track's previous one (none expected)
};

/// `cycles_per_us`: the clock in GHz × 1000; `window`: cycles per sample window.
inline CounterTracks read_counters(const nlohmann::json& trace, double cycles_per_us,
                                   std::int64_t window) {
  std::map<std::string, std::vector<std::pair<std::int64_t, std::int64_t>>>
      tracks;  // (cycle, flits)
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C")
      for (const auto& [k, v] : e["args"].items())
        tracks[e["name"].get<std::string>()].push_back(
            {std::llround(e["ts"].get<double>() * cycles_per_us), v.get<std::int64_t>()});
  CounterTracks out;
  for (const auto& [name, s] : tracks) {
    std::int64_t& flits = out.flits[name];
    for (std::size_t i = 0; i < s.size(); ++i) {
      ++out.samples;
      if (i > 0 && s[i].second == s[i - 1].second) ++out.repeats;
      // Held until the next sample; the last window of a run may be cut short.
      if (i + 1 < s.size())
        flits += s[i].second * ((s[i + 1].first - s[i].first + window - 1) / window);
    }
    out.last[name] = s.back().second;
  }
  return out;
}

}  // namespace nocflow::testing
