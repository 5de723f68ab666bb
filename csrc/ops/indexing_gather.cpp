// gather, take, take_along_dim and the scatter family (scatter, scatter_add, scatter_reduce).
// Geometry per Note [Indexing through restrided views] (ops/indexing_engine.h): the iteration
// shape is the index's shape, and self / src are restrided to it with stride 0 along `dim`.
#include <limits>

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

namespace {

// 0-d tensors take part as 1-element 1-d tensors (PyTorch's ensure_nonempty_dim).
Tensor as_at_least_1d(const Tensor& t) {
  if (t.dim() > 0) return t;
  return make_view(t, {1}, {1}, t.storage_offset());
}

void check_index_dtype_32_64(const Tensor& index, const char* op) {
  EMBER_CHECK(index.dtype() == ScalarType::Int64 || index.dtype() == ScalarType::Int32, "[", op,
              "] ", op, "(): Expected dtype int32/int64 for index");
}

// gather with PyTorch's checks; `allow_negative` serves take_along_dim, whose indices wrap.
Tensor gather_impl(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& out,
                   bool allow_negative, const char* op) {
  check_index_dtype_32_64(index_in, "gather");
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const Tensor s = as_at_least_1d(self);
  const Tensor index = as_at_least_1d(to_long_index(index_in));
  EMBER_CHECK(s.dim() == index.dim(), "[", op,
              "] Index tensor must have the same number of dimensions as input tensor");
  for (int64_t k = 0; k < s.dim(); ++k) {
    EMBER_CHECK(k == d || index.size(k) <= s.size(k), "[", op,
                "] Size does not match at "
                "dimension ",
                k, " expected index ", list_str(index_in.sizes()), " to be no larger than self ",
                list_str(self.sizes()), " apart from dimension ", d);
  }
  const std::vector<IndexCheck> checks{{index,
                                        {op, d, s.size(d), allow_negative,
                                         /*index_error=*/false}}};
  Tensor result = out;
  if (out.defined()) {
    check_index_bounds(index, checks[0].spec);  // out is visible: validate before writing
    prepare_out(out, self.dtype(), index_in.sizes(), op);
    if (shares_storage(out, self) || shares_storage(out, index_in)) result = Tensor();
  }
  const bool fresh = !result.defined();
  if (fresh) result = empty_tensor(index_in.sizes(), self.dtype(), self.device(), op);
  DimVector strides(s.strides());
  strides[d] = 0;
  launch_gather(as_at_least_1d(result), restride(s, index.sizes(), strides), {index}, {s.size(d)},
                {s.stride(d)}, op, out.defined() ? nullptr : &checks);
  if (out.defined() && !result.is_same(out)) copy_into(out, result, op);
  if (out.defined()) out.bump_version();
  return out.defined() ? out : result;
}

enum class SrcKind { Tensor, Value };

// The in-place scatter core: self[... index[i] ...] op= src[i] along `dim`. With `check_only`
// it validates everything (shapes, dtypes, index bounds) and returns without writing.
void scatter_impl(const Tensor& self, int64_t dim, const Tensor& index_in, const Tensor& src_in,
                  SrcKind kind, PutOp put, const char* op, bool check_only = false) {
  check_writable(self, op);
  assert_no_internal_overlap(self, op);
  check_index_dtype_32_64(index_in, op);
  const int64_t d = wrap_dim(dim, self.dim(), op);
  const Tensor s = as_at_least_1d(self);
  Tensor index = as_at_least_1d(to_long_index(index_in));
  EMBER_CHECK(index.dim() == s.dim(), "[", op,
              "] Index tensor must have the same number of dimensions as self tensor");
  Tensor src = src_in;
  if (kind == SrcKind::Tensor) {
    EMBER_CHECK(src.dtype() == self.dtype(), "[", op, "] ", op,
                "(): Expected self.dtype to be equal to src.dtype");
    src = as_at_least_1d(src);
    EMBER_CHECK(index.dim() == src.dim(), "[", op,
                "] Index tensor must have the same number of dimensions as src tensor");
  }
  bool sizes_ok = true;
  for (int64_t k = 0; k < s.dim(); ++k) {
    if (k != d && index.size(k) > s.size(k)) sizes_ok = false;
    if (kind == SrcKind::Tensor && index.size(k) > src.size(k)) sizes_ok = false;
  }
  if (!sizes_ok) {
    if (kind == SrcKind::Tensor) {
      EMBER_THROW(Error, "[", op, "] Expected index ", list_str(index_in.sizes()),
                  " to be no larger than self ", list_str(self.sizes()), " apart from dimension ",
                  d, " and to be no larger size than src ", list_str(src_in.sizes()));
    }
    EMBER_THROW(Error, "[", op, "] Expected index ", list_str(index_in.sizes()),
                " to be no larger than self ", list_str(self.sizes()), " apart from dimension ", d);
  }
  check_index_bounds(index, {op, d, s.size(d), /*allow_negative=*/false, /*index_error=*/false});
  if (check_only || index.numel() == 0) return;
  if (shares_storage(index, self)) index = clone(index);
  if (kind == SrcKind::Tensor && shares_storage(src, self)) src = clone(src);

  DimVector dst_strides(s.strides());
  dst_strides[d] = 0;
  Tensor src_view = kind == SrcKind::Tensor
                        ? restride(src, index.sizes(), src.strides())
                        : restride(src, index.sizes(), DimVector(index.dim(), 0));
  launch_put(s, restride(s, index.sizes(), dst_strides), src_view, {index}, {s.size(d)},
             {s.stride(d)}, put, op);
  self.bump_version();
}

PutOp scatter_reduce_op(const std::string& reduce, const char* op) {
  if (reduce.empty()) return PutOp::Assign;
  if (reduce == "add") return PutOp::Add;
  if (reduce == "multiply") return PutOp::Multiply;
  EMBER_THROW(Error, "[", op, "] reduce argument must be either add or multiply.");
}

// The value scatter_reduce(include_self=False) first writes into every target position, so that
// only the scattered values take part.
Scalar reduce_identity(const std::string& reduce, ScalarType dtype) {
  if (reduce == "prod") return Scalar(int64_t(1));
  if (reduce == "sum" || reduce == "mean") return Scalar(int64_t(0));
  const bool is_max = reduce == "amax";
  if (dtype == ScalarType::Bool) return Scalar(!is_max);
  if (is_floating(dtype)) {
    const double inf = std::numeric_limits<double>::infinity();
    return Scalar(is_max ? -inf : inf);
  }
  switch (dtype) {
    case ScalarType::UInt8:
      return Scalar(int64_t(is_max ? 0 : 255));
    case ScalarType::Int8:
      return Scalar(int64_t(is_max ? -128 : 127));
    case ScalarType::Int16:
      return Scalar(int64_t(is_max ? -32768 : 32767));
    case ScalarType::Int32:
      return Scalar(int64_t(is_max ? std::numeric_limits<int32_t>::min()
                                   : std::numeric_limits<int32_t>::max()));
    default:
      return Scalar(is_max ? std::numeric_limits<int64_t>::min()
                           : std::numeric_limits<int64_t>::max());
  }
}

}  // namespace

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (is_quantized(self.dtype())) {  // the integers, with the same parameters
    EMBER_CHECK(!out.defined(), "[gather] out= is not supported for quantized tensors");
    return on_quantized_integers({self}, "gather", [&](const std::vector<Tensor>& ints) {
      return gather(ints[0], dim, index, Tensor());
    });
  }
  return gather_impl(self, dim, index, out, /*allow_negative=*/false, "gather");
}

Tensor take(const Tensor& self, const Tensor& index, const Tensor& out) {
  if (is_quantized(self.dtype())) {  // the integers, with the same parameters
    EMBER_CHECK(!out.defined(), "[take] out= is not supported for quantized tensors");
    return on_quantized_integers({self}, "take", [&](const std::vector<Tensor>& ints) {
      return take(ints[0], index, Tensor());
    });
  }
  const char* op = "take";
  EMBER_CHECK(index.dtype() == ScalarType::Int64,
              "[take] take(): Expected a long tensor for index, but got ",
              dtype_name(index.dtype()));
  const Tensor flat = reshape(self, {-1});
  const std::vector<IndexCheck> checks{{index,
                                        {op, 0, flat.numel(), /*allow_negative=*/true,
                                         /*index_error=*/true, BoundsStyle::Take}}};
  Tensor result = out;
  if (out.defined()) {
    check_index_bounds(index, checks[0].spec);  // out is visible: validate before writing
    prepare_out(out, self.dtype(), index.sizes(), op);
    if (shares_storage(out, self) || shares_storage(out, index)) result = Tensor();
  }
  if (!result.defined()) result = empty_tensor(index.sizes(), self.dtype(), self.device(), op);
  launch_gather(result, restride(flat, index.sizes(), DimVector(index.dim(), 0)), {index},
                {flat.numel()}, {flat.stride(0)}, op, out.defined() ? nullptr : &checks);
  if (!out.defined()) return result;
  if (!result.is_same(out)) copy_into(out, result, op);
  out.bump_version();
  return out;
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out) {
  const char* op = "take_along_dim";
  EMBER_CHECK(indices.dtype() == ScalarType::Int64, "[", op,
              "] torch.take_along_dim(): dtype of "
              "indices should be Long but got ",
              dtype_name(indices.dtype()));
  if (!dim) {
    return gather_impl(reshape(self, {-1}), 0, reshape(indices, {-1}), out,
                       /*allow_negative=*/false, op);
  }
  EMBER_CHECK_T(IndexError, self.dim() > 0, "[", op, "] Dimension specified as ", *dim,
                " but tensor has no dimensions");
  const int64_t d = wrap_dim(*dim, self.dim(), op);
  EMBER_CHECK(self.dim() == indices.dim(), "[", op,
              "] torch.take_along_dim(): input and indices "
              "should have the same number of dimensions, but got ",
              self.dim(), " dimensions for input, and ", indices.dim(), " dimensions for indices");
  // Broadcast every dim but `dim` between self and indices (PyTorch's _take_along_dim_helper).
  DimVector self_sizes(self.sizes()), index_sizes(indices.sizes());
  self_sizes[d] = indices.size(d);
  Tensor idx = expand(indices, broadcast_shapes(self_sizes, indices.sizes(), op));
  index_sizes[d] = self.size(d);
  Tensor src = expand(self, broadcast_shapes(index_sizes, self.sizes(), op));
  return gather_impl(src, d, idx, out, /*allow_negative=*/true, op);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce) {
  scatter_impl(self, dim, index, src, SrcKind::Tensor, scatter_reduce_op(reduce, "scatter"),
               "scatter");
  return self;
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const std::string& reduce) {
  PutOp put = scatter_reduce_op(reduce, "scatter");
  scatter_impl(self, dim, index, scalar_tensor(value, self.dtype()), SrcKind::Value, put,
               "scatter");
  return self;
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce, const Tensor& out) {
  return functional_from_inplace(self, out, "scatter",
                                 [&](Tensor& t) { scatter_(t, dim, index, src, reduce); });
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce, const Tensor& out) {
  return functional_from_inplace(self, out, "scatter",
                                 [&](Tensor& t) { scatter_(t, dim, index, value, reduce); });
}

Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  scatter_impl(self, dim, index, src, SrcKind::Tensor, PutOp::Add, "scatter_add");
  return self;
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const Tensor& out) {
  return functional_from_inplace(self, out, "scatter_add",
                                 [&](Tensor& t) { scatter_add_(t, dim, index, src); });
}

Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self) {
  const char* op = "scatter_reduce";
  PutOp put;
  if (reduce == "sum" || reduce == "mean")
    put = PutOp::Add;
  else if (reduce == "prod")
    put = PutOp::Multiply;
  else if (reduce == "amax")
    put = PutOp::Max;
  else if (reduce == "amin")
    put = PutOp::Min;
  else
    EMBER_THROW(Error, "[", op,
                "] reduce argument must be either sum, prod, mean, amax or "
                "amin, got ",
                reduce);
  const ScalarType dt = self.dtype();
  EMBER_CHECK_T(NotImplementedError, !(reduce == "mean" && dt == ScalarType::Bool), "[", op,
                "] reduce='mean' is not implemented for dtype bool");
  EMBER_CHECK_T(NotImplementedError, !((put == PutOp::Max || put == PutOp::Min) && is_complex(dt)),
                "[", op, "] reduce='", reduce, "' is not implemented for dtype ", dtype_name(dt));
  Tensor idx = index, s = src;
  if (shares_storage(idx, self)) idx = clone(idx);
  if (shares_storage(s, self)) s = clone(s);
  // Everything is validated before the first write (include_self=False writes twice).
  scatter_impl(self, dim, idx, s, SrcKind::Tensor, put, op, /*check_only=*/true);
  if (!include_self) {
    scatter_impl(self, dim, idx, scalar_tensor(reduce_identity(reduce, dt), dt), SrcKind::Value,
                 PutOp::Assign, op);
  }
  scatter_impl(self, dim, idx, s, SrcKind::Tensor, put, op);
  if (reduce == "mean") {
    Tensor count = full(self.sizes(), Scalar(int64_t(include_self ? 1 : 0)), ScalarType::Int64);
    scatter_impl(count, dim, idx, scalar_tensor(Scalar(int64_t(1)), ScalarType::Int64),
                 SrcKind::Value, PutOp::Add, op);
    if (self.numel() > 0) {
      auto iter = TensorIteratorConfig()
                      .name(op)
                      .add_output(self)
                      .add_input(count)
                      .check_all_same_dtype(false)
                      .build();
      scatter_mean_stub(self.device(), iter);
    }
  }
  return self;
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self, const Tensor& out) {
  return functional_from_inplace(self, out, "scatter_reduce", [&](Tensor& t) {
    scatter_reduce_(t, dim, index, src, reduce, include_self);
  });
}

}  // namespace native
}  // namespace ember
