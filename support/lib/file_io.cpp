#include "npu/support/file_io.h"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <filesystem>
#include <new>
#include <optional>
#include <random>
#include <utility>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace npu::io {

namespace {

std::string errnoText(int error = errno) {
  return std::strerror(error);
}

// Closes a descriptor on every path out of a scope.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

// The descriptor that /dev/stdout, /dev/stderr, /dev/fd/N and
// /proc/self/fd/N stand for.
std::optional<int> descriptorOf(std::string_view path) {
  if (path == "/dev/stdout")
    return 1;
  if (path == "/dev/stderr")
    return 2;
  for (std::string_view prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    if (!path.starts_with(prefix))
      continue;
    const std::string_view digits = path.substr(prefix.size());
    int fd = -1;
    const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), fd);
    if (error == std::errc() && end == digits.data() + digits.size() && !digits.empty())
      return fd;
  }
  return std::nullopt;
}

} // namespace

std::string byteSize(uint64_t bytes) {
  static constexpr const char *kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  for (int i = 3; i >= 0; --i) {
    const uint64_t unit = uint64_t(1) << (10 * (i + 1));
    if (bytes >= unit && bytes % unit == 0)
      return std::to_string(bytes / unit) + " " + kUnits[i];
  }
  return std::to_string(bytes) + (bytes == 1 ? " byte" : " bytes");
}

std::vector<uint8_t> readFile(const std::string &path, uint64_t maxBytes, std::string_view what) {
  Descriptor file{::open(path.c_str(), O_RDONLY | O_CLOEXEC)};
  if (file.fd < 0)
    throw FileError(path + ": cannot open: " + errnoText());
  struct stat st;
  if (::fstat(file.fd, &st) != 0)
    throw FileError(path + ": cannot read: " + errnoText());
  if (S_ISDIR(st.st_mode))
    throw FileError(path + ": is a directory, not a file");
  const std::string limit = std::string(what) + " (" + byteSize(maxBytes) + ")";
  const bool regular = S_ISREG(st.st_mode);
  if (regular && uint64_t(st.st_size) > maxBytes)
    throw FileError(path + ": " + std::to_string(st.st_size) + " bytes exceed " + limit);
  std::vector<uint8_t> bytes;
  auto readSome = [&](uint8_t *into, size_t size) {
    for (;;) {
      const ssize_t n = ::read(file.fd, into, size);
      if (n >= 0)
        return size_t(n);
      if (errno != EINTR)
        throw FileError(path + ": read error: " + errnoText());
    }
  };
  auto allocate = [&](size_t size) {
    try {
      bytes.resize(size);
    } catch (const std::bad_alloc &) {
      throw FileError(path + ": " + std::to_string(size) + " bytes do not fit in memory");
    }
  };
  // A regular file is read into a buffer of its size; a stream (pipe,
  // device) into a growing one. When the buffer is full, one more byte
  // tells whether the input ends there, so that nothing past the limit
  // is ever allocated.
  allocate(regular ? size_t(st.st_size) : 0);
  size_t used = 0;
  for (;;) {
    if (used == bytes.size()) {
      uint8_t extra;
      if (readSome(&extra, 1) == 0)
        break;
      if (used >= maxBytes)
        throw FileError(path + ": " +
                        (regular ? "grew while being read and exceeds " : "exceeds ") + limit +
                        (regular ? "" : "; does this stream ever end?"));
      allocate(
          size_t(std::min<uint64_t>(maxBytes, std::max<uint64_t>(2 * uint64_t(used), 1 << 16))));
      bytes[used++] = extra;
      continue;
    }
    const size_t n = readSome(bytes.data() + used, bytes.size() - used);
    if (n == 0)
      break;
    used += n;
  }
  bytes.resize(used);
  return bytes;
}

void checkOutputs(const std::vector<NamedPath> &outputs, const std::vector<NamedPath> &inputs) {
  namespace fs = std::filesystem;
  struct Seen {
    const NamedPath *named;
    bool exists;
    struct stat st;
    std::string normalised; // outputs that do not exist yet
  };
  auto examine = [](const NamedPath &named) {
    Seen seen{&named, false, {}, {}};
    seen.exists = ::stat(named.path.c_str(), &seen.st) == 0;
    if (!seen.exists) {
      std::error_code ec;
      seen.normalised = fs::weakly_canonical(fs::absolute(named.path, ec), ec).string();
    }
    return seen;
  };
  auto same = [](const Seen &a, const Seen &b) {
    if (a.exists != b.exists)
      return false;
    if (!a.exists)
      return a.normalised == b.normalised;
    // Devices, FIFOs and terminals are not destroyed by writing to them.
    return S_ISREG(a.st.st_mode) && a.st.st_dev == b.st.st_dev && a.st.st_ino == b.st.st_ino;
  };
  std::vector<Seen> in, out;
  for (const NamedPath &named : inputs)
    in.push_back(examine(named));
  for (const NamedPath &named : outputs) {
    Seen o = examine(named);
    const std::string &path = named.path;
    if (path.empty())
      throw FileError(named.role + ": empty file name");
    if (o.exists && S_ISDIR(o.st.st_mode))
      throw FileError(path + ": " + named.role + " is a directory");
    if (!o.exists && !descriptorOf(path)) {
      const fs::path parent = fs::path(path).parent_path();
      std::error_code ec;
      if (!parent.empty() && !fs::is_directory(parent, ec))
        throw FileError(path + ": " + named.role + " cannot be created: directory '" +
                        parent.string() + "' does not exist");
    }
    for (const Seen &i : in)
      if (i.exists && same(o, i))
        throw FileError(path + ": " + named.role + " is also " + i.named->role +
                        (i.named->path == path ? "" : " (" + i.named->path + ")") +
                        "; refusing to overwrite it");
    for (const Seen &other : out)
      if (same(o, other))
        throw FileError(path + ": " + named.role + " is also " + other.named->role +
                        (other.named->path == path ? "" : " (" + other.named->path + ")"));
    out.push_back(std::move(o));
  }
}

OutputFile::OutputFile(std::string path) : path_(std::move(path)) {
  if (path_.empty())
    throw FileError("empty output file name");
  int fd = -1;
  if (const std::optional<int> descriptor = descriptorOf(path_)) {
    // What the tool printed to that stream goes first.
    if (*descriptor == 1)
      std::fflush(stdout);
    fd = ::fcntl(*descriptor, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
      throw FileError(path_ + ": cannot write: " + errnoText());
  } else {
    struct stat st;
    const bool exists = ::stat(path_.c_str(), &st) == 0;
    if (exists && S_ISDIR(st.st_mode))
      throw FileError(path_ + ": is a directory");
    if (exists && !S_ISREG(st.st_mode)) {
      fd = ::open(path_.c_str(), O_WRONLY | O_CLOEXEC);
      if (fd < 0)
        throw FileError(path_ + ": cannot open: " + errnoText());
    } else {
      if (exists) {
        // Replace the file a symbolic link points to, not the link; and do
        // not let the rename bypass a read-only file's permissions.
        std::error_code ec;
        target_ = std::filesystem::canonical(path_, ec).string();
        if (ec)
          throw FileError(path_ + ": cannot resolve: " + ec.message());
        if (::access(target_.c_str(), W_OK) != 0)
          throw FileError(path_ + ": cannot write: " + errnoText());
      } else {
        target_ = path_;
      }
      const std::filesystem::path target(target_);
      const std::string directory =
          target.has_parent_path() ? target.parent_path().string() + "/" : std::string();
      std::random_device random;
      for (int attempt = 0; fd < 0; ++attempt) {
        char suffix[16];
        std::snprintf(suffix, sizeof suffix, ".%08x.tmp", unsigned(random()));
        temporary_ = directory + "." + target.filename().string() + suffix;
        // O_EXCL: never reuse (or follow a link at) an existing name. The
        // mode is filtered by the umask like any new file's.
        fd = ::open(temporary_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && (errno != EEXIST || attempt == 100)) {
          const int error = errno;
          temporary_.clear();
          throw FileError(path_ + ": cannot create a file in '" +
                          (directory.empty() ? std::string(".") : directory) +
                          "': " + errnoText(error));
        }
      }
      if (exists) {
        // The replacement keeps the file's owner (when allowed: we may be
        // root writing a user's file) and its permissions.
        (void)!::fchown(fd, st.st_uid, st.st_gid);
        (void)::fchmod(fd, st.st_mode & 07777);
      }
    }
  }
  file_ = ::fdopen(fd, "wb");
  if (!file_) {
    const int error = errno;
    ::close(fd);
    discard();
    throw FileError(path_ + ": cannot write: " + errnoText(error));
  }
}

OutputFile::~OutputFile() {
  discard();
}

void OutputFile::discard() {
  if (file_)
    std::fclose(file_);
  file_ = nullptr;
  // Only the temporary file this object created; never the target.
  if (!temporary_.empty())
    ::unlink(temporary_.c_str());
  temporary_.clear();
}

void OutputFile::fail(const std::string &why) {
  const std::string message = path_ + ": " + why + ": " + errnoText();
  discard();
  throw FileError(message);
}

void OutputFile::write(const void *data, size_t size) {
  if (!file_)
    throw FileError(path_ + ": write after the file was closed");
  if (size && std::fwrite(data, 1, size, file_) != size)
    fail("write error");
}

void OutputFile::commit() {
  if (!file_)
    throw FileError(path_ + ": committed twice");
  if (std::fflush(file_) != 0 || std::ferror(file_))
    fail("write error");
  FILE *file = std::exchange(file_, nullptr);
  if (std::fclose(file) != 0)
    fail("write error");
  if (temporary_.empty())
    return;
  if (::rename(temporary_.c_str(), target_.c_str()) != 0)
    fail("cannot replace the file");
  temporary_.clear();
}

void writeFile(const std::string &path, std::string_view contents) {
  OutputFile file(path);
  file.write(contents);
  file.commit();
}

} // namespace npu::io
