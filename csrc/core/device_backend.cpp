#include "core/device_backend.h"

#include <atomic>

namespace ember {

namespace {
std::atomic<const DeviceBackend*> g_backends[kNumDeviceTypes];
std::atomic<void (*)(DeviceType)> g_loader{nullptr};
std::atomic<bool> g_load_tried[kNumDeviceTypes];
}  // namespace

void register_device_backend(DeviceType type, const DeviceBackend* backend) {
  g_backends[static_cast<int>(type)].store(backend, std::memory_order_release);
}

const DeviceBackend* device_backend(DeviceType type) {
  const int slot = static_cast<int>(type);
  const DeviceBackend* backend = g_backends[slot].load(std::memory_order_acquire);
  if (backend != nullptr || type == DeviceType::CPU) return backend;
  // The loader runs Python (an import), which takes the GIL: no lock of ours is held around it,
  // or a thread holding the GIL and waiting for that lock would deadlock with the loader. Two
  // threads may both call it; loading is idempotent. A load that found no device is not retried.
  auto loader = g_loader.load(std::memory_order_acquire);
  if (loader == nullptr || g_load_tried[slot].load(std::memory_order_acquire)) return nullptr;
  loader(type);
  g_load_tried[slot].store(true, std::memory_order_release);
  return g_backends[slot].load(std::memory_order_acquire);
}

void set_device_backend_loader(void (*loader)(DeviceType type)) {
  g_loader.store(loader, std::memory_order_release);
}

Device resolve_device_index(Device d) {
  if (d.is_cpu()) return Device(DeviceType::CPU, -1);
  if (d.index >= 0) return d;
  const DeviceBackend* backend = device_backend(d.type);
  return Device(d.type, static_cast<int16_t>(backend ? backend->current_device() : 0));
}

}  // namespace ember
