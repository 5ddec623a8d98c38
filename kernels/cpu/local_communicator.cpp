// In-process collectives: publish a pointer, barrier, read peers in rank order, barrier (so no rank
// reuses its buffer while a peer still reads it).
#include "kernels/cpu/local_communicator.h"

#include <cassert>
#include <cstring>

namespace tokenline::cpu {

class LocalGroup::Rank final : public Communicator {
 public:
  Rank(LocalGroup& group, int32_t rank) : group_(group), rank_(rank) {}
  int32_t rank() const override { return rank_; }
  int32_t size() const override { return group_.size_; }

  void all_reduce_sum(float* data, int64_t count) override {
    publish(data, nullptr);
    std::vector<float> sum(static_cast<size_t>(count), 0.0f);
    for (int32_t r = 0; r < size(); ++r) {
      const auto* src = static_cast<const float*>(group_.posted_[r].data);
      for (int64_t i = 0; i < count; ++i) sum[i] += src[i];
    }
    group_.barrier_.arrive_and_wait();
    std::memcpy(data, sum.data(), sizeof(float) * static_cast<size_t>(count));
  }

  void reduce_scatter_sum(float* out, const float* in, int64_t count) override {
    publish(in, nullptr);
    for (int64_t i = 0; i < count; ++i) out[i] = 0.0f;
    for (int32_t r = 0; r < size(); ++r) {
      const float* src = static_cast<const float*>(group_.posted_[r].data) + rank_ * count;
      for (int64_t i = 0; i < count; ++i) out[i] += src[i];
    }
    group_.barrier_.arrive_and_wait();
  }

  void all_gather(void* out, const void* in, int64_t bytes) override {
    publish(in, nullptr);
    for (int32_t r = 0; r < size(); ++r) {
      std::memcpy(static_cast<uint8_t*>(out) + r * bytes, group_.posted_[r].data, static_cast<size_t>(bytes));
    }
    group_.barrier_.arrive_and_wait();
  }

  void all_to_all_v(void* out, const int64_t* recv_bytes, const void* in,
                    const int64_t* send_bytes) override {
    publish(in, send_bytes);
    auto* dst = static_cast<uint8_t*>(out);
    for (int32_t r = 0; r < size(); ++r) {
      const LocalGroup::Posted& peer = group_.posted_[r];
      int64_t offset = 0;
      for (int32_t i = 0; i < rank_; ++i) offset += peer.counts[i];
      assert(peer.counts[rank_] == recv_bytes[r] &&
             "all_to_all_v: recv_bytes disagrees with the peer's send_bytes");
      // An empty vector's data() may be null, and memcpy from or to null is undefined even for 0 bytes.
      if (recv_bytes[r] > 0)
        std::memcpy(dst, static_cast<const uint8_t*>(peer.data) + offset, static_cast<size_t>(recv_bytes[r]));
      dst += recv_bytes[r];
    }
    group_.barrier_.arrive_and_wait();
  }

  void send(const void* data, int64_t bytes, int32_t peer) override {
    Mailbox& box = *group_.mailboxes_[static_cast<size_t>(rank_ * size() + peer)];
    const auto* src = static_cast<const uint8_t*>(data);
    {
      std::lock_guard<std::mutex> lock(box.mutex);
      box.messages.emplace_back(src, src + bytes);
    }
    box.ready.notify_all();
  }

  void recv(void* data, int64_t bytes, int32_t peer) override {
    Mailbox& box = *group_.mailboxes_[static_cast<size_t>(peer * size() + rank_)];
    std::unique_lock<std::mutex> lock(box.mutex);
    box.ready.wait(lock, [&] { return !box.messages.empty(); });
    std::vector<uint8_t> message = std::move(box.messages.front());
    box.messages.pop_front();
    assert(static_cast<int64_t>(message.size()) == bytes && "recv: size differs from the matching send");
    std::memcpy(data, message.data(), static_cast<size_t>(bytes));
  }

 private:
  void publish(const void* data, const int64_t* counts) {
    group_.posted_[rank_] = {data, counts};
    group_.barrier_.arrive_and_wait();
  }

  LocalGroup& group_;
  int32_t rank_;
};

LocalGroup::LocalGroup(int32_t size) : size_(size), barrier_(size), posted_(static_cast<size_t>(size)) {
  for (int32_t i = 0; i < size * size; ++i) mailboxes_.push_back(std::make_unique<Mailbox>());
  for (int32_t r = 0; r < size; ++r) ranks_.push_back(std::make_unique<Rank>(*this, r));
}

LocalGroup::~LocalGroup() = default;

Communicator& LocalGroup::rank(int32_t r) {
  return *ranks_[static_cast<size_t>(r)];
}

}  // namespace tokenline::cpu
