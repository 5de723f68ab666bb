// The services a device other than the CPU provides to the core: memory, copies to and from the
// host, and which devices exist. libember knows no device library; libember_cuda registers
// itself here when it is loaded (docs/design/cuda.md), and until then a tensor on "cuda" cannot
// be made and the error says so.
#pragma once
#include <cstddef>

#include "core/device.h"

namespace ember {

struct DeviceBackend {
  // Memory on device `index` (>= 0); throws OutOfMemoryError naming `op`. nullptr for 0 bytes.
  void* (*allocate)(size_t nbytes, int index, const char* op);
  void (*release)(void* ptr, size_t nbytes, int index) noexcept;
  // Copies `nbytes` and returns when the copy is complete; either side may be the host.
  void (*copy_bytes)(void* dst, Device dst_device, const void* src, Device src_device,
                     size_t nbytes, const char* op);
  int (*device_count)();
  int (*current_device)();
};

// Registers `backend` (static storage) for `type`; libember_cuda calls it once when loaded.
void register_device_backend(DeviceType type, const DeviceBackend* backend);
// The backend of `type`, or nullptr when none is loaded. Asks the loader (below) first.
const DeviceBackend* device_backend(DeviceType type);
// A function that loads the backend of a device type on first use (the Python layer imports
// ember.cuda's extension module); called at most until a backend is registered.
void set_device_backend_loader(void (*loader)(DeviceType type));

// `d` with its index filled in: the current device of its type when d.index is -1 (CPU: -1).
Device resolve_device_index(Device d);

}  // namespace ember
