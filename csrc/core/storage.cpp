#include "core/storage.h"

#include "core/allocator.h"

namespace ember {

StorageImpl::StorageImpl(size_t nbytes, Device device, const char* op)
    : data_(nullptr), nbytes_(nbytes), device_(device) {
  check_device_available(device, op);
  data_ = cpu_alloc(nbytes, op);
}

StorageImpl::StorageImpl(void* data, size_t nbytes, Device device, Deleter deleter, void* ctx)
    : data_(data), nbytes_(nbytes), device_(device), deleter_(deleter), ctx_(ctx) {}

StorageImpl::~StorageImpl() {
  if (deleter_) {
    deleter_(ctx_, data_);
  } else {
    cpu_free(data_, nbytes_);
  }
}

}  // namespace ember
