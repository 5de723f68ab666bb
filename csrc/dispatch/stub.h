// Kernel registry: one DispatchStub per op, one kernel per device type, registered at static
// initialisation by the device's kernel file, so code above the kernels never names a device
// (docs/design/architecture.md, "Dispatch"):
//
//   kernels/creation_stubs.h:     EMBER_DECLARE_STUB(fill_stub, FillFn);  (device-generic)
//   ops/creation.cpp:             EMBER_DEFINE_STUB(fill_stub, FillFn);
//   kernels/cpu/fill_kernel.cpp:  EMBER_REGISTER_KERNEL(fill_stub, CPU, fill_kernel);
//   the op calls:                 fill_stub(t.device(), iter, value);
#pragma once
#include <utility>

#include "core/device.h"
#include "core/error.h"

namespace ember {

template <typename FnPtr>
struct DispatchStub;

template <typename Ret, typename... Args>
struct DispatchStub<Ret (*)(Args...)> {
  using Fn = Ret (*)(Args...);

  // constexpr so that stubs are constant-initialised before any registration runs.
  constexpr explicit DispatchStub(const char* op_name) : name(op_name), table{} {}

  template <typename... A>
  Ret operator()(Device device, A&&... args) const {
    Fn fn = table[static_cast<int>(device.type)];
    if (__builtin_expect(fn == nullptr, 0)) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for device ",
                  device_type_name(device.type));
    }
    return fn(std::forward<A>(args)...);
  }

  const char* name;
  Fn table[kNumDeviceTypes];
};

}  // namespace ember

#define EMBER_DECLARE_STUB(stub, fn_type) extern ::ember::DispatchStub<fn_type> stub
#define EMBER_DEFINE_STUB(stub, fn_type) ::ember::DispatchStub<fn_type> stub(#stub)
#define EMBER_REGISTER_KERNEL(stub, device, fn)                       \
  static const bool ember_registered_##stub##_##device = [] {         \
    stub.table[static_cast<int>(::ember::DeviceType::device)] = (fn); \
    return true;                                                      \
  }()
