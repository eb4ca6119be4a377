// SPDX-License-Identifier: MIT
#pragma once
// The traffic CLI tests' machine and readers (traffic_cli_test.cpp, traffic_messages_cli_test.cpp).
#include <gtest/gtest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "tests/cli_runner.h"

namespace nocflow::testing {

/// BookSim2's 8x8 (booksim8x8.yaml: 5 cycles per router, 16-byte flits, 4-flit VC buffers).
inline const std::string kHw = std::string(NOCFLOW_SOURCE_DIR) + "/configs/hw/booksim8x8.yaml";

/// One row of links.csv.
struct LinkRow {
  std::string from, to;
  int flits = 0;
  std::string first, last;  ///< empty for a link that carried nothing
  std::optional<double> busy_share;  ///< none for a link that carried nothing
};

inline std::vector<LinkRow> read_links(const std::filesystem::path& csv) {
  std::vector<LinkRow> rows;
  for (const auto& row : read_csv_rows(csv))
    rows.push_back({row.at("from"), row.at("to"), std::stoi(row.at("flits")), row.at("first_cycle"),
                    row.at("last_cycle"),
                    row.at("busy_share_of_span").empty()
                        ? std::nullopt
                        : std::optional<double>(std::stod(row.at("busy_share_of_span")))});
  return rows;
}

/// Bad input: exit code 2, `message` in the output, nothing written to `out`.
inline void expect_rejected(const CliRun& r, const std::string& message,
                            const std::filesystem::path& out, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << what << ": " << r.output;
  EXPECT_NE(r.output.find(message), std::string::npos) << what << ": " << r.output;
  EXPECT_FALSE(std::filesystem::exists(out)) << what;
}

}  // namespace nocflow::testing
