#include "kernels/communicator.h"

#include <cstddef>
#include <vector>

namespace tokenline {

void all_to_all(Communicator& comm, void* out, const void* in, int64_t bytes_per_rank) {
  std::vector<int64_t> counts(static_cast<size_t>(comm.size()), bytes_per_rank);
  comm.all_to_all_v(out, counts.data(), in, counts.data());
}

}  // namespace tokenline
