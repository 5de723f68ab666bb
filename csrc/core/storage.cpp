#include "core/storage.h"

#include "core/allocator.h"
#include "core/device_backend.h"

namespace ember {

StorageImpl::StorageImpl(size_t nbytes, Device device, const char* op)
    : data_(nullptr), nbytes_(nbytes), device_(device) {
  check_device_available(device, op);
  if (device.is_cpu()) {
    data_ = cpu_alloc(nbytes, op);
    return;
  }
  device_ = resolve_device_index(device);
  const DeviceBackend* backend = device_backend(device.type);
  data_ = backend->allocate(nbytes, device_.index, op);
  owner_ = backend;
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}

StorageImpl::~StorageImpl() {
  if (owner_ != nullptr) {
    owner_->release(data_, nbytes_, device_.index);
  } else if (deleter_) {
    deleter_(ctx_, data_);
  } else {
    cpu_free(data_, nbytes_);
  }
}

}  // namespace ember
