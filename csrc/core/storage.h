// A refcounted block of memory on one device. It either owns memory from Ember's allocator or
// borrows external memory (a NumPy array, a DLPack tensor) and keeps that owner alive through a
// deleter called when the last tensor using the storage dies.
#pragma once
#include <cstddef>

#include "core/device.h"
#include "core/intrusive_ptr.h"

namespace ember {

struct DeviceBackend;

class StorageImpl : public RefCounted {
 public:
  using Deleter = void (*)(void* ctx, void* data) noexcept;

  // Owns `nbytes` fresh bytes from the CPU allocator, or from the device's backend
  // (core/device_backend.h) for a device other than the CPU.
  StorageImpl(size_t nbytes, Device device, const char* op);
  // Borrows `data`; `deleter(ctx, data)` runs when the storage dies.
  StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx);
  ~StorageImpl() override;

  void* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }
  Device device() const { return device_; }
  bool owns_memory() const { return deleter_ == nullptr; }
  // Memory from a device backend's allocator (not the host's).
  bool device_owned() const { return owner_ != nullptr; }
  // Storage borrowed from a read-only source (a read-only NumPy array); writes must be refused.
  bool read_only() const { return read_only_; }
  void set_read_only(bool v) { read_only_ = v; }

 private:
  void* data_;
  size_t nbytes_;
  Device device_;
  Deleter deleter_ = nullptr;  // nullptr: memory came from cpu_alloc
  void* ctx_ = nullptr;
  bool read_only_ = false;
  // The backend whose allocate gave data_ (nullptr: not device memory). Its own release frees
  // it, even if another backend registered for the device type since (the tests' host-memory
  // stand-in, then the real CUDA backend).
  const DeviceBackend* owner_ = nullptr;
};

using Storage = intrusive_ptr<StorageImpl>;

}  // namespace ember
