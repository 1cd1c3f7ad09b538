// libnpu_support: reading and writing files so that hostile or unlucky
// inputs cannot exhaust memory and a failed write never destroys anything.
// Every tool and library that reads or writes a user-named file goes
// through here (docs/tools.md, "Files").
#pragma once

#include <cstdint>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace npu::io {

// A file that cannot be read or written; what() names the path and why.
class FileError : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

// The whole contents of a file. A regular file larger than maxBytes, a
// directory, or a stream (pipe, device) that yields more than maxBytes is
// a FileError: nothing is read past the limit, so /dev/zero is refused
// instead of exhausting memory. `what` names the limit in the message
// (e.g. "the 1 GiB limit of an .npubin container").
std::vector<uint8_t> readFile(const std::string &path, uint64_t maxBytes, std::string_view what);

// "4 KiB", "1 GiB", "12345 bytes": a limit as people read it.
std::string byteSize(uint64_t bytes);

// A file a tool names on its command line, and its role for messages, e.g.
// {"k.npubin", "the output (-o)"} or {"inc/defs.inc", "an included file"}.
struct NamedPath {
  std::string path;
  std::string role;
};

// Checks, before any work is done, that each output can be written where it
// is named: it is not a directory, its directory exists, it is not one of
// the inputs and no two outputs are the same file. Files are compared by
// identity (device and inode: hard and symbolic links, "./x" and "x",
// /dev/stdout redirected to a file), outputs that do not exist yet by their
// normalised paths; devices such as /dev/null may be named several times.
// Throws FileError, e.g. "k.npubin: the output (-o) is also the input;
// refusing to overwrite it".
void checkOutputs(const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs);

// An output file that replaces its target only when it was written
// completely. A regular (or not yet existing) target is written through a
// temporary file in the same directory, renamed over the target by
// commit(); if anything fails before that, only the temporary file is
// removed and the target is untouched. A target that exists and is not a
// regular file (a device such as /dev/null or /dev/full, a FIFO) is
// written in place and never removed; a directory is an error.
// /dev/stdout, /dev/stderr and /dev/fd/N write to that open descriptor, at
// its current position (after what the tool printed, appending when the
// shell opened it with >>). Every write, flush and close is checked: errors
// are FileErrors naming the target.
class OutputFile {
public:
  explicit OutputFile(std::string path);
  OutputFile(const OutputFile &) = delete;
  OutputFile &operator=(const OutputFile &) = delete;
  ~OutputFile(); // without commit(): discards the temporary file

  void write(const void *data, size_t size);
  void write(std::string_view text) { write(text.data(), text.size()); }
  // Flushes, closes and moves the file into place.
  void commit();
  const std::string &path() const { return path_; }

private:
  [[noreturn]] void fail(const std::string &why);
  void discard();

  std::string path_;      // the target as named by the user
  std::string temporary_; // empty when writing in place
  std::string target_;    // what the temporary file is renamed to
  FILE *file_ = nullptr;
};

// Writes a whole file with OutputFile.
void writeFile(const std::string &path, std::string_view contents);

} // namespace npu::io
