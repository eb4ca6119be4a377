// SPDX-License-Identifier: MIT
#include "sim/sweep/results_file.h"

#include <algorithm>
#include <fstream>
#include <iostream>
#include <sstream>

#include "noc/base/error.h"
#include "noc/base/format.h"
#include "sim/output/output_file.h"
#include "sim/sweep/sweep.h"

namespace nocflow::sim {

namespace fs = std::filesystem;

std::string csv_line(const std::vector<std::string>& fields) {
  std::string line;
  for (std::size_t i = 0; i < fields.size(); ++i) line += (i ? "," : "") + csv_field(fields[i]);
  return line;
}

std::vector<std::string> parse_csv_line(const std::string& line) {
  std::vector<std::string> out(1);
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
        out.back() += '"';
        ++i;
      } else if (c == '"') {
        quoted = false;
      } else {
        out.back() += c;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      out.emplace_back();
    } else {
      out.back() += c;
    }
  }
  return out;
}

std::string results_header(const SweepSpec& spec) {
  std::vector<std::string> h{"point"};
  for (const auto& a : spec.axes) h.push_back(a.name);
  for (const auto& c : sweep_result_columns()) h.push_back(c);
  return csv_line(h);
}

std::string partial_name(int rank) {
  return "results.partial-" + std::to_string(rank) + ".csv";
}
bool is_partial_file(const fs::path& file) {
  return file.filename().string().rfind("results.partial-", 0) == 0;
}

std::map<std::string, std::string> finished_rows(const fs::path& dir,
                                                 const std::string& expected_header) {
  std::map<std::string, std::string> rows;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_partial_file(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  if (fs::exists(dir / "results.csv")) files.insert(files.begin(), dir / "results.csv");
  const std::size_t columns = parse_csv_line(expected_header).size();
  const std::size_t status_column = columns - sweep_result_columns().size() + 1;
  // Lines as written on another system (CRLF) read the same.
  auto next_line = [](std::istream& in, std::string& line) {
    if (!std::getline(in, line)) return false;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  };
  for (const auto& f : files) {
    std::ifstream in(f);
    std::string line;
    if (!next_line(in, line)) continue;
    if (line != expected_header)
      throw InputError(f.string() + ": its columns differ from this spec's; use another --out");
    while (next_line(in, line)) {
      const auto fields = parse_csv_line(line);
      if (fields.size() != columns) continue;  // a line cut short by an interruption, or edited
      const std::string& status = fields[status_column];
      if (status == "ok" || status == "infeasible") rows.emplace(fields[0], line);
    }
  }
  return rows;
}

std::size_t error_at(const std::string& text) {
  if (text.rfind('!', 0) == 0) return 0;
  const std::size_t at = text.find("\n!");
  return at == std::string::npos ? at : at + 1;
}

int write_results(const SweepSpec& spec, const std::vector<SweepPoint>& points,
                  const std::map<std::string, std::string>& finished,
                  const std::vector<std::string>& all, const std::string& head,
                  const std::string& out, double seconds) {
  const fs::path dir = out;
  std::map<std::string, std::size_t> index;
  for (const SweepPoint& p : points) index[p.key] = p.index;
  std::vector<std::string> rows(points.size());
  for (const auto& [key, row] : finished)
    if (index.count(key)) rows[index.at(key)] = row;
  int failed_total = 0;
  for (const std::string& text : all) {
    std::istringstream in(text.substr(0, error_at(text)));
    for (std::string line; std::getline(in, line);) {
      const auto fields = parse_csv_line(line);
      rows[index.at(fields[0])] = line;
      failed_total += fields[spec.axes.size() + 2] == "failed";
    }
  }
  OutputFile results(dir / "results.csv");
  results << head << "\n";
  std::size_t missing = 0;
  for (const auto& r : rows) {
    if (r.empty()) {
      ++missing;
      continue;
    }
    results << r << "\n";
  }
  results.close();
  std::error_code ignored;
  for (const auto& e : fs::directory_iterator(dir))
    if (is_partial_file(e.path())) fs::remove(e.path(), ignored);
  std::cout << "nocflow: wrote " << out << "/results.csv (" << points.size() - missing << " of "
            << points.size() << " points"
            << (failed_total ? ", " + std::to_string(failed_total) + " failed" : "")
            << "), sweep.yaml, config.resolved.yaml, inputs.txt in " << fixed(seconds, 1) << " s"
            << std::endl;
  return failed_total;
}

}  // namespace nocflow::sim
