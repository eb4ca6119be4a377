// SPDX-License-Identifier: MIT
#include "sim/output/output_file.h"

#include <unistd.h>

#include <cerrno>
#include <string>
#include <system_error>

#include "noc/base/error.h"

namespace nocflow::sim {

namespace {
/// Why `dir` cannot be a folder, from what is there: "" when nothing says so.
std::string why_not_a_folder(const std::filesystem::path& dir) {
  std::error_code ignored;
  for (std::filesystem::path p = dir; !p.empty(); p = p.parent_path()) {
    if (std::filesystem::exists(p, ignored)) {
      if (!std::filesystem::is_directory(p, ignored)) return (p == dir ? "it" : p.string()) + " is a file, not a folder";
      if (p != dir && ::access(p.c_str(), W_OK) != 0)
        return p.string() + ": " + std::generic_category().message(errno);
      return "";
    }
    if (p == p.parent_path()) break;
  }
  return "";
}
}  // namespace

void create_folder(const std::filesystem::path& dir, const std::string& what) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec) return;
  // "Not a directory" or "File exists" says less than which path is a file.
  const std::string why = why_not_a_folder(dir);
  throw InputError(dir.string() + ": cannot create " + what + ": " + (why.empty() ? ec.message() : why));
}

void check_can_create_folder(const std::filesystem::path& dir, const std::string& what) {
  if (const std::string why = why_not_a_folder(dir); !why.empty())
    throw InputError(dir.string() + ": cannot create " + what + ": " + why);
}

void throw_cannot_write(const std::filesystem::path& path, int error) {
  std::error_code ec;
  std::string reason;
  if (std::filesystem::is_directory(path, ec))
    reason = "it is a directory";
  else if (error != 0)
    reason = std::generic_category().message(error);
  throw InputError(path.string() + ": cannot write" + (reason.empty() ? "" : ": " + reason));
}

void check_not_folders(const std::filesystem::path& dir, const std::vector<std::string>& names) {
  std::error_code ec;
  for (const std::string& name : names)
    if (!name.empty() && std::filesystem::is_directory(dir / name, ec))
      throw_cannot_write(dir / name, 0);
}

ErrnoFilebuf::int_type ErrnoFilebuf::overflow(int_type c) {
  errno = 0;
  const int_type r = std::filebuf::overflow(c);
  if (traits_type::eq_int_type(r, traits_type::eof())) keep(errno);
  return r;
}

std::streamsize ErrnoFilebuf::xsputn(const char_type* s, std::streamsize n) {
  errno = 0;
  const std::streamsize r = std::filebuf::xsputn(s, n);
  if (r < n) keep(errno);
  return r;
}

int ErrnoFilebuf::sync() {
  errno = 0;
  const int r = std::filebuf::sync();
  if (r != 0) keep(errno);
  return r;
}

OutputFile::OutputFile(std::filesystem::path path, std::ios::openmode mode)
    : std::ostream(nullptr), path_(std::move(path)) {
  rdbuf(&buf_);
  errno = 0;
  if (!buf_.open(path_, mode | std::ios::out)) throw_cannot_write(path_, errno);
}

void OutputFile::close() {
  flush();
  const bool written = good();
  errno = 0;
  const bool closed = buf_.close() != nullptr;  // writes what is still buffered
  if (!written || !closed) throw_cannot_write(path_, buf_.error() ? buf_.error() : errno);
}

void write_file(const std::filesystem::path& path,
                const std::function<void(std::ostream&)>& write) {
  OutputFile out(path);
  write(out);
  out.close();
}

void write_file(const std::filesystem::path& path, std::string_view text) {
  write_file(path, [text](std::ostream& out) { out << text; });
}

}  // namespace nocflow::sim
