// npu-ulp: measures the error of the micro-programs of docs/arith.md in ulp
// against a correctly rounded reference: the function evaluated in double
// precision with the C library, then rounded to binary32 with the spec's
// flush-to-zero (npu::arith::soft::roundToFloat). The double result is
// within a few double ulp of the exact value, so the reference is exact to
// far below 0.001 float ulp away from the zeros of the function.
//
// The error of a result y for the exact value f is |y - f| / ulp(f), where
// ulp(f) = 2^(max(e, -126) - 23) for 2^e <= |f| < 2^(e+1), and 2^-126 below
// the normal range (the gap between 0 and the least normal number, the
// spacing of binary32 with flush-to-zero). A correctly rounded result has an
// error of at most 0.5. NaN, infinity and zero results must match the
// reference exactly (zeros in sign too); mismatches are counted separately.
#include "cli.h"
#include "npu/arith/functions.h"
#include "npu/arith/softfloat.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <numbers>
#include <random>
#include <span>
#include <string>
#include <thread>
#include <vector>

namespace {

using npu::arith::Program;
namespace soft = npu::arith::soft;

// The value a binary32 input denotes to the primitives (denormals are zeros).
double inputValue(uint32_t bits) {
  return static_cast<double>(
      std::bit_cast<float>(soft::isNan(bits) ? bits : soft::canonical(bits)));
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}
constexpr double kGeluK = 0.7978845608028654; // sqrt(2/pi)
double geluArgument(double x) {
  return 2.0 * kGeluK * (x + 0.044715 * x * x * x);
}
// Phi(x), the standard normal distribution function, as erfc so that its
// lower tail keeps its relative accuracy.
double normalCdf(double x) {
  return 0.5 * std::erfc(-x / std::sqrt(2.0));
}

// References longer than an expression, which the .td records' Reference
// fields call. At an infinite x each is the limit: dy or -0 * dy.
double siluBackward(double x, double dy) {
  if (std::isinf(x))
    return x > 0 ? dy : -0.0 * dy;
  double s = sigmoid(x), c = sigmoid(-x);
  // Below x = -745, s underflows in double; the sign is that of 1 + x c.
  return s == 0 ? std::copysign(0.0, dy * (1.0 + x * c)) : dy * (s * (1.0 + x * c));
}
double geluBackward(double x, double dy) {
  if (std::isinf(x))
    return x > 0 ? dy : -0.0 * dy;
  double v = geluArgument(x);
  double s = sigmoid(v), c = sigmoid(-v);
  double dv = 2.0 * kGeluK * (1.0 + 3.0 * 0.044715 * x * x);
  return s == 0 ? std::copysign(0.0, dy * (1.0 + x * c * dv)) : dy * (s + x * s * c * dv);
}
double geluErfBackward(double x, double dy) {
  if (std::isinf(x))
    return x > 0 ? dy : -0.0 * dy;
  double density = std::exp(-0.5 * x * x) / std::sqrt(2.0 * std::numbers::pi);
  double slope = normalCdf(x) + x * density;
  // Below x = -38, both terms underflow in double; the sign is that of 1 - x^2.
  return slope == 0 ? std::copysign(0.0, dy * (1.0 - x * x)) : dy * slope;
}

// max and min of the primitives: NaN if either is NaN, -0 < +0.
double orderedMax(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a > b || (a == b && !std::signbit(a)) ? a : b;
}
double orderedMin(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a < b || (a == b && std::signbit(a)) ? a : b;
}

// Exact values in double precision, from the Reference field of each
// program's record in isa/microcode.td; the arguments beyond a program's
// inputs are ignored. Formulas avoid cancellation where the function is
// tiny (e.g. x * sigmoid(v) rather than 0.5x(1 + tanh(v/2))).
struct Reference {
  const char *name;
  std::function<double(double, double, double, double)> value;
};

const Reference *referenceFor(const std::string &name) {
#define NPU_REFERENCE_ENTRY(program, ...) {#program, __VA_ARGS__},
  static const Reference table[] = {NPU_FOR_EACH_PROGRAM_REFERENCE(NPU_REFERENCE_ENTRY)};
#undef NPU_REFERENCE_ENTRY
  for (const Reference &r : table)
    if (name == r.name)
      return &r;
  return nullptr;
}

// The binary32 result the spec's rounding makes of an exact value.
uint32_t roundReference(double f) {
  if (std::isnan(f))
    return soft::kCanonicalNan;
  if (std::isinf(f))
    return f > 0 ? soft::kPositiveInfinity : (soft::kPositiveInfinity | soft::kSignBit);
  if (f == 0)
    return std::signbit(f) ? soft::kSignBit : 0;
  int e;
  double m = std::frexp(std::fabs(f), &e); // |f| = m * 2^e, m in [0.5, 1)
  auto mantissa = static_cast<uint64_t>(std::ldexp(m, 53));
  return soft::roundToFloat(std::signbit(f), e - 53, mantissa);
}

double ulpError(uint32_t y, double f) {
  const double leastNormal = std::ldexp(1.0, -126);
  double spacing = std::fabs(f) < leastNormal ? leastNormal : std::ldexp(1.0, std::ilogb(f) - 23);
  return std::fabs(static_cast<double>(std::bit_cast<float>(y)) - f) / spacing;
}

constexpr unsigned kMaxInputs = 4;
using Inputs = std::array<uint32_t, kMaxInputs>;

struct Stats {
  uint64_t count = 0;
  uint64_t notCorrectlyRounded = 0;
  uint64_t specialMismatches = 0;
  double maxUlp = 0;
  double maxAbsolute = 0; // |y - f| over the results compared in ulp
  Inputs worstInput{};
  uint32_t worstOutput = 0;
  double worstExact = 0;
  Inputs firstMismatch{};
  uint32_t mismatchOutput = 0;
  uint32_t mismatchExpected = 0;

  void add(const Inputs &in, uint32_t y, double f) {
    ++count;
    uint32_t expected = roundReference(f);
    bool special = soft::isNan(expected) || soft::isInfinity(expected) || soft::isNan(y) ||
                   soft::isInfinity(y) || f == 0;
    if (special) {
      if (y != expected) {
        if (specialMismatches++ == 0) {
          firstMismatch = in;
          mismatchOutput = y;
          mismatchExpected = expected;
        }
      }
      return;
    }
    if (y != expected)
      ++notCorrectlyRounded;
    // A result the spec's flush-to-zero makes zero is exact when it is zero,
    // however far the exact value lies from it.
    double err = (y == expected && soft::isZeroOrDenormal(expected)) ? 0.0 : ulpError(y, f);
    maxAbsolute =
        std::max(maxAbsolute, std::fabs(static_cast<double>(std::bit_cast<float>(y)) - f));
    if (err > maxUlp) {
      maxUlp = err;
      worstInput = in;
      worstOutput = y;
      worstExact = f;
    }
  }

  void merge(const Stats &o) {
    if (o.specialMismatches && !specialMismatches) {
      firstMismatch = o.firstMismatch;
      mismatchOutput = o.mismatchOutput;
      mismatchExpected = o.mismatchExpected;
    }
    count += o.count;
    notCorrectlyRounded += o.notCorrectlyRounded;
    specialMismatches += o.specialMismatches;
    maxAbsolute = std::max(maxAbsolute, o.maxAbsolute);
    if (o.maxUlp > maxUlp) {
      maxUlp = o.maxUlp;
      worstInput = o.worstInput;
      worstOutput = o.worstOutput;
      worstExact = o.worstExact;
    }
  }
};

float asFloat(uint32_t b) {
  return std::bit_cast<float>(b);
}

const std::vector<uint32_t> kSpecials = {0x00000000, 0x80000000, 0x00000001, 0x80000001, 0x007fffff,
                                         0x807fffff, 0x00800000, 0x80800000, 0x3f800000, 0xbf800000,
                                         0x7f7fffff, 0xff7fffff, 0x7f800000, 0xff800000, 0x7fc00000,
                                         0xffc00001, 0x7f800001};

struct Options {
  std::string function;
  uint64_t stride = 1;
  uint64_t randomCount = 0;
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  float secondInput = 1.0f; // dy of the *_bwd programs
  unsigned threads = 1;
  uint64_t seed = 1;
};

// Evaluates blocks of inputs with the fastest implementation and compares.
class Measurement {
public:
  Measurement(const Options &opt, Program program, const Reference &ref, unsigned numInputs)
      : opt_(opt), program_(program), ref_(ref), numInputs_(numInputs) {}

  // Inputs x from a dense sweep of every stride-th bit pattern in [lo, hi],
  // and the special values (zeros, denormals, infinities, NaN, extremes).
  Stats sweep() {
    const uint64_t total = (uint64_t(1) << 32) / opt_.stride;
    constexpr uint64_t kBlock = 1 << 16;
    std::atomic<uint64_t> next{0};
    Stats specials;
    std::vector<float> sx, sp(kSpecials.size(), opt_.secondInput), sy(kSpecials.size());
    for (uint32_t bits : kSpecials) {
      double v = inputValue(bits);
      if ((v >= opt_.lo && v <= opt_.hi) ||
          (std::isnan(v) && opt_.lo == -INFINITY && opt_.hi == INFINITY))
        sx.push_back(asFloat(bits));
    }
    evaluateAndCompare({sx.data(), sp.data(), sp.data(), sp.data()}, sy.data(), sx.size(),
                       specials);
    Stats swept = parallel([&](Stats &stats) {
      std::vector<float> x(kBlock), p(kBlock, opt_.secondInput), y(kBlock);
      for (uint64_t start; (start = next.fetch_add(kBlock)) < total;) {
        size_t n = 0;
        for (uint64_t k = start; k < std::min(total, start + kBlock); ++k) {
          uint32_t bits = static_cast<uint32_t>(k * opt_.stride);
          double v = inputValue(bits);
          if (!(v >= opt_.lo && v <= opt_.hi) && !std::isnan(v))
            continue;
          if (std::isnan(v) && (opt_.lo != -INFINITY || opt_.hi != INFINITY))
            continue;
          x[n++] = asFloat(bits);
        }
        evaluateAndCompare({x.data(), p.data(), p.data(), p.data()}, y.data(), n, stats);
      }
    });
    swept.merge(specials);
    return swept;
  }

  // Operands drawn by `draw`, for programs of two or more inputs.
  Stats random(const std::function<Inputs(std::mt19937_64 &)> &draw) {
    constexpr uint64_t kBlock = 1 << 16;
    std::atomic<uint64_t> next{0};
    std::atomic<uint64_t> seedCounter{opt_.seed};
    return parallel([&](Stats &stats) {
      std::mt19937_64 rng(seedCounter.fetch_add(0x9e3779b97f4a7c15ULL));
      std::array<std::vector<float>, kMaxInputs> in;
      for (std::vector<float> &v : in)
        v.resize(kBlock);
      std::vector<float> y(kBlock);
      for (uint64_t start; (start = next.fetch_add(kBlock)) < opt_.randomCount;) {
        size_t n = std::min(kBlock, opt_.randomCount - start);
        for (size_t i = 0; i < n; ++i) {
          const Inputs drawn = draw(rng);
          for (unsigned k = 0; k < kMaxInputs; ++k)
            in[k][i] = asFloat(drawn[k]);
        }
        evaluateAndCompare({in[0].data(), in[1].data(), in[2].data(), in[3].data()}, y.data(), n,
                           stats);
      }
    });
  }

private:
  Stats parallel(const std::function<void(Stats &)> &work) {
    std::vector<Stats> partial(opt_.threads);
    std::vector<std::thread> workers;
    for (unsigned t = 0; t < opt_.threads; ++t)
      workers.emplace_back([&, t] { work(partial[t]); });
    for (std::thread &w : workers)
      w.join();
    Stats total;
    for (const Stats &s : partial)
      total.merge(s);
    return total;
  }

  void evaluateAndCompare(const std::array<const float *, kMaxInputs> &values, float *y, size_t n,
                          Stats &stats) {
    std::array<npu::arith::Operand, kMaxInputs> in;
    for (unsigned k = 0; k < kMaxInputs; ++k)
      in[k] = {values[k]};
    npu::arith::apply(program_, std::span(in.data(), numInputs_), y, n);
    for (size_t i = 0; i < n; ++i) {
      Inputs bits;
      for (unsigned k = 0; k < kMaxInputs; ++k)
        bits[k] = std::bit_cast<uint32_t>(values[k][i]);
      double f = ref_.value(inputValue(bits[0]), inputValue(bits[1]), inputValue(bits[2]),
                            inputValue(bits[3]));
      stats.add(bits, std::bit_cast<uint32_t>(y[i]), f);
    }
  }

  const Options &opt_;
  Program program_;
  const Reference &ref_;
  unsigned numInputs_;
};

// Random operands for the two-input programs: uniform bit patterns half of
// the time, values of moderate magnitude the other half.
Inputs drawDivision(std::mt19937_64 &rng) {
  uint64_t r = rng();
  auto a = static_cast<uint32_t>(r), b = static_cast<uint32_t>(r >> 32);
  if (rng() & 1) {
    a = (a & 0x807fffffu) | ((100 + (a >> 23) % 56) << 23);
    b = (b & 0x807fffffu) | ((100 + (b >> 23) % 56) << 23);
  }
  return {a, b, 0};
}

// pow: x in every binade, p integral, half-integral or arbitrary with
// |x^p| mostly inside the float range.
Inputs drawPower(std::mt19937_64 &rng) {
  uint64_t r = rng();
  auto x = static_cast<uint32_t>(r);
  float p;
  switch ((r >> 32) % 4) {
  case 0: p = static_cast<float>(static_cast<int>((r >> 40) % 61) - 30); break;
  case 1: p = static_cast<float>(static_cast<int>((r >> 40) % 41) - 20) + 0.5f; break;
  case 2: {
    // |p| in [2^-20, 2^8] with random sign and mantissa
    auto bits = static_cast<uint32_t>(((r >> 40) & 0x7fffff) | ((107 + (r >> 20) % 29) << 23));
    p = asFloat(bits | ((r >> 63) ? 0x80000000u : 0));
    break;
  }
  default: {
    // x near 1, large |p|: the hard cases for the logarithm's accuracy
    x = 0x3f800000u + static_cast<uint32_t>((r >> 40) % 0x20000) - 0x10000;
    p = static_cast<float>(static_cast<int64_t>((r >> 17) % 2000000) - 1000000) * 0.25f;
  }
  }
  return {x, std::bit_cast<uint32_t>(p), 0, 0};
}

// clamp: uniform bit patterns (NaNs, infinities, zeros of both signs, lo > hi
// half of the time) or x around bounds drawn from one binade, often equal
// to one of them.
Inputs drawClamp(std::mt19937_64 &rng) {
  uint64_t r = rng();
  Inputs in = {static_cast<uint32_t>(r), static_cast<uint32_t>(r >> 32),
               static_cast<uint32_t>(rng()), 0};
  if (rng() & 1)
    for (uint32_t &v : std::span(in.data(), 3))
      v = (v & 0x80ffffffu) | 0x3f000000u; // |v| in [0.5, 2)
  switch (rng() % 4) {
  case 0: in[0] = in[1]; break;
  case 1: in[0] = in[2]; break;
  case 2: in[0] = in[1] ^ 0x80000000u; break; // -0 against +0 when lo is a zero
  default: break;
  }
  return in;
}

// mask_pass (m, dy): m a compare's all-ones mask, the canonical NaN, a zero
// or any bit pattern; dy any bit pattern.
Inputs drawMaskPass(std::mt19937_64 &rng) {
  static const uint32_t kMasks[] = {0xffffffffu, 0x7fc00000u, 0, 0x80000000u};
  const uint64_t r = rng();
  const uint32_t m = r % 2 ? kMasks[(r >> 1) % 4] : static_cast<uint32_t>(r >> 32);
  return {m, static_cast<uint32_t>(rng()), 0, 0};
}

// clamp_bwd (x, dy, lo, hi): x, lo and hi as clamp's, dy any bit pattern.
Inputs drawClampBackward(std::mt19937_64 &rng) {
  const Inputs clamp = drawClamp(rng);
  return {clamp[0], static_cast<uint32_t>(rng()), clamp[1], clamp[2]};
}

void printStats(const Options &opt, const char *what, const Stats &s, unsigned numInputs) {
  std::printf("%-9s %-34s %12llu inputs  max %.3f ulp", opt.function.c_str(), what,
              static_cast<unsigned long long>(s.count), s.maxUlp);
  if (s.maxUlp > 0) {
    std::printf(" at x=%a", asFloat(s.worstInput[0]));
    if (numInputs > 1)
      std::printf(" p=%a", asFloat(s.worstInput[1]));
    if (numInputs > 2)
      std::printf(" q=%a", asFloat(s.worstInput[2]));
    if (numInputs > 3)
      std::printf(" r=%a", asFloat(s.worstInput[3]));
    std::printf(" (got %a, exact %.9g)", asFloat(s.worstOutput), s.worstExact);
  }
  std::printf("; max absolute error %.3g", s.maxAbsolute);
  std::printf("; %.4f%% not correctly rounded",
              s.count ? 100.0 * s.notCorrectlyRounded / s.count : 0);
  std::printf("; %llu special mismatches", static_cast<unsigned long long>(s.specialMismatches));
  if (s.specialMismatches)
    std::printf(" (first: x=%08x p=%08x q=%08x r=%08x got %08x want %08x)", s.firstMismatch[0],
                s.firstMismatch[1], s.firstMismatch[2], s.firstMismatch[3], s.mismatchOutput,
                s.mismatchExpected);
  std::printf("\n");
}

} // namespace

int main(int argc, char **argv) {
  namespace po = npu::cli::po;
  Options opt;
  std::string range;
  po::options_description options("Options");
  bool list = false;
  options.add_options()("function,f", po::value(&opt.function),
                        "micro-program to measure (exp, log, div, pow, silu_bwd, ...)")(
      "list", po::bool_switch(&list),
      "print every micro-program as NAME INPUTS STEPS, one a line, and exit")(
      "stride", po::value(&opt.stride)->default_value(1),
      "one-input programs: test every stride-th bit pattern (1 = all 2^32)")(
      "range", po::value(&range), "one-input programs: only inputs x with LO <= x <= HI, as LO:HI")(
      "dy", po::value(&opt.secondInput)->default_value(1.0f), "dy of silu_bwd and gelu_bwd")(
      "random", po::value(&opt.randomCount)->default_value(100000000),
      "div, pow, clamp, mask_pass and clamp_bwd: number of random operand draws")(
      "seed", po::value(&opt.seed)->default_value(1), "random seed")(
      "threads,j",
      po::value(&opt.threads)->default_value(std::max(1u, std::thread::hardware_concurrency())),
      "worker threads");
  po::positional_options_description positional;
  po::variables_map vm;
  const npu::cli::Tool tool{"npu-ulp", "--function NAME [options] | --list",
                            "Measures a micro-program's error in ulp against a correctly rounded "
                            "reference (double-precision libm, rounded with flush-to-zero)."};
  if (auto code = npu::cli::parse(tool, argc, argv, options, positional, vm))
    return *code;
  if (list) {
    for (const npu::arith::microcode::ProgramInfo &p : npu::arith::microcode::kPrograms)
      std::printf("%s %u %u\n", p.name, p.numInputs, p.numSteps);
    return npu::cli::kExitOk;
  }
  if (opt.function.empty()) {
    std::fprintf(stderr, "npu-ulp: error: --function is required (or --list)\n");
    return npu::cli::kExitUsage;
  }
  if (!range.empty()) {
    auto colon = range.find(':');
    try {
      if (colon == std::string::npos)
        throw std::invalid_argument(range);
      opt.lo = std::stod(range.substr(0, colon));
      opt.hi = std::stod(range.substr(colon + 1));
    } catch (const std::exception &) {
      std::fprintf(stderr, "npu-ulp: error: --range must be LO:HI, got '%s'\n", range.c_str());
      return npu::cli::kExitUsage;
    }
  }
  if (opt.stride == 0 || opt.threads == 0) {
    std::fprintf(stderr, "npu-ulp: error: --stride and --threads must be positive\n");
    return npu::cli::kExitUsage;
  }
  const Reference *ref = referenceFor(opt.function);
  std::optional<Program> program;
  for (unsigned i = 0; i < npu::arith::microcode::kNumPrograms; ++i)
    if (opt.function == npu::arith::microcode::kPrograms[i].name)
      program = static_cast<Program>(i);
  if (!ref || !program) {
    std::fprintf(stderr, "npu-ulp: error: unknown function '%s'\n", opt.function.c_str());
    return npu::cli::kExitUsage;
  }
  const unsigned numInputs =
      npu::arith::microcode::kPrograms[static_cast<size_t>(*program)].numInputs;
  Measurement m(opt, *program, *ref, numInputs);
  std::printf("implementation: %s\n",
              npu::arith::implementationName(npu::arith::fastestImplementation()));
  static const std::map<std::string, Inputs (*)(std::mt19937_64 &)> kDraws = {
      {"div", drawDivision},
      {"pow", drawPower},
      {"clamp", drawClamp},
      {"mask_pass", drawMaskPass},
      {"clamp_bwd", drawClampBackward}};
  if (auto draw = kDraws.find(opt.function); draw != kDraws.end()) {
    Stats s = m.random(draw->second);
    static const char *const kTupleNames[] = {"", "", "random pairs", "random triples",
                                              "random quadruples"};
    printStats(opt, kTupleNames[numInputs], s, numInputs);
    return s.specialMismatches ? npu::cli::kExitFailure : npu::cli::kExitOk;
  }
  Stats s = m.sweep();
  std::string what =
      opt.stride == 1 ? "all inputs" : "every " + std::to_string(opt.stride) + "th input";
  if (!range.empty())
    what += " in [" + range + "]";
  printStats(opt, what.c_str(), s, numInputs);
  return s.specialMismatches ? npu::cli::kExitFailure : npu::cli::kExitOk;
}
