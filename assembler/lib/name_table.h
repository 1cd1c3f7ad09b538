// A string-keyed hash table for the assembler's hot lookups (symbols,
// mnemonics, directives): open addressing over hashName(), entries kept
// in insertion order at stable addresses.
#pragma once

#include "lexer.h"

#include <cstdint>
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
      if (slot.index == kEmpty)
        return nullptr;
      if (slot.hash == h && matches(entries_[slot.index].first, name))
        return &entries_[slot.index].second;
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
      if (slot.index == kEmpty)
        break;
      if (slot.hash == h && matches(entries_[slot.index].first, name))
        return {&entries_[slot.index], false};
    }
    slots_[i] = Slot{h, static_cast<uint32_t>(entries_.size())};
    entries_.emplace_back(std::string(name), T());
    return {&entries_.back(), true};
  }

  bool empty() const { return entries_.empty(); }
  std::deque<Entry> &entries() { return entries_; }
  const std::deque<Entry> &entries() const { return entries_; }

private:
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Slot {
    uint64_t hash = 0;
    uint32_t index = kEmpty;
  };

  static bool matches(const std::string &a, std::string_view b) {
    if (a.size() != b.size())
      return false;
    // Names are short: a loop beats calling memcmp.
    for (size_t i = 0; i < b.size(); ++i)
      if (a[i] != b[i])
        return false;
    return true;
  }
  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot());
    mask_ = slots_.size() - 1;
    for (const Slot &slot : old) {
      if (slot.index == kEmpty)
        continue;
      size_t i = slot.hash & mask_;
      while (slots_[i].index != kEmpty)
        i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::deque<Entry> entries_;
};

} // namespace npu::as
