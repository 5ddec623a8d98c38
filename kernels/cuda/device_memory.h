// Device memory for callers that must not include CUDA headers (tests, the engine): allocation, copies
// and a device count that returns 0 instead of failing where no GPU or driver exists.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tokenline::cuda {

int32_t device_count();  // 0 when cudaGetDeviceCount fails (no driver, no device)
void* device_alloc(int64_t bytes);
void* device_alloc_zeroed(int64_t bytes);  // device_alloc + memset 0 (nullptr for 0 bytes)
void device_free(void* ptr);
void copy_to_device(void* dst, const void* src, int64_t bytes);
void copy_to_host(void* dst, const void* src, int64_t bytes);
void copy_on_device(void* dst, const void* src, int64_t bytes);
void device_synchronize();  // waits for the default stream; aborts with the CUDA error message on failure

// An owning device array of T (RAII; move-only).
template <class T>
class DeviceArray {
 public:
  DeviceArray() = default;
  explicit DeviceArray(int64_t n)
      : n_(n), ptr_(static_cast<T*>(device_alloc(n * static_cast<int64_t>(sizeof(T))))) {}
  explicit DeviceArray(const std::vector<T>& host) : DeviceArray(static_cast<int64_t>(host.size())) {
    copy_to_device(ptr_, host.data(), bytes());
  }
  ~DeviceArray() { device_free(ptr_); }
  DeviceArray(DeviceArray&& o) noexcept : n_(o.n_), ptr_(o.ptr_) { o.n_ = 0, o.ptr_ = nullptr; }
  DeviceArray& operator=(DeviceArray&& o) noexcept {
    std::swap(n_, o.n_);
    std::swap(ptr_, o.ptr_);
    return *this;
  }
  DeviceArray(const DeviceArray&) = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;

  T* get() const { return ptr_; }
  int64_t size() const { return n_; }
  int64_t bytes() const { return n_ * static_cast<int64_t>(sizeof(T)); }
  std::vector<T> to_host() const {
    std::vector<T> out(static_cast<size_t>(n_));
    copy_to_host(out.data(), ptr_, bytes());
    return out;
  }

 private:
  int64_t n_ = 0;
  T* ptr_ = nullptr;
};

}  // namespace tokenline::cuda
