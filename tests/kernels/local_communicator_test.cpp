#include "kernels/cpu/local_communicator.h"

#include <catch2/catch.hpp>
#include <thread>

using namespace tokenline;

namespace {

constexpr int32_t kRanks = 4;

// Runs fn(comm) on one thread per rank.
template <class Fn>
void on_ranks(cpu::LocalGroup& group, Fn fn) {
  std::vector<std::thread> threads;
  for (int32_t r = 0; r < group.size(); ++r) threads.emplace_back([&, r] { fn(group.rank(r)); });
  for (auto& t : threads) t.join();
}

}  // namespace

TEST_CASE("local communicator: all-reduce, reduce-scatter, all-gather") {
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<float>> reduced(kRanks), scattered(kRanks), gathered(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank();
    std::vector<float> data = {1.0f * r, 10.0f * r, 0.5f};
    comm.all_reduce_sum(data.data(), 3);
    reduced[r] = data;
    std::vector<float> in(2 * kRanks);
    for (int32_t i = 0; i < 2 * kRanks; ++i) in[i] = static_cast<float>(100 * r + i);
    scattered[r].resize(2);
    comm.reduce_scatter_sum(scattered[r].data(), in.data(), 2);
    const float mine = static_cast<float>(r * r);
    gathered[r].resize(kRanks);
    comm.all_gather(gathered[r].data(), &mine, sizeof(float));
  });
  for (int32_t r = 0; r < kRanks; ++r) {
    CHECK(reduced[r] == std::vector<float>{6.0f, 60.0f, 2.0f});
    // sum over ranks q of 100q + 2r + j = 600 + 4 * (2r + j)
    CHECK(scattered[r] == std::vector<float>{600.0f + 8.0f * r, 604.0f + 8.0f * r});
    CHECK(gathered[r] == std::vector<float>{0.0f, 1.0f, 4.0f, 9.0f});
  }
}

TEST_CASE("local communicator: all-to-all-v with uneven counts, and send/recv in order") {
  cpu::LocalGroup group(kRanks);
  std::vector<std::vector<int32_t>> received(kRanks);
  std::vector<int32_t> ring(kRanks);
  on_ranks(group, [&](Communicator& comm) {
    const int32_t r = comm.rank();
    // Rank r sends (d + 1) values "r*10 + d" to rank d, so rank d receives d + 1 values from each rank.
    std::vector<int32_t> send;
    std::vector<int64_t> send_bytes(kRanks), recv_bytes(kRanks, (r + 1) * 4);
    for (int32_t d = 0; d < kRanks; ++d) {
      send_bytes[d] = (d + 1) * 4;
      for (int32_t i = 0; i <= d; ++i) send.push_back(r * 10 + d);
    }
    received[r].resize(static_cast<size_t>(kRanks) * (r + 1));
    comm.all_to_all_v(received[r].data(), recv_bytes.data(), send.data(), send_bytes.data());
    const int32_t token = r * 7;
    comm.send(&token, sizeof token, (r + 1) % kRanks);
    comm.recv(&ring[r], sizeof(int32_t), (r + kRanks - 1) % kRanks);
  });
  for (int32_t d = 0; d < kRanks; ++d) {
    std::vector<int32_t> want;
    for (int32_t src = 0; src < kRanks; ++src) want.insert(want.end(), d + 1, src * 10 + d);
    CHECK(received[d] == want);
    CHECK(ring[d] == ((d + kRanks - 1) % kRanks) * 7);
  }
}
