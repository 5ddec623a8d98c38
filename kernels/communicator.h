// Communicator: the collectives the real engine's tensor/expert parallelism needs, over one group of ranks.
// Implementations: LocalCommunicator (ranks are threads of one process, host memory; kernels/cpu) and
// NcclCommunicator (one GPU per rank, device memory; kernels/cuda, built with CUDA only).
// Every rank of the group must call the same collectives in the same order (as with NCCL/MPI).
#pragma once

#include <cstdint>

namespace tokenline {

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int32_t rank() const = 0;
  virtual int32_t size() const = 0;
  // data[count] <- elementwise sum over ranks (same result on every rank).
  virtual void all_reduce_sum(float* data, int64_t count) = 0;
  // out[count] <- sum over ranks of in[rank() * count, +count); in holds size() * count floats.
  virtual void reduce_scatter_sum(float* out, const float* in, int64_t count) = 0;
  // out[r * bytes, +bytes) <- rank r's in[0, bytes).
  virtual void all_gather(void* out, const void* in, int64_t bytes) = 0;
  // in packs send_bytes[r] bytes for each rank r in rank order; out receives recv_bytes[r] bytes from each
  // rank r, packed in rank order. REQUIRES: recv_bytes[r] equals rank r's send_bytes[rank()].
  virtual void all_to_all_v(void* out, const int64_t* recv_bytes, const void* in,
                            const int64_t* send_bytes) = 0;
  // Point-to-point; a send is matched by the peer's recv of the same size, in order.
  virtual void send(const void* data, int64_t bytes, int32_t peer) = 0;
  virtual void recv(void* data, int64_t bytes, int32_t peer) = 0;
};

// Equal-sized all-to-all: bytes_per_rank to and from every rank.
void all_to_all(Communicator& comm, void* out, const void* in, int64_t bytes_per_rank);

}  // namespace tokenline
