#include "ops/shape_util.h"

#include <algorithm>
#include <cstring>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(gather_slices_stub, GatherSlicesFn);

const char* torch_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "Bool";
    case ScalarType::UInt8:
      return "Byte";
    case ScalarType::Int8:
      return "Char";
    case ScalarType::Int16:
      return "Short";
    case ScalarType::Int32:
      return "Int";
    case ScalarType::Int64:
      return "Long";
    case ScalarType::Float16:
      return "Half";
    case ScalarType::BFloat16:
      return "BFloat16";
    case ScalarType::Float32:
      return "Float";
    case ScalarType::Float64:
      return "Double";
    case ScalarType::Complex64:
      return "ComplexFloat";
    case ScalarType::Complex128:
      return "ComplexDouble";
    default:
      return "Undefined";
  }
}

const char* torch_cpp_type_name(ScalarType t) {
  switch (t) {
    case ScalarType::Bool:
      return "bool";
    case ScalarType::UInt8:
      return "unsigned char";
    case ScalarType::Int8:
      return "signed char";
    case ScalarType::Int16:
      return "short int";
    case ScalarType::Int32:
      return "int";
    case ScalarType::Int64:
      return "long int";
    case ScalarType::Float16:
      return "c10::Half";
    case ScalarType::BFloat16:
      return "c10::BFloat16";
    case ScalarType::Float32:
      return "float";
    case ScalarType::Float64:
      return "double";
    case ScalarType::Complex64:
      return "c10::complex<float>";
    case ScalarType::Complex128:
      return "c10::complex<double>";
    default:
      return "undefined";
  }
}

void check_out_dtype(const Tensor& out, ScalarType dtype, const char* op) {
  EMBER_CHECK(out.dtype() == dtype, "[", op, "] Expected out tensor to have dtype ",
              torch_cpp_type_name(dtype), ", but got ", torch_cpp_type_name(out.dtype()),
              " instead");
}

Tensor finish_out(const Tensor& result, const Tensor& out, const char* op) {
  if (!out.defined()) return result;
  if (out.is_same(result)) return out;
  check_out_dtype(out, result.dtype(), op);
  resize_output(out, result.sizes(), op);
  copy_into(out, result, op);
  return out;
}

Tensor diagonal_view(const Tensor& t, int64_t offset, int64_t dim1, int64_t dim2) {
  DimVector sizes, strides;
  for (int64_t d = 0; d < t.dim(); ++d) {
    if (d == dim1 || d == dim2) continue;
    sizes.push_back(t.size(d));
    strides.push_back(t.stride(d));
  }
  int64_t start = t.storage_offset();
  int64_t len;
  if (offset >= 0) {
    len = std::max<int64_t>(std::min(t.size(dim1), t.size(dim2) - offset), 0);
    if (len > 0) start += offset * t.stride(dim2);
  } else {
    len = std::max<int64_t>(std::min(t.size(dim1) + offset, t.size(dim2)), 0);
    if (len > 0) start -= offset * t.stride(dim1);
  }
  sizes.push_back(len);
  strides.push_back(t.stride(dim1) + t.stride(dim2));
  return make_view(t, sizes, strides, start);
}

Tensor gather_slices(const Tensor& src, int64_t dim, const std::vector<int64_t>& index,
                     const char* op) {
  DimVector shape(src.sizes());
  shape[dim] = static_cast<int64_t>(index.size());
  Tensor out = empty_tensor(shape, src.dtype(), src.device(), op);
  if (out.numel() == 0) return out;
  Tensor in = contiguous(src);
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d) outer *= src.size(d);
  for (int64_t d = dim + 1; d < src.dim(); ++d) inner *= src.size(d);
  gather_slices_stub(src.device(), static_cast<char*>(out.data_ptr()),
                     static_cast<const char*>(in.data_ptr()), outer, src.size(dim), index.data(),
                     static_cast<int64_t>(index.size()), inner * int64_t(src.itemsize()));
  return out;
}

Tensor int64_tensor(const std::vector<int64_t>& v) {
  Tensor t =
      empty_tensor({static_cast<int64_t>(v.size())}, ScalarType::Int64, Device(), "int64_tensor");
  if (!v.empty()) std::memcpy(t.data_ptr(), v.data(), v.size() * sizeof(int64_t));
  return t;
}

std::string torch_shape_str(IntArrayRef sizes) {
  std::string s = "[";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  return s + "]";
}

}  // namespace native
}  // namespace ember
