// The waveform of the Verilated npu_top. The model is Verilated with
// --trace-fst only (Verilator gives a model one trace format), so Verilator
// always writes FST, into a private temporary directory; closing the
// waveform copies that FST to the output, or converts it to VCD there with
// GTKWave's FST reader (fstapi, compiled into npu_verilated). The output is
// opened for writing like any other output file, never unlinked or renamed
// over: the FST writer unlinks and recreates the path it is given, which
// must not happen to a path the user named (/dev/null, as root).
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

class Vnpu_top;
class VerilatedFstC;

namespace npu::rtl {

enum class WaveformFormat { Vcd, Fst };

class Waveform {
public:
  // Opens `path` for writing and starts tracing `top`; std::runtime_error
  // naming the path when it cannot be written.
  Waveform(Vnpu_top &top, const std::string &path, WaveformFormat format);
  // Writes the output and removes the temporary FST. A destructor cannot
  // throw: a failure (a full disk) is reported on stderr.
  ~Waveform();
  Waveform(const Waveform &) = delete;
  Waveform &operator=(const Waveform &) = delete;

  // The signals' values now, at `time` (the harness's half cycles).
  void dump(uint64_t time);

private:
  void removeTemporaries();

  std::string path_;
  WaveformFormat format_;
  std::FILE *out_ = nullptr;
  std::string directory_; // private temporary directory holding ...
  std::string fstPath_;   // ... the FST Verilator writes
  std::unique_ptr<VerilatedFstC> tracer_;
};

// Writes the FST file at `fstPath` to `out` as VCD (GTKWave's fst2vcd);
// false when the FST cannot be read or `out` written.
bool writeFstAsVcd(const std::string &fstPath, std::FILE *out);

} // namespace npu::rtl
