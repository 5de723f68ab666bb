#include "ops/creation.h"

#include <cstring>

#include "core/shape.h"
#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/creation_stubs.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(fill_stub, FillFn);

namespace {

// A quantized tensor needs its parameters: the factories cannot make one.
ScalarType factory_dtype(const TensorOptions& opts, const char* op) {
  const ScalarType dtype = opts.dtype_or(default_dtype());
  EMBER_CHECK_T(TypeError, !is_quantized(dtype), "[", op, "] cannot make a ", dtype_name(dtype),
                " tensor without quantization parameters: use quantize_per_tensor, "
                "_make_per_tensor_quantized_tensor or _empty_affine_quantized");
  return dtype;
}

}  // namespace

Tensor empty(IntArrayRef sizes, TensorOptions opts) {
  factory_dtype(opts, "empty");
  return empty_tensor(sizes, opts.dtype_or(default_dtype()), opts.device, "empty");
}

Tensor empty_strided(IntArrayRef sizes, IntArrayRef strides, TensorOptions opts) {
  factory_dtype(opts, "empty_strided");
  return empty_strided_tensor(sizes, strides, opts.dtype_or(default_dtype()), opts.device,
                              "empty_strided");
}

Tensor zeros(IntArrayRef sizes, TensorOptions opts) {
  Tensor t = empty_tensor(sizes, factory_dtype(opts, "zeros"), opts.device, "zeros");
  return zero_fresh(t);
}

Tensor ones(IntArrayRef sizes, TensorOptions opts) {
  Tensor t = empty_tensor(sizes, factory_dtype(opts, "ones"), opts.device, "ones");
  return fill_fresh(t, Scalar(int64_t(1)));
}

Tensor full(IntArrayRef sizes, const Scalar& value, TensorOptions opts) {
  Tensor t = empty_tensor(sizes, opts.dtype_or(value.natural_dtype()), opts.device, "full");
  return fill_fresh(t, value);
}

Tensor scalar_tensor(const Scalar& value, ScalarType dtype) {
  if (dtype == ScalarType::Undefined) dtype = value.natural_dtype();
  Tensor t = empty_tensor({}, dtype, Device(), "scalar_tensor");
  fill_fresh(t, value);
  return t;
}

Tensor wrap_scalar(const Scalar& value) {
  // Stored at full width (int64 / float64 / complex128) so no precision is lost before the op
  // converts it to the common dtype.
  ScalarType st = value.is_bool()       ? ScalarType::Bool
                  : value.is_integral() ? ScalarType::Int64
                  : value.is_floating() ? ScalarType::Float64
                                        : ScalarType::Complex128;
  Tensor t = empty_tensor({}, st, Device(), "wrap_scalar");
  fill_fresh(t, value);
  t.impl()->set_wrapped_number(true);
  return t;
}

Tensor& fill_fresh(Tensor& t, const Scalar& value) {
  EMBER_CHECK(!t.storage()->read_only(), "[fill_] cannot write to a read-only tensor");
  if (t.numel() > 0) {
    // One value everywhere: an expanded tensor may be filled (as PyTorch allows).
    auto iter = TensorIteratorConfig().name("fill_").add_output(t).check_mem_overlap(false).build();
    fill_stub(t.device(), iter, value);
  }
  return t;
}

Tensor& fill_(Tensor& t, const Scalar& value) {
  fill_fresh(t, value);
  t.bump_version();
  return t;
}

Tensor& zero_fresh(Tensor& t) {
  // Zero is all-zero bits in every dtype, so a contiguous CPU tensor is cleared with memset.
  if (t.is_contiguous() && t.device().is_cpu() && !t.storage()->read_only()) {
    std::memset(t.data_ptr(), 0, static_cast<size_t>(t.numel()) * t.itemsize());
    return t;
  }
  return fill_fresh(t, Scalar(int64_t(0)));
}

Tensor& zero_(Tensor& t) {
  zero_fresh(t);
  t.bump_version();
  return t;
}

const Tensor& resize_output(const Tensor& out, IntArrayRef sizes, const char* op) {
  if (out.sizes().equals(sizes)) return out;
  int64_t n = checked_numel(sizes, op);
  size_t need = checked_nbytes(n, out.itemsize(), op);
  size_t have_from = static_cast<size_t>(out.storage_offset()) * out.itemsize();
  if (out.storage()->nbytes() < have_from + need) {
    out.impl()->set_storage(make_intrusive<StorageImpl>(need, out.device(), op));
    out.impl()->set_geometry(sizes, contiguous_strides(sizes), 0);
  } else {
    out.impl()->set_geometry(sizes, contiguous_strides(sizes), out.storage_offset());
  }
  return out;
}

}  // namespace native
}  // namespace ember
