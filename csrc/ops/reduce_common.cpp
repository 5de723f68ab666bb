#include "ops/reduce_common.h"

#include "core/factory.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/views.h"

namespace ember {

ReduceDims make_reduce_dims(const Tensor& t, const std::optional<std::vector<int64_t>>& dims,
                            const char* op) {
  ReduceDims r;
  const int64_t n = t.dim();
  r.mask.assign(std::max<int64_t>(n, 1), false);
  if (!dims || dims->empty()) {
    r.all = true;
    std::fill(r.mask.begin(), r.mask.end(), true);
    return r;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, n, op);
    EMBER_CHECK(!r.mask[w], "[", op, "] dim ", w, " appears multiple times in the list of dims");
    r.mask[w] = true;
  }
  return r;
}

DimVector reduced_shape(IntArrayRef sizes, const ReduceDims& dims, bool keepdim) {
  DimVector shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!dims.mask[d]) shape.push_back(sizes[d]);
    else if (keepdim) shape.push_back(1);
  }
  return shape;
}

Reduction make_reduction(const Tensor& in, const ReduceDims& dims, bool keepdim,
                         ScalarType out_dtype, const char* op, const Tensor& out) {
  Reduction r;
  DimVector final_shape = reduced_shape(in.sizes(), dims, keepdim);
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == out_dtype, "[", op, "] Expected out tensor to have dtype ",
                dtype_name(out_dtype), ", but got ", dtype_name(out.dtype()), " instead");
    resize_output(out, final_shape, op);
    r.result = out;
  } else {
    r.result = empty_tensor(final_shape, out_dtype, in.device(), op);
  }
  // The result seen through zero strides over reduced dims, in the input's shape.
  DimVector strides(in.dim());
  int64_t rd = 0;
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (dims.mask[d]) {
      strides[d] = 0;
      if (keepdim) ++rd;
    } else {
      strides[d] = r.result.stride(rd++);
    }
  }
  // A single output element needs no view: the iterator broadcasts it with zero strides.
  Tensor out_view = r.result.numel() == 1
                        ? r.result
                        : make_view(r.result, in.sizes(), strides, r.result.storage_offset());
  r.iter = TensorIteratorConfig()
               .name(op)
               .add_output(out_view)
               .add_input(in)
               .check_all_same_dtype(false)
               .static_shape(in.sizes())
               .is_reduction(true)
               .build();
  return r;
}

Tensor finish_reduction(const Reduction& r, const ReduceDims& dims, bool keepdim,
                        const Tensor& out) {
  if (out.defined()) {
    out.bump_version();
    return out;
  }
  return r.result;
}

}  // namespace ember
