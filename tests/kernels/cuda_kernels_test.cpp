// CUDA kernels against the CPU reference (tiny shapes). Skips with a message where no device exists.
#include <catch2/catch.hpp>

#include "kernels/cuda/backend_compare.h"
#include "kernels/cuda/device_memory.h"

using namespace tokenline;

TEST_CASE("CUDA kernels match the CPU reference by normalized error", "[cuda]") {
  if (cuda::device_count() == 0) {
    WARN("SKIP: no CUDA device (cudaGetDeviceCount failed or found none); CUDA kernels not compared");
    return;
  }
  for (const cuda::OpComparison& r : cuda::compare_backends(cuda::tiny_dims())) {
    INFO(r.op << " " << r.shape << " " << r.metric << " " << r.error << " (bound " << r.tolerance << ")");
    CHECK(r.ok());
  }
}

#ifdef TOKENLINE_HAVE_NCCL
#include <thread>

#include "kernels/cuda/nccl_communicator.h"

TEST_CASE("NCCL communicator: one rank per visible GPU, all-reduce / all-gather / all-to-all-v", "[cuda]") {
  const int32_t ranks = cuda::device_count();
  if (ranks == 0) {
    WARN("SKIP: no CUDA device; NCCL communicator not exercised");
    return;
  }
  const auto id = cuda::NcclCommunicator::new_unique_id();
  std::vector<std::vector<float>> reduced(ranks), gathered(ranks), exchanged(ranks);
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < ranks; ++r) {
    threads.emplace_back([&, r] {
      cuda::NcclCommunicator comm(id, r, ranks, r);
      cuda::DeviceArray<float> data(std::vector<float>{1.0f + r, 2.0f * r});
      comm.all_reduce_sum(data.get(), 2);
      reduced[r] = data.to_host();
      const cuda::DeviceArray<float> mine(std::vector<float>{static_cast<float>(r)});
      cuda::DeviceArray<float> all(ranks);
      comm.all_gather(all.get(), mine.get(), sizeof(float));
      gathered[r] = all.to_host();
      std::vector<float> send(static_cast<size_t>(ranks));  // value 100 * r + d for rank d
      for (int32_t d = 0; d < ranks; ++d) send[d] = static_cast<float>(100 * r + d);
      const cuda::DeviceArray<float> dsend(send);
      cuda::DeviceArray<float> drecv(ranks);
      std::vector<int64_t> bytes(static_cast<size_t>(ranks), sizeof(float));
      comm.all_to_all_v(drecv.get(), bytes.data(), dsend.get(), bytes.data());
      exchanged[r] = drecv.to_host();
    });
  }
  for (auto& t : threads) t.join();
  for (int32_t r = 0; r < ranks; ++r) {
    CHECK(reduced[r][0] == Approx(ranks + ranks * (ranks - 1) / 2.0));
    for (int32_t q = 0; q < ranks; ++q) {
      CHECK(gathered[r][q] == static_cast<float>(q));
      CHECK(exchanged[r][q] == static_cast<float>(100 * q + r));
    }
  }
}
#endif
