// NCCL collectives; all-to-all-v is a grouped set of ncclSend/ncclRecv pairs.
#include "kernels/cuda/nccl_communicator.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace tokenline::cuda {
namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(NcclCommunicator::UniqueId), "ncclUniqueId size changed");

void check(ncclResult_t result, const char* what) {
  if (result != ncclSuccess) {
    std::fprintf(stderr, "NcclCommunicator: %s failed: %s\n", what, ncclGetErrorString(result));
    std::abort();
  }
}

void check(cudaError_t result, const char* what) {
  if (result != cudaSuccess) {
    std::fprintf(stderr, "NcclCommunicator: %s failed: %s\n", what, cudaGetErrorString(result));
    std::abort();
  }
}

}  // namespace

struct NcclCommunicator::Handles {
  ncclComm_t comm = nullptr;
  cudaStream_t stream = nullptr;
  void wait() { check(cudaStreamSynchronize(stream), "cudaStreamSynchronize"); }
};

NcclCommunicator::UniqueId NcclCommunicator::new_unique_id() {
  ncclUniqueId id;
  check(ncclGetUniqueId(&id), "ncclGetUniqueId");
  UniqueId out;
  std::memcpy(out.data(), &id, sizeof id);
  return out;
}

NcclCommunicator::NcclCommunicator(const UniqueId& id, int32_t rank, int32_t size, int32_t device)
    : rank_(rank), size_(size), device_(device), handles_(std::make_unique<Handles>()) {
  check(cudaSetDevice(device_), "cudaSetDevice");
  check(cudaStreamCreateWithFlags(&handles_->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  ncclUniqueId nccl_id;
  std::memcpy(&nccl_id, id.data(), sizeof nccl_id);
  check(ncclCommInitRank(&handles_->comm, size_, nccl_id, rank_), "ncclCommInitRank");
}

NcclCommunicator::~NcclCommunicator() {
  ncclCommDestroy(handles_->comm);
  cudaStreamDestroy(handles_->stream);
}

void NcclCommunicator::all_reduce_sum(float* data, int64_t count) {
  check(ncclAllReduce(data, data, static_cast<size_t>(count), ncclFloat32, ncclSum, handles_->comm,
                      handles_->stream),
        "ncclAllReduce");
  handles_->wait();
}

void NcclCommunicator::reduce_scatter_sum(float* out, const float* in, int64_t count) {
  check(ncclReduceScatter(in, out, static_cast<size_t>(count), ncclFloat32, ncclSum, handles_->comm,
                          handles_->stream),
        "ncclReduceScatter");
  handles_->wait();
}

void NcclCommunicator::all_gather(void* out, const void* in, int64_t bytes) {
  check(ncclAllGather(in, out, static_cast<size_t>(bytes), ncclUint8, handles_->comm, handles_->stream),
        "ncclAllGather");
  handles_->wait();
}

void NcclCommunicator::all_to_all_v(void* out, const int64_t* recv_bytes, const void* in,
                                    const int64_t* send_bytes) {
  check(ncclGroupStart(), "ncclGroupStart");
  int64_t send_offset = 0, recv_offset = 0;
  for (int32_t r = 0; r < size_; ++r) {
    check(ncclSend(static_cast<const uint8_t*>(in) + send_offset, static_cast<size_t>(send_bytes[r]),
                   ncclUint8, r, handles_->comm, handles_->stream),
          "ncclSend");
    check(ncclRecv(static_cast<uint8_t*>(out) + recv_offset, static_cast<size_t>(recv_bytes[r]), ncclUint8, r,
                   handles_->comm, handles_->stream),
          "ncclRecv");
    send_offset += send_bytes[r];
    recv_offset += recv_bytes[r];
  }
  check(ncclGroupEnd(), "ncclGroupEnd");
  handles_->wait();
}

void NcclCommunicator::send(const void* data, int64_t bytes, int32_t peer) {
  check(ncclSend(data, static_cast<size_t>(bytes), ncclUint8, peer, handles_->comm, handles_->stream),
        "ncclSend");
  handles_->wait();
}

void NcclCommunicator::recv(void* data, int64_t bytes, int32_t peer) {
  check(ncclRecv(data, static_cast<size_t>(bytes), ncclUint8, peer, handles_->comm, handles_->stream),
        "ncclRecv");
  handles_->wait();
}

}  // namespace tokenline::cuda
