// DLPack exchange: Tensor.__dlpack__ / __dlpack_device__ (producer) and ember.from_dlpack
// (consumer). Both directions are zero-copy: an exported capsule keeps the tensor's storage
// alive until the consumer calls its deleter; an imported tensor's storage calls the producer's
// deleter when the last view dies.
#include <vector>

#include "api/views.h"
#include "bindings/dlpack_abi.h"
#include "bindings/factory_args.h"
#include "core/shape.h"

namespace ember {

namespace {

constexpr const char* kLegacyName = "dltensor";
constexpr const char* kLegacyUsedName = "used_dltensor";
constexpr const char* kVersionedName = "dltensor_versioned";
constexpr const char* kVersionedUsedName = "used_dltensor_versioned";

dlpack::DataType to_dl_dtype(ScalarType t) {
  const uint8_t bits = static_cast<uint8_t>(element_size(t) * 8);
  switch (t) {
    case ScalarType::Bool:
      return {dlpack::kBool, bits, 1};
    case ScalarType::UInt8:
      return {dlpack::kUInt, bits, 1};
    case ScalarType::Int8:
    case ScalarType::Int16:
    case ScalarType::Int32:
    case ScalarType::Int64:
      return {dlpack::kInt, bits, 1};
    case ScalarType::BFloat16:
      return {dlpack::kBfloat, bits, 1};
    case ScalarType::Complex64:
    case ScalarType::Complex128:
      return {dlpack::kComplex, bits, 1};
    default:
      return {dlpack::kFloat, bits, 1};
  }
}

std::optional<ScalarType> from_dl_dtype(const dlpack::DataType& d) {
  if (d.lanes != 1) return std::nullopt;
  for (int i = 0; i < kNumPromotableScalarTypes; ++i) {  // DLPack has no quantized types
    const auto t = static_cast<ScalarType>(i);
    const dlpack::DataType e = to_dl_dtype(t);
    if (e.code == d.code && e.bits == d.bits) return t;
  }
  return std::nullopt;
}

// What an exported capsule owns: the tensor (and so its storage) plus the shape and stride
// arrays the DLTensor points into.
struct ExportContext {
  Tensor tensor;
  std::vector<int64_t> shape, strides;
};

template <typename Managed>
void delete_export(Managed* self) {
  delete static_cast<ExportContext*>(self->manager_ctx);  // may free a NumPy-backed storage:
  delete self;                                            // that path takes the GIL itself
}

void fill_dl_tensor(dlpack::Tensor& dl, ExportContext* ctx) {
  const Tensor& t = ctx->tensor;
  // A CUDA tensor exports its device address, named as a CUDA device (never as host memory).
  dl.data = t.impl()->device_data();
  dl.device = t.device().is_cpu()
                  ? dlpack::Device{dlpack::kCPU, 0}
                  : dlpack::Device{dlpack::kCUDA, static_cast<int32_t>(t.device().index)};
  dl.ndim = static_cast<int32_t>(t.dim());
  dl.dtype = to_dl_dtype(t.dtype());
  dl.shape = ctx->shape.data();
  dl.strides = ctx->strides.data();
  dl.byte_offset = 0;
}

// Capsule destructors: a capsule nobody consumed still owns its managed tensor.
void legacy_capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kLegacyName)) return;  // consumed ("used_dltensor")
  auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(capsule, kLegacyName));
  if (m && m->deleter) m->deleter(m);
}

void versioned_capsule_destructor(PyObject* capsule) {
  if (!PyCapsule_IsValid(capsule, kVersionedName)) return;
  auto* m =
      static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(capsule, kVersionedName));
  if (m && m->deleter) m->deleter(m);
}

py::object export_capsule(const Tensor& self, bool versioned, bool copy) {
  if (is_quantized(self.dtype())) {
    PyErr_SetString(PyExc_BufferError,
                    "[__dlpack__] DLPack has no quantized types: export int_repr() or "
                    "dequantize() instead");
    throw py::error_already_set();
  }
  const bool read_only = self.storage()->read_only();
  if (!versioned && read_only) {
    PyErr_SetString(PyExc_BufferError,
                    "[__dlpack__] cannot export a read-only tensor through DLPack < 1.0, which "
                    "cannot signal read-only memory (pass max_version=(1, 0) or copy=True)");
    throw py::error_already_set();
  }
  auto* ctx =
      new ExportContext{copy ? clone(self) : self, self.sizes().vec(), self.strides().vec()};
  ctx->strides = ctx->tensor.strides().vec();
  PyObject* capsule = nullptr;
  if (versioned) {
    auto* m = new dlpack::ManagedTensorVersioned{};
    m->version = {dlpack::kMajorVersion, dlpack::kMinorVersion};
    m->manager_ctx = ctx;
    m->deleter = &delete_export<dlpack::ManagedTensorVersioned>;
    m->flags =
        (read_only && !copy ? dlpack::kFlagReadOnly : 0) | (copy ? dlpack::kFlagIsCopied : 0);
    fill_dl_tensor(m->dl_tensor, ctx);
    capsule = PyCapsule_New(m, kVersionedName, versioned_capsule_destructor);
    if (!capsule) m->deleter(m);
  } else {
    auto* m = new dlpack::ManagedTensor{};
    m->manager_ctx = ctx;
    m->deleter = &delete_export<dlpack::ManagedTensor>;
    fill_dl_tensor(m->dl_tensor, ctx);
    capsule = PyCapsule_New(m, kLegacyName, legacy_capsule_destructor);
    if (!capsule) m->deleter(m);
  }
  if (!capsule) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(capsule);
}

// Storage deleters for imported memory: hand the managed tensor back to its producer.
template <typename Managed>
void release_import(void* ctx, void*) noexcept {
  auto* m = static_cast<Managed*>(ctx);
  if (!m->deleter) return;
  if (Py_IsInitialized()) {
    PyGILState_STATE gil = PyGILState_Ensure();  // producers such as NumPy drop Python refs
    m->deleter(m);
    PyGILState_Release(gil);
  } else {
    m->deleter(m);
  }
}

[[noreturn]] void throw_buffer_error(const std::string& msg) {
  PyErr_SetString(PyExc_BufferError, msg.c_str());
  throw py::error_already_set();
}

Tensor import_dl_tensor(const dlpack::Tensor& dl, StorageImpl::Deleter deleter, void* managed,
                        bool read_only) {
  const char* op = "from_dlpack";
  Device device;  // host memory: CPU, or CUDA's pinned host memory
  if (dl.device.device_type == dlpack::kCUDA) {
    device = Device(DeviceType::CUDA, static_cast<int16_t>(dl.device.device_id));
    try {
      check_device_available(device, op);
    } catch (...) {
      deleter(managed, nullptr);
      throw;
    }
  } else if (dl.device.device_type != dlpack::kCPU && dl.device.device_type != dlpack::kCUDAHost) {
    deleter(managed, nullptr);
    EMBER_THROW(Error, "[", op, "] unsupported DLPack device type ", dl.device.device_type);
  }
  auto dtype = from_dl_dtype(dl.dtype);
  if (!dtype) {
    deleter(managed, nullptr);
    throw_buffer_error(str_cat("[", op, "] unsupported DLPack dtype (code ", int(dl.dtype.code),
                               ", bits ", int(dl.dtype.bits), ", lanes ", dl.dtype.lanes, ")"));
  }
  DimVector sizes(IntArrayRef(dl.shape, static_cast<size_t>(dl.ndim)));
  DimVector strides = dl.strides ? DimVector(IntArrayRef(dl.strides, static_cast<size_t>(dl.ndim)))
                                 : contiguous_strides(sizes);
  int64_t extent = 1;
  bool empty = false;
  for (int32_t d = 0; d < dl.ndim; ++d) {
    if (sizes[d] == 0) empty = true;
    if (strides[d] < 0 && sizes[d] > 1) {
      deleter(managed, nullptr);
      EMBER_THROW(Error, "[", op, "] tensors with negative strides are not supported (sizes ",
                  shape_str(sizes), ", strides ", shape_str(strides), "); copy the array first");
    }
    if (sizes[d] <= 1) strides[d] = std::max<int64_t>(strides[d], 0);
    extent += (sizes[d] - 1) * strides[d];
  }
  const size_t nbytes = empty ? 0 : static_cast<size_t>(extent) * element_size(*dtype);
  void* data = static_cast<char*>(dl.data) + dl.byte_offset;
  auto storage = make_intrusive<StorageImpl>(data, nbytes, device, deleter, managed);
  storage->set_read_only(read_only);
  return Tensor(make_intrusive<TensorImpl>(std::move(storage), *dtype, sizes, strides, 0));
}

Tensor tensor_from_capsule(py::handle capsule) {
  PyObject* c = capsule.ptr();
  if (PyCapsule_IsValid(c, kVersionedName)) {
    auto* m = static_cast<dlpack::ManagedTensorVersioned*>(PyCapsule_GetPointer(c, kVersionedName));
    if (m->version.major > dlpack::kMajorVersion) {
      throw_buffer_error(str_cat("[from_dlpack] unsupported DLPack version ", m->version.major, ".",
                                 m->version.minor, " (Ember reads 1.x)"));
    }
    if (PyCapsule_SetName(c, kVersionedUsedName) != 0) throw py::error_already_set();
    return import_dl_tensor(m->dl_tensor, &release_import<dlpack::ManagedTensorVersioned>, m,
                            (m->flags & dlpack::kFlagReadOnly) != 0);
  }
  if (PyCapsule_IsValid(c, kLegacyName)) {
    auto* m = static_cast<dlpack::ManagedTensor*>(PyCapsule_GetPointer(c, kLegacyName));
    if (PyCapsule_SetName(c, kLegacyUsedName) != 0) throw py::error_already_set();
    return import_dl_tensor(m->dl_tensor, &release_import<dlpack::ManagedTensor>, m, false);
  }
  EMBER_THROW(Error,
              "[from_dlpack] received an invalid capsule. Note that DLTensor capsules can "
              "be consumed only once, so you might have already constructed a tensor from it "
              "once.");
}

}  // namespace

Tensor tensor_from_dlpack(py::handle obj) {
  if (PyCapsule_CheckExact(obj.ptr())) return tensor_from_capsule(obj);
  if (!py::hasattr(obj, "__dlpack__")) {
    EMBER_THROW(Error,
                "[from_dlpack] expected an object implementing __dlpack__ (a tensor or "
                "array) or a DLPack capsule, but got ",
                Py_TYPE(obj.ptr())->tp_name);
  }
  // A CUDA producer orders its pending work before the stream we name: 1, the legacy default
  // stream, on which Ember's copies and fills run.
  py::object stream = py::none();
  if (py::hasattr(obj, "__dlpack_device__")) {
    py::tuple dev = obj.attr("__dlpack_device__")();
    const int type = dev[0].cast<int>();
    if (type != dlpack::kCPU && type != dlpack::kCUDAHost) {
      check_device_available(Device(DeviceType::CUDA, dev[1].cast<int16_t>()), "from_dlpack");
      if (type == dlpack::kCUDA) stream = py::int_(1);
    }
  }
  py::object capsule;
  try {
    capsule = obj.attr("__dlpack__")(
        py::arg("stream") = stream,
        py::arg("max_version") = py::make_tuple(dlpack::kMajorVersion, dlpack::kMinorVersion));
  } catch (py::error_already_set& e) {
    if (!e.matches(PyExc_TypeError)) throw;
    // A producer from before the versioned protocol.
    capsule = stream.is_none() ? obj.attr("__dlpack__")() : obj.attr("__dlpack__")(stream);
  }
  return tensor_from_capsule(capsule);
}

void init_dlpack(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  cls.def(
      "__dlpack__",
      [](const Tensor& self, py::object stream, py::object max_version, py::object dl_device,
         py::object copy) {
        if (!stream.is_none()) {
          EMBER_CHECK(PyLong_Check(stream.ptr()), "[__dlpack__] stream must be None or an int");
          EMBER_CHECK(stream.cast<int64_t>() == -1 || !self.device().is_cpu(),
                      "[__dlpack__] stream must be None for CPU tensors");
        }
        if (!dl_device.is_none()) {
          py::tuple dev = dl_device;
          const int type = dev[0].cast<int>();
          const int want = self.device().is_cpu() ? dlpack::kCPU : dlpack::kCUDA;
          if (type != want ||
              (want == dlpack::kCUDA && dev[1].cast<int>() != self.device().index)) {
            throw_buffer_error(str_cat("[__dlpack__] cannot export a ", self.device().str(),
                                       " tensor to DLPack device (", type, ", ", dev[1].cast<int>(),
                                       ")"));
          }
        }
        if (!self.device().is_cpu()) {
          // The consumer may read on any stream: the fills queued on the device finish first.
          py::object cuda = py::module_::import("ember.cuda");
          if (py::cast<bool>(cuda.attr("is_available")())) {
            cuda.attr("synchronize")(self.device().index);
          }
        }
        bool versioned = false;
        if (!max_version.is_none()) {
          py::tuple v = max_version;
          versioned = v[0].cast<int>() >= 1;
        }
        const bool force_copy = !copy.is_none() && py_truthy(copy);
        return export_capsule(self, versioned, force_copy);
      },
      py::arg("stream") = py::none(), py::kw_only(), py::arg("max_version") = py::none(),
      py::arg("dl_device") = py::none(), py::arg("copy") = py::none());
  cls.def("__dlpack_device__", [](const Tensor& self) -> py::tuple {
    const int type = self.device().is_cpu() ? dlpack::kCPU : dlpack::kCUDA;
    const int index = self.device().index < 0 ? 0 : self.device().index;
    py::object enum_type = py::module_::import("ember.utils.dlpack").attr("DLDeviceType");
    return py::make_tuple(enum_type(type), index);
  });
  m.def("from_dlpack", &tensor_from_dlpack, py::arg("ext_tensor"),
        "A tensor sharing the memory of a DLPack producer (NumPy array, PyTorch tensor, ...) "
        "or of a DLPack capsule.");
}

}  // namespace ember
