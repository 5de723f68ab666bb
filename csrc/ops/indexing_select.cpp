// index_select, index_add, index_copy, index_fill: ops along one dim with a 1-d (or 0-d) index.
// Geometry per Note [Indexing through restrided views] (ops/indexing_engine.h): the iteration
// shape is self's (or source's) shape with `dim` sized by the index; the index is restrided to
// move only along `dim`.
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"
#include "ops/creation.h"
#include "ops/elementwise.h"
#include "ops/indexing.h"
#include "ops/indexing_engine.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

Tensor as_at_least_1d(const Tensor& t) {
  if (t.dim() > 0) return t;
  return make_view(t, {1}, {1}, t.storage_offset());
}

// The index as a 1-d int64 tensor.
Tensor index_vector(const Tensor& index) {
  return as_at_least_1d(to_long_index(index));
}

// `index` (1-d) viewed with `shape`, moving only along dim d.
Tensor index_along(const Tensor& index, IntArrayRef shape, int64_t d) {
  DimVector strides(shape.size(), 0);
  strides[d] = index.stride(0);
  return restride(index, shape, strides);
}

// `t` viewed with `shape`, not moving along dim d (the index supplies that offset).
Tensor without_dim(const Tensor& t, IntArrayRef shape, int64_t d) {
  DimVector strides(t.strides());
  strides[d] = 0;
  return restride(t, shape, strides);
}

// Shared by index_add_ / index_copy_: writes source's slices into self along dim with `put`.
void put_along_dim(const Tensor& self, int64_t d, const Tensor& idx, const Tensor& source,
                   PutOp put, const char* op) {
  const Tensor s = as_at_least_1d(self);
  Tensor src = as_at_least_1d(source);
  Tensor index = idx;
  if (shares_storage(src, self)) src = clone(src);
  if (shares_storage(index, self)) index = clone(index);
  if (src.numel() > 0) {
    launch_put(s, without_dim(s, src.sizes(), d), src, {index_along(index, src.sizes(), d)},
               {s.size(d)}, {s.stride(d)}, put, op);
  }
  self.bump_version();
}

}  // namespace

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  const char* op = "index_select";
  if (is_quantized(self.dtype())) {
    const Quantizer& q = quantizer_of(self, op);
    EMBER_CHECK(!out.defined(), "[", op, "] out= is not supported for quantized tensors");
    EMBER_CHECK(!q.per_channel() || wrap_dim(dim, self.dim(), op) != q.axis(), "[", op,
                "] selecting along the channel axis of a per-channel quantized tensor: "
                "dequantize() first");
    return on_quantized_integers(
        {self}, op,
        [&](const std::vector<Tensor>& ints) {
          return index_select(ints[0], dim, index, Tensor());
        },
        /*per_channel_ok=*/true);
  }
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, "[", op,
              "] index_select(): Expected dtype int32 or int64 for index");
  EMBER_CHECK_T(IndexError, index.dim() <= 1, "[", op,
                "] index_select(): Index is supposed to be a vector");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  if (self.dim() == 0) {
    EMBER_CHECK(index.numel() == 1, "[", op,
                "] index_select(): Index to scalar can have only 1 "
                "value, got ",
                index.numel(), " value(s)");
  }
  const Tensor s = as_at_least_1d(self);
  const Tensor idx = index_vector(index);
  const std::vector<IndexCheck> checks{{idx,
                                        {op, d, s.size(d), /*allow_negative=*/false,
                                         /*index_error=*/true, BoundsStyle::OutOfRangeInSelf}}};
  DimVector shape(self.sizes());
  if (self.dim() > 0) shape[d] = idx.size(0);

  Tensor result = out;
  if (out.defined()) {
    check_index_bounds(idx, checks[0].spec);  // out is visible: validate before writing
    prepare_out(out, self.dtype(), shape, op);
    if (shares_storage(out, self) || shares_storage(out, index)) result = Tensor();
  }
  if (!result.defined()) result = empty_tensor(shape, self.dtype(), self.device(), op);
  const Tensor r1 = as_at_least_1d(result);
  launch_gather(r1, without_dim(s, r1.sizes(), d), {index_along(idx, r1.sizes(), d)}, {s.size(d)},
                {s.stride(d)}, op, out.defined() ? nullptr : &checks);
  if (out.defined()) {
    if (!result.is_same(out)) copy_into(out, result, op);
    out.bump_version();
    return out;
  }
  return result;
}

Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha) {
  const char* op = "index_add_";
  check_writable(self, op);
  assert_no_internal_overlap(self, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK_T(IndexError, index.dim() <= 1, "[", op,
                "] index_add_(): Index is supposed to be "
                "a vector, but got dim: ",
                index.dim(), " with type: ", dtype_name(index.dtype()),
                " and size: ", list_str(index.sizes()));
  EMBER_CHECK(
      index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, "[", op,
      "] index_add_(): Expected dtype int32/int64 for index but got: ", dtype_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "[", op, "] index_add_(): self (",
              dtype_name(self.dtype()), ") and source (", dtype_name(source.dtype()),
              ") must have the same scalar type");
  EMBER_CHECK(source.dim() == 0 || d < source.dim(), "[", op, "] index_add_(): Indexing dim ", d,
              " is out of bounds of the source tensor with dim ", source.dim());
  const int64_t source_len = source.dim() == 0 ? 1 : source.size(d);
  EMBER_CHECK(index.numel() == source_len, "[", op, "] index_add_(): Number of indices (",
              index.numel(), ") should be equal to source.size(dim): (", source_len,
              "), for dim: ", d);
  bool same_shape = self.dim() == source.dim();
  for (int64_t k = 0; same_shape && k < self.dim(); ++k) {
    same_shape = k == d || self.size(k) == source.size(k);
  }
  EMBER_CHECK(same_shape, "[", op,
              "] source tensor shape must match self tensor shape, "
              "excluding the specified dimension. Got self.shape = ",
              list_str(self.sizes()), " source.shape = ", list_str(source.sizes()));
  const Tensor idx = index_vector(index);
  check_index_bounds(idx, {op, d, as_at_least_1d(self).size(d), /*allow_negative=*/false,
                           /*index_error=*/true, BoundsStyle::OutOfRangeInSelf});
  Tensor src = source;
  if (self.dtype() == ScalarType::Bool) {
    if (!alpha.to_bool()) {  // adding false changes nothing
      self.bump_version();
      return self;
    }
  } else if (!(alpha.is_integral() && alpha.to_int64() == 1)) {
    src = mul(source, scalar_tensor(alpha, self.dtype()));
  }
  put_along_dim(self, d, idx, src, PutOp::Add, op);
  return self;
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha, const Tensor& out) {
  return functional_from_inplace(self, out, "index_add",
                                 [&](Tensor& t) { index_add_(t, dim, index, source, alpha); });
}

Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  const char* op = "index_copy_";
  check_writable(self, op);
  assert_no_internal_overlap(self, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK_T(IndexError, index.dim() <= 1, "[", op,
                "] index_copy_(): Index should have "
                "dimension 1 or 0 (got ",
                index.dim(), ")");
  const int64_t num_indices = index.numel();
  EMBER_CHECK_T(IndexError, source.dim() != 0 || num_indices == 1, "[", op,
                "] index_copy_(): "
                "When source is scalar, index should have one element (got ",
                num_indices, ")");
  EMBER_CHECK_T(IndexError, source.dim() == self.dim() || source.dim() == 0 || self.dim() == 0, "[",
                op,
                "] index_copy_(): When source and destination are not scalars, their "
                "dimensionality must match. Source dimensionality (",
                source.dim(), "), destination dimensionality (", self.dim(), ")");
  EMBER_CHECK(index.dtype() == ScalarType::Int64, "[", op,
              "] index_copy_(): Expected a long "
              "tensor for index, but got ",
              dtype_name(index.dtype()));
  EMBER_CHECK(self.dtype() == source.dtype(), "[", op,
              "] index_copy_(): self and source "
              "expected to have the same dtype, but got (self) ",
              dtype_name(self.dtype()), " and (source) ", dtype_name(source.dtype()));
  // The slices (all dims but `dim`) must agree.
  DimVector self_slice(self.sizes()), source_slice(source.sizes());
  if (self.dim() > 0) self_slice.erase(d);
  if (source.dim() > 0) source_slice.erase(std::min<int64_t>(d, source.dim() - 1));
  if (!IntArrayRef(self_slice).equals(source_slice)) {
    auto join = [](IntArrayRef v) {
      std::string r;
      for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
      return r;
    };
    EMBER_THROW(Error, "[", op,
                "] index_copy_(): Source/destination tensor must have same slice "
                "shapes. Destination slice shape: ",
                join(self_slice), " at dimension ", d,
                " and source slice shape: ", join(source_slice), " at dimension 0.");
  }
  EMBER_CHECK_T(IndexError, source.dim() == 0 || num_indices == source.size(d), "[", op,
                "] index_copy_(): Number of indices (", num_indices,
                ") should be equal to source.size(dim) (", source.dim() == 0 ? 1 : source.size(d),
                ")");
  const Tensor idx = index_vector(index);
  check_index_bounds(idx, {op, d, as_at_least_1d(self).size(d), /*allow_negative=*/false,
                           /*index_error=*/true, BoundsStyle::OutOfBounds, "index_copy_(): "});
  put_along_dim(self, d, idx, source, PutOp::Assign, op);
  return self;
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out) {
  return functional_from_inplace(self, out, "index_copy",
                                 [&](Tensor& t) { index_copy_(t, dim, index, source); });
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  const char* op = "index_fill_";
  EMBER_CHECK(value.dim() == 0, "[", op,
              "] index_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  check_writable(self, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  EMBER_CHECK_T(IndexError, index.dtype() == ScalarType::Int64, "[", op,
                "] index_fill_(): Expected dtype int64 for index.");
  EMBER_CHECK(index.dim() <= 1, "[", op, "] Index has to be a vector/scalar");
  const Tensor s = as_at_least_1d(self);
  const Tensor idx = index_vector(index);
  check_index_bounds(idx, {op, d, s.size(d), /*allow_negative=*/true, /*index_error=*/true});
  Tensor v = value.dtype() == self.dtype() ? value : to_dtype(value, self.dtype());
  if (shares_storage(v, self)) v = clone(v);
  DimVector shape(s.sizes());
  shape[d] = idx.size(0);
  if (idx.numel() > 0 && s.numel() > 0) {
    launch_put(s, without_dim(s, shape, d), restride(v, shape, DimVector(shape.size(), 0)),
               {index_along(idx, shape, d)}, {s.size(d)}, {s.stride(d)}, PutOp::Assign, op);
  }
  self.bump_version();
  return self;
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  return index_fill_(self, dim, index, scalar_tensor(value, self.dtype()));
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  Tensor r = clone(self);
  index_fill_(r, dim, index, value);
  return r;
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  Tensor r = clone(self);
  index_fill_(r, dim, index, value);
  return r;
}

}  // namespace native
}  // namespace ember
