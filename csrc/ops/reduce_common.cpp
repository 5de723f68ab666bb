#include "ops/reduce_common.h"

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

int64_t ReduceDims::reduced_numel(IntArrayRef sizes) const {
  int64_t n = 1;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (mask[d]) n *= sizes[d];
  }
  return n;
}

ReduceDims make_reduce_dims(const Tensor& t, const std::optional<std::vector<int64_t>>& dims,
                            const char* op, bool empty_means_all) {
  ReduceDims r;
  const int64_t n = t.dim();
  r.mask.assign(std::max<int64_t>(n, 1), false);
  if (!dims || (dims->empty() && empty_means_all)) {
    r.all = true;
    std::fill(r.mask.begin(), r.mask.end(), true);
    return r;
  }
  for (int64_t d : *dims) {
    int64_t w = wrap_dim(d, n, op);
    EMBER_CHECK(!r.mask[w], "[", op, "] dim ", w, " appears multiple times in the list of dims");
    r.mask[w] = true;
  }
  r.specified = true;
  r.all = !dims->empty() && std::all_of(r.mask.begin(), r.mask.end(), [](bool b) { return b; });
  return r;
}

ReduceDims single_reduce_dim(const Tensor& t, int64_t dim, const char* op) {
  return make_reduce_dims(t, std::vector<int64_t>{dim}, op);
}

void check_reduction_nonempty(const Tensor& t, const ReduceDims& dims, const char* op,
                              const char* what) {
  if (t.numel() != 0) return;
  EMBER_CHECK(dims.specified, "[", op, "] ", what,
              ": Expected reduction dim to be specified for "
              "input.numel() == 0. Specify the reduction dim with the 'dim' argument.");
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK_T(IndexError, !(dims.mask[d] && t.size(d) == 0), "[", op, "] ", what,
                  ": Expected reduction dim ", d, " to have non-zero size.");
  }
}

DimVector reduced_shape(IntArrayRef sizes, const ReduceDims& dims, bool keepdim) {
  DimVector shape;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!dims.mask[d])
      shape.push_back(sizes[d]);
    else if (keepdim)
      shape.push_back(1);
  }
  return shape;
}

void check_reduction_out_dtype(const Tensor& out, ScalarType expected, const char* op) {
  check_out_dtype(out, expected, op);
}

namespace {

// The tensor a kernel writes for one output, in the result's final shape: `out` itself, or a new
// tensor; `copy` says the kernel result must then be cast or copied into out.
Tensor prepare_output(const Tensor& in, const ReduceDims& dims, bool keepdim, ScalarType dtype,
                      const Tensor& out, bool cast_out, const char* op, bool* copy) {
  DimVector shape = reduced_shape(in.sizes(), dims, keepdim);
  *copy = false;
  if (!out.defined()) return empty_tensor(shape, dtype, in.device(), op);
  EMBER_CHECK(!out.storage()->read_only(), "[", op,
              "] cannot write to a tensor backed by a read-only NumPy array");
  if (out.dtype() != dtype && !cast_out) check_reduction_out_dtype(out, dtype, op);
  // An out= that shares memory with the input (sum(t, 0, out=t)) is written only after the
  // input has been read (finish_one): resizing it first would change the input under the kernel.
  if (out.storage() == in.storage()) {
    *copy = true;
    return empty_tensor(shape, dtype, in.device(), op);
  }
  resize_output(out, shape, op);
  if (out.dtype() != dtype) {
    *copy = true;
    return empty_tensor(shape, dtype, in.device(), op);
  }
  // A non-contiguous out= tensor could alias itself; compute into a fresh one.
  if (!out.is_contiguous()) {
    *copy = true;
    return empty_tensor(shape, dtype, in.device(), op);
  }
  return out;
}

// `result` (final shape) seen in the input's shape with zero strides over the reduced dims. A
// single element needs no view: the iterator broadcasts it.
Tensor reduction_view(const Tensor& result, const Tensor& in, const ReduceDims& dims,
                      bool keepdim) {
  if (result.numel() == 1) return result;
  DimVector strides(static_cast<size_t>(in.dim()));
  int64_t rd = 0;  // result dim matching input dim d
  for (int64_t d = 0; d < in.dim(); ++d) {
    if (dims.mask[d]) {
      strides[d] = 0;
      if (keepdim) ++rd;
    } else {
      strides[d] = result.stride(rd++);
    }
  }
  return make_view(result, in.sizes(), strides, result.storage_offset());
}

Tensor finish_one(const Tensor& result, const Tensor& out, bool copy) {
  if (!out.defined()) return result;
  if (copy) {
    resize_output(out, result.sizes(), "reduction");
    copy_into(out, result, "reduction");
  }
  out.bump_version();
  return out;
}

}  // namespace

Reduction make_reduction(const Tensor& in, const ReduceDims& dims, bool keepdim,
                         ScalarType out_dtype, const char* op, const Tensor& out, bool cast_out) {
  Reduction r;
  r.out = out;
  r.result = prepare_output(in, dims, keepdim, out_dtype, out, cast_out, op, &r.copy_out);
  r.iter = TensorIteratorConfig()
               .name(op)
               .add_output(reduction_view(r.result, in, dims, keepdim))
               .add_input(in)
               .check_all_same_dtype(false)
               .static_shape(in.sizes())
               .is_reduction(true)
               .build();
  return r;
}

Reduction make_reduction2(const Tensor& in, const ReduceDims& dims, bool keepdim, ScalarType dtype0,
                          ScalarType dtype1, const char* op, const Tensor& out0, const Tensor& out1,
                          bool cast_out) {
  Reduction r;
  r.out = out0;
  r.out2 = out1;
  r.result = prepare_output(in, dims, keepdim, dtype0, out0, cast_out, op, &r.copy_out);
  r.result2 = prepare_output(in, dims, keepdim, dtype1, out1, cast_out, op, &r.copy_out2);
  r.iter = TensorIteratorConfig()
               .name(op)
               .add_output(reduction_view(r.result, in, dims, keepdim))
               .add_output(reduction_view(r.result2, in, dims, keepdim))
               .add_input(in)
               .check_all_same_dtype(false)
               .static_shape(in.sizes())
               .is_reduction(true)
               .build();
  return r;
}

Tensor finish_reduction(const Reduction& r, const ReduceDims& dims, bool keepdim,
                        const Tensor& out) {
  return finish_one(r.result, out.defined() ? out : r.out, r.copy_out);
}

std::pair<Tensor, Tensor> finish_reduction2(const Reduction& r, const ReduceDims& dims,
                                            bool keepdim) {
  return {finish_one(r.result, r.out, r.copy_out), finish_one(r.result2, r.out2, r.copy_out2)};
}

}  // namespace native
}  // namespace ember

#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {

TensorIterator make_dim_iterator(std::initializer_list<Tensor> outputs, const Tensor& in,
                                 int64_t dim, const char* op, DimWalk* walk) {
  EMBER_CHECK(outputs.size() + 1 <= 3, "[", op, "] at most two outputs");
  walk->size = in.size(dim);
  auto restride = [&](const Tensor& t) {
    DimVector sizes(t.sizes());
    sizes[dim] = 1;
    return make_view(t, sizes, t.strides(), t.storage_offset());
  };
  TensorIteratorConfig cfg;
  cfg.name(op).check_all_same_dtype(false).is_reduction(false);
  int i = 0;
  for (const Tensor& o : outputs) {
    walk->strides[i++] = o.size(dim) > 1 ? o.stride(dim) * static_cast<int64_t>(o.itemsize()) : 0;
    cfg.add_output(restride(o));
  }
  walk->strides[i] = in.stride(dim) * static_cast<int64_t>(in.itemsize());
  cfg.add_input(restride(in));
  return cfg.build();
}

}  // namespace native
}  // namespace ember
