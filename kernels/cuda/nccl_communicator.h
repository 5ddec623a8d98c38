// NcclCommunicator: the Communicator interface over NCCL, one rank per GPU, buffers in device memory.
// Each call enqueues on the communicator's own stream and waits for it (simple and safe; overlap with
// compute is a later step). Built only with CUDA. One thread per rank, as NCCL requires for init.
#pragma once

#include <array>
#include <memory>

#include "kernels/communicator.h"

namespace tokenline::cuda {

class NcclCommunicator final : public Communicator {
 public:
  using UniqueId = std::array<char, 128>;  // the bytes of an ncclUniqueId (NCCL_UNIQUE_ID_BYTES)

  static UniqueId new_unique_id();  // call once, hand the same id to every rank
  // Binds the calling thread to `device` and joins the group; blocks until all `size` ranks have joined.
  NcclCommunicator(const UniqueId& id, int32_t rank, int32_t size, int32_t device);
  ~NcclCommunicator() override;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;

  int32_t rank() const override { return rank_; }
  int32_t size() const override { return size_; }
  void all_reduce_sum(float* data, int64_t count) override;
  void reduce_scatter_sum(float* out, const float* in, int64_t count) override;
  void all_gather(void* out, const void* in, int64_t bytes) override;
  void all_to_all_v(void* out, const int64_t* recv_bytes, const void* in, const int64_t* send_bytes) override;
  void send(const void* data, int64_t bytes, int32_t peer) override;
  void recv(void* data, int64_t bytes, int32_t peer) override;

 private:
  struct Handles;
  int32_t rank_, size_, device_;
  std::unique_ptr<Handles> handles_;
};

}  // namespace tokenline::cuda
