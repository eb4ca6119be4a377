// SPDX-License-Identifier: MIT
#pragma once
// Output files that report failure. A command that says it wrote a file must have written it:
// a file that cannot be opened (a folder of that name, no permission) or whose bytes did not
// all reach it (disk full) is an InputError "PATH: cannot write: REASON", which the command
// line turns into exit 2. REASON is left off when the system gave none.
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace nocflow::sim {

/// Creates `dir` and its parents; InputError "DIR: cannot create WHAT: REASON" if it cannot.
void create_folder(const std::filesystem::path& dir, const std::string& what = "folder");
/// The same InputError, without creating anything, where it is plain already that `dir` cannot
/// be made (it or a parent is a file, or the nearest existing folder is not writable): a run
/// checks its --out before minutes of work.
void check_can_create_folder(const std::filesystem::path& dir, const std::string& what = "folder");

/// `error`: errno right after the failed call (0: none known). A folder in the file's place,
/// the usual cause, is named in plain words rather than the C library's.
[[noreturn]] void throw_cannot_write(const std::filesystem::path& path, int error);
/// Before a long run: throws as writing would (throw_cannot_write) when one of `names` in `dir`
/// is a folder, so that the run does not end on it. Empty names are skipped.
void check_not_folders(const std::filesystem::path& dir, const std::vector<std::string>& names);

/// A filebuf that keeps the errno of its first failed write: by the time a stream's badbit is
/// looked at, other calls may have overwritten errno.
class ErrnoFilebuf : public std::filebuf {
 public:
  int error() const { return error_; }

 protected:
  int_type overflow(int_type c) override;
  std::streamsize xsputn(const char_type* s, std::streamsize n) override;
  int sync() override;

 private:
  void keep(int error) {
    if (error_ == 0) error_ = error;
  }
  int error_ = 0;
};

/// An output stream on a file that throws when the file cannot be opened, and from close()
/// when anything written was lost. Call close() once the file is complete: destroyed without it
/// (an exception on the way out) it closes unchecked, as an ofstream does.
class OutputFile : public std::ostream {
 public:
  explicit OutputFile(std::filesystem::path path, std::ios::openmode mode = std::ios::out);
  void close();
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
  ErrnoFilebuf buf_;
};

/// A whole file at once: opened, `write` called on it, closed; every step checked as above.
void write_file(const std::filesystem::path& path, const std::function<void(std::ostream&)>& write);
void write_file(const std::filesystem::path& path, std::string_view text);

}  // namespace nocflow::sim
