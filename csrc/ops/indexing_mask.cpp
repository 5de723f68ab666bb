// masked_fill, masked_select, masked_scatter, nonzero and argwhere.
#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "dispatch/mem_overlap.h"
#include "dispatch/tensor_iterator.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/indexing_engine.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(masked_fill_stub, MaskedFillFn);
EMBER_DEFINE_STUB(count_true_stub, CountTrueFn);
EMBER_DEFINE_STUB(masked_select_stub, MaskedSelectFn);
EMBER_DEFINE_STUB(nonzero_stub, NonzeroFn);

namespace {

// A contiguous copy of t broadcast to `shape` (t itself when nothing needs to change).
Tensor dense_broadcast(const Tensor& t, IntArrayRef shape) {
  if (t.sizes().equals(shape) && t.is_contiguous()) return t;
  Tensor out = empty_tensor(shape, t.dtype(), t.device(), "broadcast");
  copy_into(out, expand(t, shape), "broadcast");
  return out;
}

// A contiguous bool tensor holding whether each element of t is non-zero.
Tensor as_dense_bool(const Tensor& t) {
  if (t.dtype() == ScalarType::Bool) return contiguous(t);
  return converted_copy(t, ScalarType::Bool, "nonzero");
}

void check_bool_mask(const Tensor& mask, const char* op) {
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "[", op, "] ", op,
              " only supports boolean "
              "masks, but got mask with dtype ",
              dtype_name(mask.dtype()));
}

}  // namespace

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  const char* op = "masked_fill_";
  check_bool_mask(mask, op);
  EMBER_CHECK(value.dim() == 0, "[", op,
              "] masked_fill_ only supports a 0-dimensional value "
              "tensor, but got tensor with ",
              value.dim(), " dimension(s).");
  check_writable(self, op);
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  EMBER_CHECK(self.sizes().equals(shape), "[", op, "] output with shape ", list_str(self.sizes()),
              " doesn't match the broadcast shape ", list_str(shape));
  const Tensor v = contiguous(to_dtype(value, self.dtype()));
  if (self.numel() > 0) {
    auto iter = TensorIteratorConfig()
                    .name(op)
                    .add_output(self)
                    .add_input(expand(mask, self.sizes()))
                    .check_all_same_dtype(false)
                    .build();
    masked_fill_stub(self.device(), iter, v.data_ptr());
  }
  self.bump_version();
  return self;
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  return masked_fill_(self, mask, scalar_tensor(value, self.dtype()));
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  check_bool_mask(mask, "masked_fill_");
  Tensor r = dense_broadcast(self, broadcast_shapes(self.sizes(), mask.sizes(), "masked_fill"));
  if (r.is_same(self)) r = clone(self);
  return masked_fill_(r, mask, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  check_bool_mask(mask, "masked_fill_");
  return masked_fill(self, mask, scalar_tensor(value, self.dtype()));
}

Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out) {
  if (is_quantized(self.dtype())) {  // the integers, with the same parameters
    EMBER_CHECK(!out.defined(), "[masked_select] out= is not supported for quantized tensors");
    return on_quantized_integers({self}, "masked_select", [&](const std::vector<Tensor>& ints) {
      return masked_select(ints[0], mask, Tensor());
    });
  }
  const char* op = "masked_select";
  EMBER_CHECK(mask.dtype() == ScalarType::Bool, "[", op,
              "] masked_select: expected BoolTensor "
              "for mask");
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == self.dtype(), "[", op,
                "] masked_select(): self and result must "
                "have the same scalar type");
  }
  DimVector shape = broadcast_shapes(self.sizes(), mask.sizes(), op);
  const Tensor s = dense_broadcast(self, shape);
  const Tensor m = dense_broadcast(mask, shape);
  const int64_t n = count_true_stub(self.device(), m);
  Tensor result = empty_tensor({n}, self.dtype(), self.device(), op);
  if (n > 0) masked_select_stub(self.device(), s, m, result);
  if (!out.defined()) return result;
  prepare_out(out, self.dtype(), {n}, op);
  copy_into(out, result, op);
  return out;
}

Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  const char* op = "masked_scatter_";
  check_bool_mask(mask, op);
  EMBER_CHECK(self.dtype() == source.dtype(), "[", op,
              "] masked_scatter: expected self and "
              "source to have same dtypes but got ",
              dtype_name(self.dtype()), " and ", dtype_name(source.dtype()));
  check_writable(self, op);
  assert_no_internal_overlap(self, op);
  const Tensor coords = nonzero(expand(mask, self.sizes()));
  const int64_t n = coords.size(0);
  EMBER_CHECK(source.numel() >= n, "[", op,
              "] Number of elements of source < number of ones in "
              "mask");
  if (n == 0) {
    self.bump_version();
    return self;
  }
  std::vector<Tensor> indices;
  for (int64_t d = 0; d < coords.size(1); ++d) indices.push_back(select(coords, 1, d));
  Tensor values = narrow(reshape(source, {-1}), 0, 0, n);
  index_put_(self, indices, values, /*accumulate=*/false);
  return self;
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  check_bool_mask(mask, "masked_scatter_");
  Tensor r = dense_broadcast(self, broadcast_shapes(self.sizes(), mask.sizes(), "masked_scatter"));
  if (r.is_same(self)) r = clone(self);
  return masked_scatter_(r, mask, source);
}

Tensor nonzero(const Tensor& self, const Tensor& out) {
  const char* op = "nonzero";
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == ScalarType::Int64, "[", op,
                "] nonzero: Expected out tensor to "
                "have scalar type Long but got scalar type ",
                dtype_name(out.dtype()));
  }
  const Tensor m = as_dense_bool(self);
  const int64_t n = count_true_stub(self.device(), m);
  Tensor result = empty_tensor({n, self.dim()}, ScalarType::Int64, self.device(), op);
  if (n > 0) nonzero_stub(self.device(), m, self.sizes(), result);
  if (!out.defined()) return result;
  prepare_out(out, ScalarType::Int64, result.sizes(), op);
  copy_into(out, result, op);
  return out;
}

std::vector<Tensor> nonzero_tuple(const Tensor& self) {
  // A 0-d input counts as 1-d, so the tuple has one entry ([0] or []).
  const Tensor s = self.dim() == 0 ? make_view(self, {1}, {1}, self.storage_offset()) : self;
  const Tensor coords = nonzero(s);
  std::vector<Tensor> out;
  for (int64_t d = 0; d < s.dim(); ++d) out.push_back(select(coords, 1, d));
  return out;
}

Tensor argwhere(const Tensor& self) {
  return nonzero(self);
}

}  // namespace native
}  // namespace ember
