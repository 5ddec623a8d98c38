// LocalGroup: an in-process communicator group whose ranks are threads. Collectives meet at a barrier,
// read each other's buffers directly and reduce in rank order 0..size-1, so results are deterministic and
// identical on every rank. Thread-safe: rank r's Communicator is used by one thread at a time.
#pragma once

#include <barrier>
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>
#include <vector>

#include "kernels/communicator.h"

namespace tokenline::cpu {

class LocalGroup {
 public:
  explicit LocalGroup(int32_t size);
  ~LocalGroup();
  LocalGroup(const LocalGroup&) = delete;
  LocalGroup& operator=(const LocalGroup&) = delete;

  int32_t size() const { return size_; }
  Communicator& rank(int32_t r);  // REQUIRES: 0 <= r < size()

 private:
  class Rank;
  friend class Rank;
  struct Mailbox {
    std::mutex mutex;
    std::condition_variable ready;
    std::deque<std::vector<uint8_t>> messages;
  };
  struct Posted {
    const void* data = nullptr;
    const int64_t* counts = nullptr;
  };

  int32_t size_;
  std::barrier<> barrier_;
  std::vector<Posted> posted_;  // [size] what each rank published for the current collective
  std::vector<std::unique_ptr<Mailbox>> mailboxes_;  // [src * size + dst]
  std::vector<std::unique_ptr<Rank>> ranks_;
};

}  // namespace tokenline::cpu
