#include "npu_waveform.h"

#include "Vnpu_top.h"

#include <fstapi.h>
#include <verilated_fst_c.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <system_error>

namespace npu::rtl {

namespace {

// A directory only this process writes, for the FST writer, which unlinks
// and recreates the path it is given and "<path>.hier" beside it.
std::string makePrivateDirectory() {
  std::error_code error;
  const std::filesystem::path base = std::filesystem::temp_directory_path(error);
  if (error)
    throw std::runtime_error("no temporary directory for the waveform: " + error.message());
  std::string pattern = (base / "npu-waveform-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw std::runtime_error("cannot create a temporary directory for the waveform in '" +
                             base.string() + "': " + std::strerror(errno));
  return pattern;
}

bool copyFile(const std::string &from, std::FILE *out) {
  std::FILE *in = std::fopen(from.c_str(), "rb");
  if (!in)
    return false;
  char buffer[1 << 16];
  bool ok = true;
  size_t n;
  while (ok && (n = std::fread(buffer, 1, sizeof buffer, in)) > 0)
    ok = std::fwrite(buffer, 1, n, out) == n;
  ok = ok && !std::ferror(in);
  std::fclose(in);
  return ok;
}

} // namespace

bool writeFstAsVcd(const std::string &fstPath, std::FILE *out) {
  void *reader = fstReaderOpen(fstPath.c_str());
  if (!reader)
    return false;
  const bool hierarchy = fstReaderProcessHier(reader, out) != 0;
  fstReaderSetFacProcessMaskAll(reader);
  const bool values = hierarchy && fstReaderIterBlocks(reader, nullptr, nullptr, out) != 0;
  fstReaderClose(reader);
  return values && !std::ferror(out);
}

Waveform::Waveform(Vnpu_top &top, const std::string &path, WaveformFormat format)
    : path_(path), format_(format) {
  out_ = std::fopen(path.c_str(), "wb");
  if (!out_)
    throw std::runtime_error("cannot write the waveform to '" + path +
                             "': " + std::strerror(errno));
  try {
    directory_ = makePrivateDirectory();
    fstPath_ = directory_ + "/npu_top.fst";
    tracer_ = std::make_unique<VerilatedFstC>();
    top.trace(tracer_.get(), 99);
    tracer_->open(fstPath_.c_str());
    if (!tracer_->isOpen())
      throw std::runtime_error("cannot write the waveform's temporary FST '" + fstPath_ + "'");
  } catch (...) {
    std::fclose(out_);
    removeTemporaries();
    throw;
  }
}

Waveform::~Waveform() {
  tracer_->close();
  const bool written =
      format_ == WaveformFormat::Fst ? copyFile(fstPath_, out_) : writeFstAsVcd(fstPath_, out_);
  const bool closed = std::fclose(out_) == 0;
  if (!written || !closed)
    std::fprintf(stderr, "npu: writing the waveform '%s' failed\n", path_.c_str());
  removeTemporaries();
}

void Waveform::dump(uint64_t time) {
  tracer_->dump(time);
}

void Waveform::removeTemporaries() {
  if (directory_.empty())
    return;
  std::error_code ignored; // only our own files, and nothing to do if they are gone
  std::filesystem::remove(fstPath_, ignored);
  std::filesystem::remove(fstPath_ + ".hier", ignored);
  std::filesystem::remove(directory_, ignored);
}

} // namespace npu::rtl
