// Kernel registry: one DispatchStub per op, one kernel per device type, registered at static
// initialisation by the device's kernel file, so code above the kernels never names a device
// (docs/design/architecture.md, "Dispatch"):
//
//   kernels/creation_stubs.h:     EMBER_DECLARE_STUB(fill_stub, FillFn);  (device-generic)
//   ops/creation.cpp:             EMBER_DEFINE_STUB(fill_stub, FillFn);
//   kernels/cpu/fill_kernel.cpp:  EMBER_REGISTER_KERNEL(fill_stub, CPU, fill_kernel);
//   the op calls:                 fill_stub(t.device(), iter, value);
//
// CPU kernels may be registered once per CPU capability level: a kernel file compiled for
// several levels (docs/design/cpu-dispatch.md) registers each copy under the level it was
// compiled for (EMBER_CPU_LEVEL, 0 for the baseline build). The first CPU call resolves the stub
// to the highest registered level not above core/cpu_capability.h's cpu_capability() and keeps
// that pointer, so later calls cost what they did with one kernel.
//
// Note [Registration runs no kernel-file code]
// A CPU registration is constant data, not a static initialiser: a {slot, kernel} pair placed in
// the linker section `ember_cpu_kernels`, which the baseline code copies into the stubs once,
// before the first CPU dispatch. A file compiled for AVX-512 therefore executes nothing when the
// library loads; a static initialiser of its own would be AVX-512 code too, free to use any
// AVX-512 instruction, and would run on every CPU at import.
#pragma once
#include <atomic>
#include <utility>

#include "core/cpu_capability.h"
#include "core/device.h"
#include "core/error.h"

#ifndef EMBER_CPU_LEVEL
#define EMBER_CPU_LEVEL 0
#endif

namespace ember {

namespace detail {
// One CPU registration (see the note above): `slot` is &stub.cpu_levels[level].
template <typename Fn>
struct CpuKernelEntry {
  Fn* slot;
  Fn kernel;
};
// Copies every entry of the section into its slot; once, thread-safely (dispatch/stub.cpp).
void apply_cpu_kernel_registrations();
}  // namespace detail

template <typename FnPtr>
struct DispatchStub;

template <typename Ret, typename... Args>
struct DispatchStub<Ret (*)(Args...)> {
  using Fn = Ret (*)(Args...);

  // constexpr so that stubs are constant-initialised before any registration runs.
  constexpr explicit DispatchStub(const char* op_name)
      : name(op_name), table{}, cpu_levels{}, cpu_resolved(nullptr) {}

  template <typename... A>
  Ret operator()(Device device, A&&... args) const {
    Fn fn = device.type == DeviceType::CPU ? cpu_resolved.load(std::memory_order_relaxed)
                                           : table[static_cast<int>(device.type)];
    if (__builtin_expect(fn == nullptr, 0)) fn = resolve(device);
    return fn(std::forward<A>(args)...);
  }

  // The kernel a CPU call runs at `level` (nullptr when none is registered at or below it).
  Fn cpu_kernel_at(CpuCapability level) const {
    detail::apply_cpu_kernel_registrations();
    for (int i = static_cast<int>(level); i >= 0; --i) {
      if (cpu_levels[i] != nullptr) return cpu_levels[i];
    }
    return nullptr;
  }

  const char* name;
  Fn table[kNumDeviceTypes];           // non-CPU devices
  Fn cpu_levels[kNumCpuCapabilities];  // CPU kernels by the level they were compiled for

 private:
  __attribute__((noinline)) Fn resolve(Device device) const {
    Fn fn = device.type == DeviceType::CPU ? cpu_kernel_at(cpu_capability())
                                           : table[static_cast<int>(device.type)];
    if (fn == nullptr) {
      EMBER_THROW(NotImplementedError, "[", name, "] not implemented for device ",
                  device_type_name(device.type),
                  device.type == DeviceType::CPU
                      ? ""
                      : ": this backend has no kernel for it yet; move the tensors with .cpu(), "
                        "compute there, and move the result back with .to(device)");
    }
    // Every thread resolves to the same pointer, so a race only repeats the lookup.
    if (device.type == DeviceType::CPU) cpu_resolved.store(fn, std::memory_order_relaxed);
    return fn;
  }

  mutable std::atomic<Fn> cpu_resolved;
};

}  // namespace ember

#define EMBER_DECLARE_STUB(stub, fn_type) extern ::ember::DispatchStub<fn_type> stub
#define EMBER_DEFINE_STUB(stub, fn_type) ::ember::DispatchStub<fn_type> stub(#stub)
#define EMBER_REGISTER_KERNEL(stub, device, fn) EMBER_REGISTER_KERNEL_##device(stub, fn)
#if defined(EMBER_BUILDING_LIBRARY)
// Constant data in libember's section (Note [Registration runs no kernel-file code]).
#define EMBER_REGISTER_KERNEL_CPU(stub, fn)                                                       \
  __attribute__((                                                                                 \
      used,                                                                                       \
      section(                                                                                    \
          "ember_cpu_kernels"))) static const ::ember::detail::CpuKernelEntry<decltype(stub)::Fn> \
      ember_cpu_kernel_##stub = {&stub.cpu_levels[EMBER_CPU_LEVEL], (fn)}
#else
// Outside libember (the C++ tests, a future extension library), compiled for the baseline: a
// static initialiser is safe there, and libember's section walk would not see this module's.
#define EMBER_REGISTER_KERNEL_CPU(stub, fn)              \
  static const bool ember_registered_##stub##_CPU = [] { \
    stub.cpu_levels[EMBER_CPU_LEVEL] = (fn);             \
    return true;                                         \
  }()
#endif
#define EMBER_REGISTER_KERNEL_CUDA(stub, fn)                        \
  static const bool ember_registered_##stub##_CUDA = [] {           \
    stub.table[static_cast<int>(::ember::DeviceType::CUDA)] = (fn); \
    return true;                                                    \
  }()
