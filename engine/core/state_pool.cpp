#include "engine/core/state_pool.h"

#include <algorithm>
#include <cassert>

namespace tokenline {

StatePool::StatePool(int64_t slots) : owner_(static_cast<size_t>(std::max<int64_t>(0, slots)), -1) {
  free_.reserve(owner_.size());
  for (int64_t s = total_slots() - 1; s >= 0; --s) free_.push_back(static_cast<int32_t>(s));
}

int32_t StatePool::take(StateHolder holder) {
  assert(holder >= 0 && !free_.empty() && !holds(holder) && "take: no free slot, or the holder holds one");
  const int32_t slot = free_.back();
  free_.pop_back();
  owner_[static_cast<size_t>(slot)] = holder;
  if (static_cast<size_t>(holder) >= slot_by_holder_.size())
    slot_by_holder_.resize(static_cast<size_t>(holder) + 1, -1);
  slot_by_holder_[static_cast<size_t>(holder)] = slot;
  peak_used_ = std::max(peak_used_, used_slots());
  return slot;
}

void StatePool::give(StateHolder holder) {
  const int32_t slot = slot_of(holder);
  if (slot < 0) return;
  owner_[static_cast<size_t>(slot)] = -1;
  slot_by_holder_[static_cast<size_t>(holder)] = -1;
  free_.push_back(slot);
}

bool StatePool::check(std::string* why) const {
  auto fail = [why](std::string msg) {
    if (why) *why = "state pool: " + std::move(msg);
    return false;
  };
  std::vector<uint8_t> on_free(owner_.size(), 0);
  for (const int32_t s : free_) {
    if (s < 0 || static_cast<size_t>(s) >= owner_.size()) return fail("bad free slot id");
    if (on_free[static_cast<size_t>(s)]++ != 0) return fail("slot " + std::to_string(s) + " free twice");
    if (owner_[static_cast<size_t>(s)] != -1) return fail("slot " + std::to_string(s) + " free and held");
  }
  int64_t held = 0;
  for (size_t h = 0; h < slot_by_holder_.size(); ++h) {
    const int32_t s = slot_by_holder_[h];
    if (s < 0) continue;
    if (static_cast<size_t>(s) >= owner_.size() || owner_[static_cast<size_t>(s)] != static_cast<int32_t>(h))
      return fail("holder " + std::to_string(h) + " and slot " + std::to_string(s) + " disagree");
    ++held;
  }
  if (held + free_slots() != total_slots()) return fail("slots not conserved");
  return true;
}

}  // namespace tokenline
