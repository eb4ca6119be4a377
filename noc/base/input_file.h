// SPDX-License-Identifier: MIT
#pragma once
// The check every reader of an input file makes before it opens it: paths the system refuses
// to look up, and devices, are refused here with the reader's own wording.
#include <filesystem>
#include <string>
#include <system_error>

#include "noc/base/error.h"

namespace nocflow {

/// Throws InputError("`what`: cannot read: REASON") for a path that is not missing (each
/// reader says that in its words) but cannot be looked up (a name too long, a loop of links)
/// or is a device: /dev/zero reads forever, and the reader held it all until memory ran out.
inline void check_input_path(const std::filesystem::path& file, const std::string& what) {
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(file, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw InputError(what + ": cannot read: " + ec.message());
  if (st.type() == std::filesystem::file_type::character ||
      st.type() == std::filesystem::file_type::block)
    throw InputError(what + ": cannot read: it is a device, not a file");
}

}  // namespace nocflow
