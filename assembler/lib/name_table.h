// A string-keyed hash table for the assembler's hot lookups (symbols,
// mnemonics, directives): open addressing over hashName(), entries kept
// in insertion order at stable addresses.
#pragma once

#include "lexer.h"

#include <cstdint>
#include <cstring>
#include <deque>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace npu::as {

template <typename T> class NameTable {
public:
  using Entry = std::pair<std::string, T>;

  T *find(std::string_view name) { return find(name, hashName(name)); }
  // With the name's hash already known (Token::intValue of an identifier).
  T *find(std::string_view name, uint64_t h) {
    if (entries_.empty())
      return nullptr;
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      const Slot &slot = slots_[i];
      if (!slot.entry)
        return nullptr;
      if (slot.hash == h && matches(slot.entry->first, name))
        return &slot.entry->second;
    }
  }
  const T *find(std::string_view name) const { return const_cast<NameTable *>(this)->find(name); }
  const T *find(std::string_view name, uint64_t h) const {
    return const_cast<NameTable *>(this)->find(name, h);
  }

  // The entry for `name`, and whether it was created (value-initialised).
  std::pair<Entry *, bool> emplace(std::string_view name) {
    if ((entries_.size() + 1) * 4 > slots_.size() * 3)
      grow();
    const uint64_t h = hashName(name);
    size_t i = h & mask_;
    for (;; i = (i + 1) & mask_) {
      const Slot &slot = slots_[i];
      if (!slot.entry)
        break;
      if (slot.hash == h && matches(slot.entry->first, name))
        return {slot.entry, false};
    }
    Entry &entry = entries_.emplace_back(std::string(name), T());
    slots_[i] = Slot{h, &entry};
    return {&entry, true};
  }

  bool empty() const { return entries_.empty(); }
  std::deque<Entry> &entries() { return entries_; }
  const std::deque<Entry> &entries() const { return entries_; }

private:
  // The entry itself rather than its index: indexing a deque costs a
  // division on every probe.
  struct Slot {
    uint64_t hash = 0;
    Entry *entry = nullptr;
  };

  // Names are short: word compares (the last one overlapping) beat calling
  // memcmp and a loop over the bytes.
  static bool matches(const std::string &a, std::string_view b) {
    const size_t n = b.size();
    if (a.size() != n)
      return false;
    const char *p = a.data(), *q = b.data();
    if (n >= 8) {
      for (size_t i = 0; i + 8 < n; i += 8)
        if (load<uint64_t>(p + i) != load<uint64_t>(q + i))
          return false;
      return load<uint64_t>(p + n - 8) == load<uint64_t>(q + n - 8);
    }
    if (n >= 4)
      return load<uint32_t>(p) == load<uint32_t>(q) &&
             load<uint32_t>(p + n - 4) == load<uint32_t>(q + n - 4);
    for (size_t i = 0; i < n; ++i)
      if (p[i] != q[i])
        return false;
    return true;
  }
  template <typename Word> static Word load(const char *p) {
    Word w;
    std::memcpy(&w, p, sizeof w);
    return w;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot());
    mask_ = slots_.size() - 1;
    for (const Slot &slot : old) {
      if (!slot.entry)
        continue;
      size_t i = slot.hash & mask_;
      while (slots_[i].entry)
        i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::deque<Entry> entries_;
};

} // namespace npu::as
