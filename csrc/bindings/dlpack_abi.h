// The DLPack exchange ABI (https://dmlc.github.io/dlpack/latest/c_api.html), versions 0.8
// (DLManagedTensor, capsule "dltensor") and 1.x (DLManagedTensorVersioned, capsule
// "dltensor_versioned"). These declarations restate the published C struct layouts that every
// producer and consumer (NumPy, PyTorch, JAX, CuPy) agrees on; only the fields Ember reads or
// writes are named beyond the layout itself.
#pragma once
#include <cstdint>

namespace ember::dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };

struct Device {
  int32_t device_type;  // DeviceType
  int32_t device_id;
};

enum TypeCode : uint8_t {
  kInt = 0,
  kUInt = 1,
  kFloat = 2,
  kOpaqueHandle = 3,
  kBfloat = 4,
  kComplex = 5,
  kBool = 6
};

struct DataType {
  uint8_t code;  // TypeCode
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; nullptr means compact row-major
  uint64_t byte_offset;
};

struct ManagedTensor {  // DLManagedTensor
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct Version {
  uint32_t major;
  uint32_t minor;
};

constexpr uint64_t kFlagReadOnly = 1ull << 0;
constexpr uint64_t kFlagIsCopied = 1ull << 1;

struct ManagedTensorVersioned {  // DLManagedTensorVersioned
  Version version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};

constexpr uint32_t kMajorVersion = 1;
constexpr uint32_t kMinorVersion = 0;

}  // namespace ember::dlpack
