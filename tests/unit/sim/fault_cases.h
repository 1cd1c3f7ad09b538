// One packet per fault class, with the one line every backend must print for
// it. The ISS's tests (iss_faults_test) and the RTL's (rtl_fault_text_test)
// run the same list, so that the two describe each fault identically.
#pragma once

#include "npu/isa/isa.h"
#include "npu/mem/address_map.h"
#include "npu/mem/fault.h"

#include <cctype>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

namespace npu::test {

// The default map plus a read-only region and one that ends at 2^64 (at
// most 8 regions: the RTL's region table).
inline mem::AddressMap faultCaseMap() {
  mem::AddressMap map = mem::AddressMap::defaults();
  map.regions.push_back({.name = "rom", .base = 0x5000'0000, .size = 4096, .writable = false});
  map.regions.push_back({.name = "top", .base = 0xffff'ffff'ffff'f000, .size = 4096});
  return map;
}

struct FaultCase {
  const char *name;
  isa::Packet packet;
  mem::FaultCode code;
  std::string text; // as packet 2
  // Memory to load before the run: (address, bytes).
  std::vector<std::pair<uint64_t, std::vector<uint8_t>>> data = {};
};

// GoogleTest names a parameter by this.
inline void PrintTo(const FaultCase &c, std::ostream *os) {
  *os << c.name;
}

// The test name of a parameterised case (GoogleTest's TestParamInfo): the
// case's name with every character other than a letter or digit as '_'.
struct FaultCaseName {
  template <class ParamInfo> std::string operator()(const ParamInfo &info) const {
    std::string name;
    for (char ch : std::string(info.param.name))
      name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
    return name;
  }
};

template <class T> std::vector<uint8_t> bytesOf(const std::vector<T> &values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(T));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return bytes;
}

inline std::vector<FaultCase> faultCases() {
  using isa::packetOf;
  using mem::FaultCode;
  std::vector<FaultCase> cases;
  const std::string activations = "(region 'activations' 0x10000000-0x1fffffff)";

  isa::inst::Copy copy;
  copy.dst = 0x1000'1000;
  copy.src = 0x7fff'0000'0000;
  copy.bytes = 16;
  cases.push_back(
      {"unmapped", packetOf(copy), FaultCode::Unmapped,
       "COPY src: unmapped read of 16 bytes at 0x7fff00000000 (no region) at packet 2"});

  copy.src = 0x0fff'fff0;
  copy.bytes = 32;
  cases.push_back({"crossing into the next region", packetOf(copy), FaultCode::OutOfRegion,
                   "COPY src: out-of-region read of 32 bytes at 0x0ffffff0 (region 'weights' "
                   "0x0-0xfffffff) at packet 2: runs 16 bytes past its end"});

  copy.src = 0xffff'ffff'ffff'fff0;
  cases.push_back({"wrapping past 2^64", packetOf(copy), FaultCode::OutOfRegion,
                   "COPY src: out-of-region read of 32 bytes at 0xfffffffffffffff0 (region 'top' "
                   "0xfffffffffffff000-0xffffffffffffffff) at packet 2: runs 16 bytes past its "
                   "end"});

  isa::inst::Fill fill;
  fill.dst = 0x3000'0000;
  fill.count = 4;
  cases.push_back({"the CSR window", packetOf(fill), FaultCode::Permission,
                   "FILL dst: forbidden write of 16 bytes at 0x30000000 (region 'csr' "
                   "0x30000000-0x30000fff, the CSR window) at packet 2"});

  fill.dst = 0x5000'0100;
  cases.push_back({"a read-only region", packetOf(fill), FaultCode::Permission,
                   "FILL dst: forbidden write of 16 bytes at 0x50000100 (region 'rom' "
                   "0x50000000-0x50000fff, read-only) at packet 2"});

  copy.dst = 0x2000'0040;
  copy.src = 0x1000'0000;
  copy.bytes = 64;
  cases.push_back({"a copy into the command ring", packetOf(copy), FaultCode::Permission,
                   "COPY dst: forbidden write of 64 bytes at 0x20000040 (region 'ring' "
                   "0x20000000-0x200fffff, the command ring) at packet 2"});

  copy.dst = 0x1000'0000;
  copy.src = 0x2000'0000;
  cases.push_back({"a copy from the command ring", packetOf(copy), FaultCode::Permission,
                   "COPY src: forbidden read of 64 bytes at 0x20000000 (region 'ring' "
                   "0x20000000-0x200fffff, the command ring) at packet 2"});

  isa::inst::Silu silu;
  silu.dst = 0x1000'0000;
  silu.src = 0x0;
  silu.n = 0xffff'ffff;
  cases.push_back({"a huge element count", packetOf(silu), FaultCode::OutOfRegion,
                   "SILU dst: out-of-region write of 17179869180 bytes at 0x10000000 " +
                       activations + " at packet 2: runs 16911433724 bytes past its end"});

  isa::inst::Rmsnorm norm;
  norm.dst = 0x1000'0000;
  norm.src = 0x1000'1000;
  norm.weight = 0x6000'0000; // unmapped, but not read without use_weight
  norm.rstd = 0x0fff'fffc;
  norm.rows = 2;
  norm.cols = 4;
  norm.write_rstd = true;
  cases.push_back({"a conditional operand", packetOf(norm), FaultCode::OutOfRegion,
                   "RMSNORM rstd: out-of-region write of 8 bytes at 0x0ffffffc (region 'weights' "
                   "0x0-0xfffffff) at packet 2: runs 4 bytes past its end"});

  isa::Instruction exp = isa::makeInstruction(isa::Opcode::EXP);
  exp.operands[0] = 0x1000'0002;
  exp.operands[1] = 0x1000'1000;
  exp.operands[2] = 4;
  isa::Packet misaligned;
  isa::encode(exp, misaligned);
  cases.push_back({"misaligned", misaligned, FaultCode::Misaligned,
                   "EXP dst: misaligned address 0x10000002 " + activations +
                       " at packet 2: not aligned to 4 bytes"});

  isa::inst::Exp zero;
  zero.dst = 0x1000'0000;
  zero.src = 0x1000'1000;
  zero.n = 0;
  cases.push_back({"a count of 0", packetOf(zero), FaultCode::InvalidOperand,
                   "EXP n: invalid operand at packet 2: 0 is outside [1, 4294967295]"});

  isa::inst::Matmul mm;
  mm.c = 0x1000'0000;
  mm.a = 0x1001'0000;
  mm.b = 0x1002'0000;
  mm.m = mm.k = mm.n = 8;
  isa::Packet badEnum = packetOf(mm);
  badEnum[4] |= 9; // dtype 9 is not a DType
  cases.push_back({"a bad enumeration value", badEnum, FaultCode::InvalidOperand,
                   "MATMUL dtype: invalid operand at packet 2: 9 is not a valid DType"});
  // A type the instruction does not accept: the accepted list comes from the .td.
  const isa::InstrInfo &matmul = isa::info(isa::Opcode::MATMUL);
  const isa::OperandInfo &dtype = matmul.operands[matmul.operandIndex("dtype")];
  uint32_t refused = 0;
  while (dtype.accepts(refused))
    ++refused;
  isa::Packet unaccepted = packetOf(mm);
  unaccepted[4] |= static_cast<uint8_t>(refused);
  cases.push_back({"a type the instruction does not accept", unaccepted, FaultCode::InvalidOperand,
                   "MATMUL dtype: invalid operand at packet 2: " +
                       std::string(dtype.enumInfo->findValue(refused)->name) +
                       " is not accepted (only " + isa::acceptedNames(dtype) + ")"});

  mm.lda = 4;
  cases.push_back({"a pitch below the row", packetOf(mm), FaultCode::InvalidOperand,
                   "MATMUL lda: invalid operand at packet 2: lda = 4 is less than the stored row "
                   "length 8"});

  isa::inst::Add add;
  add.dst = 0x1000'0000;
  add.a = 0x1000'1000;
  add.b = 0x1000'2000;
  add.rows = add.cols = 0xffff'ffff;
  cases.push_back({"an extent beyond 64 bits", packetOf(add), FaultCode::InvalidOperand,
                   "ADD dst: invalid operand at packet 2: the range at 0x10000000 does not fit in "
                   "64 bits"});

  isa::inst::CopyStrided strided;
  strided.dst = 0x1000'0000;
  strided.src = 0x10;
  strided.size0 = strided.size1 = strided.size2 = 1;
  strided.size3 = 8;
  strided.stride3 = -4;
  cases.push_back({"a strided view reaching below 0", packetOf(strided), FaultCode::InvalidOperand,
                   "COPY_STRIDED src: invalid operand at packet 2: the range at 0x10 does not fit "
                   "in 64 bits"});

  // Positive strides: the view's far end, a word past its region, decides.
  isa::inst::CopyStrided pastEnd;
  pastEnd.dst = 0x1000'0000;
  pastEnd.src = 0x5000'0004;
  pastEnd.size0 = pastEnd.size1 = 1;
  pastEnd.size2 = 2;
  pastEnd.stride2 = 512;
  pastEnd.size3 = 512;
  pastEnd.stride3 = 1;
  cases.push_back({"a strided view a word past its region", packetOf(pastEnd),
                   FaultCode::OutOfRegion,
                   "COPY_STRIDED src: out-of-region read of 4096 bytes at 0x50000004 (region 'rom' "
                   "0x50000000-0x50000fff, read-only) at packet 2: runs 4 bytes past its end"});

  isa::Packet unknown{};
  unknown[0] = 0xee;
  cases.push_back({"an unknown opcode", unknown, FaultCode::UnknownOpcode,
                   "unknown opcode at packet 2: 0x000000ee"});

  isa::Packet reserved = packetOf(isa::inst::Nop{});
  reserved[20] = 1; // a byte of src0, which NOP does not use
  cases.push_back({"a reserved bit", reserved, FaultCode::ReservedBits,
                   "NOP: reserved bits set at packet 2: reserved bit 32 of field 'src0' (packet "
                   "bit 160) is set"});

  copy.dst = 0x1000'0010;
  copy.src = 0x1000'0000;
  copy.bytes = 64;
  cases.push_back(
      {"overlapping operands", packetOf(copy), FaultCode::Overlap,
       "COPY dst: overlap of 48 bytes with src at 0x10000010 " + activations + " at packet 2"});

  isa::inst::Exp shifted;
  shifted.src = 0x1000'0000;
  shifted.dst = 0x1000'0004;
  shifted.n = 16;
  cases.push_back({"an inexact in-place alias", packetOf(shifted), FaultCode::Overlap,
                   "EXP dst: overlap of 60 bytes with src at 0x10000004 " + activations +
                       " at packet 2: only an exact in-place alias is allowed"});

  isa::inst::Bmm bmm;
  bmm.c = 0x1000'0000;
  bmm.a = 0x1001'0000;
  bmm.b = 0x1002'0000;
  bmm.m = bmm.k = bmm.n = 4;
  bmm.batch = 2;
  bmm.stride_c = 8;
  cases.push_back({"overlapping batch elements", packetOf(bmm), FaultCode::Overlap,
                   "BMM c: overlap of 32 bytes with c at 0x10000020 " + activations +
                       " at packet 2: consecutive batch elements overlap"});

  isa::inst::Embedding gather;
  gather.indices = 0x1000'0000;
  gather.table = 0x1001'0000;
  gather.dst = 0x1002'0000;
  gather.count = 3;
  gather.dim = 4;
  gather.rows = 8;
  cases.push_back({"an index out of range",
                   packetOf(gather),
                   FaultCode::IndexOutOfRange,
                   "EMBEDDING indices: index out of range at 0x10000008 " + activations +
                       " at packet 2: index 9 at position 2 is outside [0, 8)",
                   {{0x1000'0000, bytesOf<int32_t>({0, 3, 9})}}});

  // Under wrap the range is [-n, n): -n is row 0, one below it faults.
  isa::inst::Gather select;
  select.index = 0x1000'0000;
  select.src = 0x1001'0000;
  select.dst = 0x1002'0000;
  select.outer = 2;
  select.n = 4;
  select.count = 3;
  select.inner = 5;
  select.mode = isa::GatherMode::shared;
  select.wrap = true;
  select.dtype = isa::DType::bf16;
  cases.push_back({"a gather index below -n",
                   packetOf(select),
                   FaultCode::IndexOutOfRange,
                   "GATHER index: index out of range at 0x10000008 " + activations +
                       " at packet 2: index -5 at position 2 is outside [-4, 4)",
                   {{0x1000'0000, bytesOf<int32_t>({-4, 3, -5})}}});

  isa::inst::EmbeddingBwd scatter;
  scatter.indices = 0x1000'0000;
  scatter.dy = 0x1001'0000;
  scatter.dtable = 0x1002'0000;
  scatter.count = 3;
  scatter.dim = 4;
  scatter.rows = 11;
  scatter.itype = isa::IndexType::i64;
  cases.push_back({"a negative index",
                   packetOf(scatter),
                   FaultCode::IndexOutOfRange,
                   "EMBEDDING_BWD indices: index out of range at 0x10000010 " + activations +
                       " at packet 2: index -4 at position 2 is outside [0, 11)",
                   {{0x1000'0000, bytesOf<int64_t>({1, 10, -4})}}});
  return cases;
}

} // namespace npu::test
