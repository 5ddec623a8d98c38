#include "engine/core/pd_handoff.h"

#include <cassert>

namespace tokenline {

PdHandoff::PdHandoff(const PdPoolShape& shape)
    : shape_(shape),
      reserved_(static_cast<size_t>(shape.decode_instances) * static_cast<size_t>(shape.decode_ranks), 0),
      requests_(reserved_.size(), 0),
      waiting_pages_(static_cast<size_t>(shape.prefill_instances), 0),
      open_(static_cast<size_t>(shape.decode_instances), 1) {
  assert(shape.page_tokens > 0 && shape.decode_instances > 0 && shape.decode_ranks > 0 &&
         shape.decode_requests_per_rank >= 0);
}

int64_t PdHandoff::decode_pages(int64_t prompt_tokens, int64_t output_tokens) const {
  // The last sampled token is never fed back (Request::max_kv_tokens).
  const int64_t tokens = prompt_tokens + output_tokens - 1;
  return (tokens + shape_.page_tokens - 1) / shape_.page_tokens;
}

int64_t PdHandoff::prompt_pages(int64_t prompt_tokens) const {
  return (prompt_tokens + shape_.page_tokens - 1) / shape_.page_tokens;
}

RejectReason PdHandoff::validate(int64_t prompt_tokens, int64_t output_tokens) const {
  if (decode_pages(prompt_tokens, output_tokens) > shape_.decode_pages_per_rank)
    return RejectReason::kNeverFitsDecodeKv;
  return RejectReason::kNone;
}

void PdHandoff::enqueue(const PdWaiting& w) {
  assert(validate(w.prompt_tokens, w.output_tokens) == RejectReason::kNone);
  queue_.push_back(w);
  waiting_pages_[static_cast<size_t>(w.prefill_instance)] += prompt_pages(w.prompt_tokens);
}

size_t PdHandoff::slot(int32_t instance, int32_t rank) const {
  return static_cast<size_t>(instance) * static_cast<size_t>(shape_.decode_ranks) + static_cast<size_t>(rank);
}

int64_t PdHandoff::reserved_pages(int32_t instance, int32_t rank) const {
  return reserved_[slot(instance, rank)];
}

int32_t PdHandoff::reserved_requests(int32_t instance, int32_t rank) const {
  return requests_[slot(instance, rank)];
}

bool PdHandoff::has_request_slot(int32_t instance, int32_t rank) const {
  return shape_.decode_requests_per_rank == 0 ||
         requests_[slot(instance, rank)] < shape_.decode_requests_per_rank;
}

bool PdHandoff::place(const PdWaiting& w, int64_t pages, PdGrant& out) const {
  // The rank with the most free pages among those with a free request slot (free -1: none).
  auto emptiest = [&](int32_t instance, int32_t& rank, int64_t& free) {
    rank = -1;
    free = -1;
    for (int32_t r = 0; r < shape_.decode_ranks; ++r) {
      if (!has_request_slot(instance, r)) continue;
      const int64_t f = shape_.decode_pages_per_rank - reserved_pages(instance, r);
      if (f > free) {
        free = f;
        rank = r;
      }
    }
  };
  int32_t rank = -1;
  int64_t free = -1;
  if (w.preferred_decode >= 0 && open_[static_cast<size_t>(w.preferred_decode)] != 0) {
    emptiest(w.preferred_decode, rank, free);
    if (free >= pages) {
      out = PdGrant{w.id, w.prefill_instance, w.preferred_decode, rank, pages};
      return true;
    }
  }
  int32_t best_instance = -1, best_rank = -1;
  int64_t best_free = -1;
  for (int32_t i = 0; i < shape_.decode_instances; ++i) {
    if (open_[static_cast<size_t>(i)] == 0) continue;
    emptiest(i, rank, free);
    if (free > best_free) {
      best_free = free;
      best_instance = i;
      best_rank = rank;
    }
  }
  if (best_free < pages) return false;
  out = PdGrant{w.id, w.prefill_instance, best_instance, best_rank, pages};
  return true;
}

void PdHandoff::grant(std::vector<PdGrant>& out) {
  while (!queue_.empty()) {
    const PdWaiting& w = queue_.front();
    PdGrant g;
    if (!place(w, decode_pages(w.prompt_tokens, w.output_tokens), g)) return;
    reserved_[slot(g.decode_instance, g.decode_rank)] += g.pages;
    ++requests_[slot(g.decode_instance, g.decode_rank)];
    waiting_pages_[static_cast<size_t>(w.prefill_instance)] -= prompt_pages(w.prompt_tokens);
    out.push_back(g);
    queue_.pop_front();
  }
}

void PdHandoff::release(const PdGrant& g) {
  int64_t& r = reserved_[slot(g.decode_instance, g.decode_rank)];
  int32_t& n = requests_[slot(g.decode_instance, g.decode_rank)];
  assert(r >= g.pages && n > 0 && "released more than reserved");
  r -= g.pages;
  --n;
}

bool PdHandoff::prefill_blocked(int32_t prefill_instance) const {
  return waiting_pages_[static_cast<size_t>(prefill_instance)] >= shape_.prefill_pages_per_instance;
}

bool PdHandoff::check() const {
  for (int64_t r : reserved_) {
    if (r < 0 || r > shape_.decode_pages_per_rank) return false;
  }
  for (int32_t n : requests_) {
    if (n < 0 || (shape_.decode_requests_per_rank > 0 && n > shape_.decode_requests_per_rank)) return false;
  }
  std::vector<int64_t> pages(waiting_pages_.size(), 0);
  for (const PdWaiting& w : queue_)
    pages[static_cast<size_t>(w.prefill_instance)] += prompt_pages(w.prompt_tokens);
  return pages == waiting_pages_;
}

}  // namespace tokenline
