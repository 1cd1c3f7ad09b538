// Reading assembly source: the file's bytes, whether they are source at all,
// and where each line ends.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace npu::as {

// The whole of the source file, mapped read-only (no copy and no page
// faults on a private buffer for a large input), or read when it cannot be
// mapped (a pipe, a device).
class FileContents {
public:
  FileContents() = default;
  FileContents(const FileContents &) = delete;
  FileContents &operator=(const FileContents &) = delete;
  ~FileContents();
  // Loads a file of at most maxBytes; throws io::FileError naming the path
  // and the reason otherwise.
  void load(const std::string &path, uint64_t maxBytes);
  std::string_view view() const;

private:
  void *map_ = nullptr;
  size_t size_ = 0;
  std::vector<uint8_t> read_;
};

// Why a file's contents are not assembly source (a container, a binary
// file), or nullptr; `at` is then the byte offset of the evidence.
const char *notSource(std::string_view text, size_t &at);

// A line ends at "\n", "\r\n" or a lone "\r". Returns the length of the
// line at the start of `text` and sets `next` to where the following one
// starts (text.size() at the end).
size_t lineLength(std::string_view text, bool carriageReturns, size_t &next);

} // namespace npu::as
