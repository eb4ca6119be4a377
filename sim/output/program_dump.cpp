// SPDX-License-Identifier: MIT
#include "sim/output/program_dump.h"

#include <filesystem>

#include "noc/base/error.h"
#include "sim/output/output_file.h"

namespace nocflow::sim {

namespace fs = std::filesystem;

void prepare_program_dump(const std::string& dir, int pes) {
  try {
    create_folder(dir, "folder");
  } catch (const InputError& e) {
    throw InputError(std::string("--dump-programs ") + e.what());
  }
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    if (program_file_pe(name) >= pes)
      throw InputError("--dump-programs " + dir + ": holds " + name +
                       " from an earlier dump, but this run has " + std::to_string(pes) +
                       " PEs: remove the old files or choose another folder");
  }
}

void write_program_dump(const std::string& dir, const ProgramSet& set,
                        const std::vector<std::string>& edge_names) {
  for (std::size_t p = 0; p < set.pe.size(); ++p)
    write_file(fs::path(dir) / ("pe_" + std::to_string(p) + ".txt"),
               [&](std::ostream& f) { write_program(f, set, static_cast<int>(p), edge_names); });
  write_file(fs::path(dir) / "names.txt",
             [&](std::ostream& f) { write_names(f, set, edge_names); });
}

}  // namespace nocflow::sim
