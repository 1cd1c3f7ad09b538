#include "source_file.h"

#include "npu/bin/object.h"
#include "npu/support/file_io.h"

#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npu::as {

FileContents::~FileContents() {
  if (map_)
    munmap(map_, size_);
}

void FileContents::load(const std::string &path, uint64_t maxBytes) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    throw io::FileError(path + ": cannot open: " + std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
      uint64_t(st.st_size) <= maxBytes) {
    void *p = mmap(nullptr, size_t(st.st_size), PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
    if (p != MAP_FAILED) {
      map_ = p;
      size_ = size_t(st.st_size);
      close(fd);
      return;
    }
  }
  close(fd);
  read_ = io::readFile(path, maxBytes, "the assembler's memory limit");
}

std::string_view FileContents::view() const {
  return map_ ? std::string_view(static_cast<const char *>(map_), size_)
              : std::string_view(reinterpret_cast<const char *>(read_.data()), read_.size());
}

const char *notSource(std::string_view text, size_t &at) {
  at = 0;
  if (bin::hasMagic({reinterpret_cast<const uint8_t *>(text.data()), text.size()}))
    return "an .npubin container, not assembly source (npu-objdump disassembles it)";
  if (const void *nul = std::memchr(text.data(), '\0', text.size())) {
    at = size_t(static_cast<const char *>(nul) - text.data());
    return "a binary file, not assembly source (it has a NUL byte)";
  }
  return nullptr;
}

size_t lineLength(std::string_view text, bool carriageReturns, size_t &next) {
  const char *begin = text.data();
  const char *end = begin;
  if (!carriageReturns) {
    end = static_cast<const char *>(std::memchr(begin, '\n', text.size()));
    if (!end) {
      next = text.size();
      return text.size();
    }
    next = size_t(end - begin) + 1;
    return size_t(end - begin);
  }
  const char *stop = begin + text.size();
  while (end < stop && *end != '\n' && *end != '\r')
    ++end;
  next = size_t(end - begin);
  if (end < stop)
    next += *end == '\r' && end + 1 < stop && end[1] == '\n' ? 2 : 1;
  return size_t(end - begin);
}

} // namespace npu::as
