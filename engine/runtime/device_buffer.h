// DeviceBuffer: an owning array of T in one KernelSet's memory (host for the CPU set, device for CUDA),
// move-only. resize() keeps the contents only while the capacity suffices: activations are rewritten every
// step, so growth reallocates without copying.
#pragma once

#include <cassert>
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/kernel_set.h"

namespace tokenline {

template <class T>
class DeviceBuffer {
 public:
  explicit DeviceBuffer(const KernelSet& kernels) : kernels_(&kernels) {}
  DeviceBuffer(const KernelSet& kernels, const std::vector<T>& host) : kernels_(&kernels) { assign(host); }
  ~DeviceBuffer() { kernels_->free(data_); }
  DeviceBuffer(DeviceBuffer&& o) noexcept
      : kernels_(o.kernels_),
        data_(std::exchange(o.data_, nullptr)),
        size_(std::exchange(o.size_, 0)),
        capacity_(std::exchange(o.capacity_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(kernels_, o.kernels_);
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  // Returns data(); new storage is zero-filled.
  T* resize(int64_t n) {
    assert(n >= 0);
    if (n > capacity_) {
      kernels_->free(data_);
      data_ = static_cast<T*>(kernels_->alloc(n * static_cast<int64_t>(sizeof(T))));
      capacity_ = n;
    }
    size_ = n;
    return data_;
  }
  T* assign(const std::vector<T>& host) {
    resize(static_cast<int64_t>(host.size()));
    kernels_->upload(data_, host.data(), bytes());
    return data_;
  }
  void download(std::vector<T>& host) const {
    host.resize(static_cast<size_t>(size_));
    kernels_->download(host.data(), data_, bytes());
  }

  T* data() const { return data_; }
  // data() + offset, or null while the buffer has no storage (a rank that has had no token yet): an offset
  // added to a null pointer is undefined behaviour (clang's UBSan reports it), and at n = 0 the kernels read
  // nothing.
  T* data_at(int64_t offset) const { return data_ == nullptr ? nullptr : data_ + offset; }
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * static_cast<int64_t>(sizeof(T)); }

 private:
  const KernelSet* kernels_;
  T* data_ = nullptr;
  int64_t size_ = 0, capacity_ = 0;
};

}  // namespace tokenline
