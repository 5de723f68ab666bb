// Python-style indexing (getitem / setitem) and ATen-style index / index_put_.
//
// An index expression is applied in two phases, as PyTorch does: first every basic index (int,
// slice, None, Ellipsis, bool scalar) becomes a view op on `self`, while tensor indices are
// recorded against the dim of the view they address (bool masks become one int64 index per dim
// they cover); then, if any tensor index was recorded, one gather (or put) over the advanced
// indices runs. See Note [Indexing through restrided views] in ops/indexing_engine.h.
//
// The view ops of phase one are passed in (IndexViewOps): the api layer's recording getitem /
// setitem / index reuse phase one with view ops that record, so the view chain gets its history.
#include <algorithm>

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/indexing.h"
#include "ops/indexing_engine.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

bool is_mask_dtype(ScalarType t) {
  return t == ScalarType::Bool || t == ScalarType::UInt8;
}

void record(BasicIndexResult& r, int64_t dim, Tensor index) {
  if (static_cast<int64_t>(r.advanced.size()) <= dim) r.advanced.resize(dim + 1);
  r.advanced[dim] = std::move(index);
  r.has_advanced = true;
}

// Records a bool mask covering dims [dim, dim + mask.dim()) of r.view as one int64 index per dim.
void record_mask(BasicIndexResult& r, int64_t dim, const Tensor& mask_in, const char* op) {
  Tensor mask = mask_in.dtype() == ScalarType::Bool ? mask_in : to_dtype(mask_in, ScalarType::Bool);
  const Tensor& v = r.view;
  EMBER_CHECK_T(IndexError, dim + mask.dim() <= v.dim(), "[", op,
                "] too many indices for tensor of dimension ", v.dim());
  for (int64_t j = 0; j < mask.dim(); ++j) {
    EMBER_CHECK_T(IndexError, mask.size(j) == v.size(dim + j), "[", op, "] The shape of the mask ",
                  list_str(mask.sizes()), " at index ", j,
                  " does not match the shape of the indexed tensor ", list_str(v.sizes()),
                  " at index ", dim + j);
  }
  Tensor coords = nonzero(mask);  // (n, k), C order
  for (int64_t j = 0; j < mask.dim(); ++j) record(r, dim + j, select(coords, 1, j));
}

// A 0-d bool index adds a dim of size 1 that is then indexed by [0] (true) or [] (false).
void record_bool_scalar(BasicIndexResult& r, int64_t dim, bool value, const IndexViewOps& views) {
  r.view = views.unsqueeze(r.view, dim);
  Tensor idx = empty_tensor({value ? 1 : 0}, ScalarType::Int64, r.view.device(), "index");
  if (value) *idx.data<int64_t>() = 0;
  record(r, dim, idx);
}

int64_t tensor_as_integer(const Tensor& t) {
  return *to_dtype(t, ScalarType::Int64).data<int64_t>();
}

// Whether slice index `it` selects every element of a dim of `size` (start / stop normalised
// as slice() does).
bool covers_whole_dim(const TensorIndex& it, int64_t size) {
  if (it.step != 1) return false;
  int64_t s = it.start.value_or(0), e = it.stop.value_or(size);
  if (s < 0) s += size;
  if (e < 0) e += size;
  s = std::clamp<int64_t>(s, 0, size);
  e = std::clamp<int64_t>(e, s, size);
  return s == 0 && e == size;
}

}  // namespace

const IndexViewOps& native_index_view_ops() {
  static const IndexViewOps ops{
      [](const Tensor& t, int64_t dim) { return unsqueeze(t, dim); },
      [](const Tensor& t, int64_t dim, int64_t index) { return select(t, dim, index); },
      [](const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
         int64_t step) { return slice(t, dim, start, end, step); }};
  return ops;
}

// Phase one (see ops/indexing.h).
BasicIndexResult apply_basic_indices(const Tensor& self, const std::vector<TensorIndex>& index,
                                     const char* op, bool ints_as_select,
                                     const IndexViewOps& views) {
  using K = TensorIndex::Kind;
  int64_t specified = 0;
  bool seen_ellipsis = false;
  for (const TensorIndex& it : index) {
    switch (it.kind) {
      case K::Integer:
      case K::Slice:
        ++specified;
        break;
      case K::Tensor:
        specified += is_mask_dtype(it.tensor.dtype()) ? it.tensor.dim() : 1;
        break;
      case K::Ellipsis:
        EMBER_CHECK_T(IndexError, !seen_ellipsis, "[", op,
                      "] an index can only have a single ellipsis ('...')");
        seen_ellipsis = true;
        break;
      default:
        break;
    }
  }
  if (self.dim() == 0 && index.size() == 1 && index[0].kind == K::Integer) {
    EMBER_THROW(IndexError, "[", op,
                "] invalid index of a 0-dim tensor. Use `tensor.item()` in "
                "Python or `tensor.item<T>()` in C++ to convert a 0-dim tensor to a number");
  }
  EMBER_CHECK_T(IndexError, specified <= self.dim(), "[", op,
                "] too many indices for tensor of dimension ", self.dim());

  BasicIndexResult r;
  r.view = self;
  int64_t dim = 0;       // the dim of r.view the next index addresses
  int64_t real_dim = 0;  // the dim of self it corresponds to (for error messages)
  for (const TensorIndex& it : index) {
    switch (it.kind) {
      case K::None:
        r.view = views.unsqueeze(r.view, dim);
        ++dim;
        break;
      case K::Ellipsis: {
        const int64_t skipped = self.dim() - specified;
        dim += skipped;
        real_dim += skipped;
        break;
      }
      case K::Integer: {
        const int64_t size = r.view.size(dim);
        EMBER_CHECK_T(IndexError, it.integer >= -size && it.integer < size, "[", op, "] index ",
                      it.integer, " is out of bounds for dimension ", real_dim, " with size ",
                      size);
        r.view = views.select(r.view, dim, it.integer);
        ++real_dim;
        break;
      }
      case K::Slice:
        EMBER_CHECK_T(ValueError, it.step > 0, "[", op, "] step must be greater than zero");
        // A slice covering the whole dim is skipped inside a longer index, as PyTorch does (so
        // x[:, 1] records only SelectBackward0); a lone x[:] still slices.
        if (index.size() == 1 || !covers_whole_dim(it, r.view.size(dim))) {
          r.view = views.slice(r.view, dim, it.start, it.stop, it.step);
        }
        ++dim;
        ++real_dim;
        break;
      case K::Boolean:
        record_bool_scalar(r, dim, it.integer != 0, views);
        ++dim;
        break;
      case K::Tensor: {
        const Tensor& t = it.tensor;
        const ScalarType dt = t.dtype();
        if (is_mask_dtype(dt)) {
          if (t.dim() == 0) {
            record_bool_scalar(r, dim, tensor_as_integer(t) != 0, views);
            ++dim;
          } else {
            record_mask(r, dim, t, op);
            dim += t.dim();
            real_dim += t.dim();
          }
          break;
        }
        EMBER_CHECK_T(IndexError, is_integral(dt, false), "[", op,
                      "] tensors used as indices must be long, int, byte or bool tensors");
        if (t.dim() == 0 && ints_as_select) {
          const int64_t i = tensor_as_integer(t), size = r.view.size(dim);
          EMBER_CHECK_T(IndexError, i >= -size && i < size, "[", op, "] index ", i,
                        " is out of bounds for dimension ", real_dim, " with size ", size);
          r.view = views.select(r.view, dim, i);
          ++real_dim;
          break;
        }
        EMBER_CHECK_T(IndexError, dt == ScalarType::Int64 || dt == ScalarType::Int32, "[", op,
                      "] tensors used as indices must be long, int, byte or bool tensors");
        record(r, dim, to_long_index(t));
        ++dim;
        ++real_dim;
        break;
      }
    }
  }
  if (r.has_advanced) r.advanced.resize(r.view.dim());
  return r;
}

namespace {

// Phase one with native's view ops.
BasicIndexResult apply_basic(const Tensor& self, const std::vector<TensorIndex>& index,
                             const char* op, bool ints_as_select) {
  return apply_basic_indices(self, index, op, ints_as_select, native_index_view_ops());
}

// The geometry of one advanced-indexing gather/put over `self` (see the Note).
struct IndexPlan {
  DimVector result_shape;
  Tensor src_view;                // self restrided to result_shape
  std::vector<Tensor> idx_views;  // each index restrided to result_shape
  DimVector index_sizes, index_strides;
  std::vector<IndexCheck> checks;  // bounds of each index, in idx_views order
};

IndexPlan make_plan(const Tensor& self, const std::vector<Tensor>& advanced, const char* op) {
  const int64_t nd = self.dim();
  // Broadcast the indices together; PyTorch names every shape when they don't.
  DimVector bshape;
  bool ok = true;
  for (const Tensor& idx : advanced) {
    if (!idx.defined()) continue;
    const size_t n = std::max(bshape.size(), idx.sizes().size());
    DimVector merged(n);
    for (size_t i = 0; i < n && ok; ++i) {
      int64_t a = i < n - bshape.size() ? 1 : bshape[i - (n - bshape.size())];
      int64_t b = i < n - idx.dim() ? 1 : idx.size(i - (n - idx.dim()));
      if (a != b && a != 1 && b != 1) ok = false;
      merged[i] = a == 1 ? b : a;
    }
    bshape = merged;
  }
  if (!ok) {
    std::string shapes;
    for (const Tensor& idx : advanced) {
      if (!idx.defined()) continue;
      if (!shapes.empty()) shapes += ", ";
      shapes += list_str(idx.sizes());
    }
    EMBER_THROW(IndexError, "[", op,
                "] shape mismatch: indexing tensors could not be broadcast "
                "together with shapes ",
                shapes);
  }

  // Advanced indices separated by a slice send the result dims to the front (NumPy's rule):
  // permute self so the indexed dims come first, in order.
  std::vector<int64_t> indexed;
  for (int64_t d = 0; d < static_cast<int64_t>(advanced.size()); ++d) {
    if (advanced[d].defined()) indexed.push_back(d);
  }
  const bool adjacent =
      indexed.back() - indexed.front() + 1 == static_cast<int64_t>(indexed.size());
  DimVector order;
  if (adjacent) {
    for (int64_t d = 0; d < nd; ++d) order.push_back(d);
  } else {
    for (int64_t d : indexed) order.push_back(d);
    for (int64_t d = 0; d < nd; ++d) {
      if (d >= static_cast<int64_t>(advanced.size()) || !advanced[d].defined()) order.push_back(d);
    }
  }
  const int64_t first = adjacent ? indexed.front() : 0;
  const int64_t count = static_cast<int64_t>(indexed.size());

  IndexPlan p;
  DimVector src_strides;
  for (int64_t k = 0; k < first; ++k) {
    p.result_shape.push_back(self.size(order[k]));
    src_strides.push_back(self.stride(order[k]));
  }
  for (int64_t s : bshape) {
    p.result_shape.push_back(s);
    src_strides.push_back(0);
  }
  for (int64_t k = first + count; k < nd; ++k) {
    p.result_shape.push_back(self.size(order[k]));
    src_strides.push_back(self.stride(order[k]));
  }
  checked_numel(p.result_shape, op);
  p.src_view = restride(self, p.result_shape, src_strides);
  const int64_t before = first, after = nd - first - count;
  for (int64_t d : indexed) {
    Tensor e = expand(advanced[d], bshape);
    DimVector strides(before, 0);
    for (int64_t s : e.strides()) strides.push_back(s);
    for (int64_t k = 0; k < after; ++k) strides.push_back(0);
    p.idx_views.push_back(restride(e, p.result_shape, strides));
    p.index_sizes.push_back(self.size(d));
    p.index_strides.push_back(self.stride(d));
    p.checks.push_back({advanced[d],
                        {op, d, self.size(d), /*allow_negative=*/true,
                         /*index_error=*/true}});
  }
  return p;
}

}  // namespace

Tensor gather_advanced(const Tensor& view, const std::vector<Tensor>& advanced, const char* op) {
  if (is_quantized(view.dtype())) {  // the integers, with the same parameters (per tensor)
    EMBER_CHECK(!quantizer_of(view, op).per_channel(), "[", op,
                "] advanced indexing of a per-channel quantized tensor: dequantize() first");
    return on_quantized_integers({view}, op, [&](const std::vector<Tensor>& ints) {
      return gather_advanced(ints[0], advanced, op);
    });
  }
  IndexPlan p = make_plan(view, advanced, op);
  Tensor out = empty_tensor(p.result_shape, view.dtype(), view.device(), op);
  launch_gather(out, p.src_view, p.idx_views, p.index_sizes, p.index_strides, op, &p.checks);
  return out;
}

// Leading size-1 dims of a value beyond the target's rank are dropped before broadcasting, as
// PyTorch does (x[0] = ones(1, 1, 4) works for a (3, 4) x[0]).
Tensor strip_leading_ones(const Tensor& v, int64_t target_dim) {
  int64_t drop = 0;
  while (v.dim() - drop > target_dim && v.size(drop) == 1) ++drop;
  if (drop == 0) return v;
  DimVector sizes(v.dim() - drop), strides(v.dim() - drop);
  for (int64_t d = drop; d < v.dim(); ++d) {
    sizes[d - drop] = v.size(d);
    strides[d - drop] = v.stride(d);
  }
  return make_view(v, sizes, strides, v.storage_offset());
}

namespace {

void put_advanced(const Tensor& view, std::vector<Tensor> advanced, const Tensor& values,
                  bool accumulate, const char* op) {
  check_writable(view, op);
  EMBER_CHECK_T(NotImplementedError, !is_quantized(view.dtype()) && !is_quantized(values.dtype()),
                "[", op, "] writing through advanced indices into or from a quantized tensor ",
                "is not supported: dequantize(), assign, and quantize again");
  IndexPlan p = make_plan(view, advanced, op);
  for (const IndexCheck& c : p.checks) check_index_bounds(c.index, c.spec);
  Tensor v = strip_leading_ones(values, static_cast<int64_t>(p.result_shape.size()));
  bool fits = v.dim() <= static_cast<int64_t>(p.result_shape.size());
  for (int64_t i = 0; fits && i < v.dim(); ++i) {
    int64_t want = p.result_shape[p.result_shape.size() - v.dim() + i];
    fits = v.size(i) == 1 || v.size(i) == want;
  }
  EMBER_CHECK(fits, "[", op, "] shape mismatch: value tensor of shape ", list_str(values.sizes()),
              " cannot be broadcast to indexing result of shape ", list_str(p.result_shape));
  // Reading a value or an index while writing into the same memory would see partial results.
  if (shares_storage(v, view)) v = clone(v);
  for (Tensor& idx : p.idx_views) {
    if (shares_storage(idx, view)) idx = clone(idx);
  }
  v = expand(v, p.result_shape);
  launch_put(view, p.src_view, v, p.idx_views, p.index_sizes, p.index_strides,
             accumulate ? PutOp::Add : PutOp::Assign, op);
  view.bump_version();
}

}  // namespace

bool is_full_mask(const Tensor& self, const std::vector<TensorIndex>& index) {
  if (index.size() != 1 || index[0].kind != TensorIndex::Kind::Tensor) return false;
  const Tensor& m = index[0].tensor;
  return m.dtype() == ScalarType::Bool && m.dim() > 0 && m.sizes().equals(self.sizes());
}

std::vector<TensorIndex> aten_to_python_index(const std::vector<Tensor>& indices) {
  std::vector<TensorIndex> out;
  out.reserve(indices.size());
  for (const Tensor& t : indices) {
    out.push_back(t.defined() ? TensorIndex::tensor_index(t)
                              : TensorIndex::slice(std::nullopt, std::nullopt, 1));
  }
  return out;
}

Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& index) {
  if (is_full_mask(self, index)) return masked_select(self, index[0].tensor);
  BasicIndexResult r = apply_basic(self, index, "index", /*ints_as_select=*/true);
  if (!r.has_advanced) {
    // A full-tensor result (t[...], t[:]) is still a new view object, as in PyTorch.
    return r.view.is_same(self) ? alias(self) : r.view;
  }
  return gather_advanced(r.view, r.advanced, "index");
}

void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Tensor& value) {
  const char* op = "index_put_";
  BasicIndexResult r = apply_basic(self, index, op, /*ints_as_select=*/true);
  if (!r.has_advanced) {
    check_writable(r.view, op);
    Tensor v = strip_leading_ones(value, r.view.dim());
    if (shares_storage(v, r.view)) v = clone(v);
    copy_into(r.view, expand(v, r.view.sizes()), op);  // converts dtype; bumps the version
    return;
  }
  Tensor v = value.dtype() == self.dtype() ? value : to_dtype(value, self.dtype());
  put_advanced(r.view, r.advanced, v, /*accumulate=*/false, op);
}

void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Scalar& value) {
  const char* op = "index_put_";
  if (is_full_mask(self, index)) {
    Tensor s = self;
    masked_fill_(s, index[0].tensor, value);
    return;
  }
  BasicIndexResult r = apply_basic(self, index, op, /*ints_as_select=*/true);
  if (!r.has_advanced) {
    check_writable(r.view, op);
    fill_(r.view, value);
    return;
  }
  put_advanced(r.view, r.advanced, scalar_tensor(value, self.dtype()), /*accumulate=*/false, op);
}

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  BasicIndexResult r = apply_basic(self, aten_to_python_index(indices), "index",
                                   /*ints_as_select=*/false);
  if (!r.has_advanced) return alias(r.view);
  return gather_advanced(r.view, r.advanced, "index");
}

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate) {
  const char* op = "index_put_";
  EMBER_CHECK_T(IndexError, static_cast<int64_t>(indices.size()) <= self.dim(), "[", op,
                "] too many indices for tensor of dimension ", self.dim(), " (got ", indices.size(),
                ")");
  EMBER_CHECK(values.dtype() == self.dtype(), "[", op,
              "] Index put requires the source and "
              "destination dtypes match, got ",
              dtype_name(self.dtype()),
              " for the destination "
              "and ",
              dtype_name(values.dtype()), " for the source.");
  BasicIndexResult r =
      apply_basic(self, aten_to_python_index(indices), op, /*ints_as_select=*/false);
  if (!r.has_advanced) {
    // No index at all: the whole tensor is the destination.
    check_writable(self, op);
    Tensor v = shares_storage(values, self) ? clone(values) : values;
    if (accumulate) {
      Tensor dst = r.view;
      std::vector<Tensor> none;
      launch_put(dst, dst, expand(strip_leading_ones(v, dst.dim()), dst.sizes()), none, {}, {},
                 PutOp::Add, op);
      dst.bump_version();
    } else {
      copy_into(r.view, expand(strip_leading_ones(v, r.view.dim()), r.view.sizes()), op);
    }
    return self;
  }
  put_advanced(r.view, r.advanced, values, accumulate, op);
  return self;
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  Tensor out = clone(self);
  index_put_(out, indices, values, accumulate);
  return out;
}

}  // namespace native
}  // namespace ember
