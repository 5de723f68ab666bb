// Public indexing ops: each records its node (autograd/derivatives/indexing_*.cpp) when an input
// requires grad and runs the native op once. getitem / setitem / index record as PyTorch does:
// the basic indices are recording view ops, and the advanced ones then record their own node.
#include "api/indexing.h"

#include "api/autocast.h"
#include "api/creation.h"
#include "api/views.h"
#include "autograd/derivatives/indexing.h"
#include "autograd/variable.h"
#include "ops/indexing_engine.h"

namespace ember {

namespace {

// Phase one of an index expression with the public view ops, so the view chain records
// (SelectBackward0, SliceBackward0, UnsqueezeBackward0, ...).
const native::IndexViewOps& recording_view_ops() {
  static const native::IndexViewOps ops{
      [](const Tensor& t, int64_t dim) { return ember::unsqueeze(t, dim); },
      [](const Tensor& t, int64_t dim, int64_t index) { return ember::select(t, dim, index); },
      [](const Tensor& t, int64_t dim, std::optional<int64_t> start, std::optional<int64_t> end,
         int64_t step) { return ember::slice(t, dim, start, end, step); }};
  return ops;
}

native::BasicIndexResult apply_basic(const Tensor& self, const std::vector<TensorIndex>& index,
                                     const char* op, bool ints_as_select) {
  return native::apply_basic_indices(self, index, op, ints_as_select, recording_view_ops());
}

// native::strip_leading_ones, but a value that requires grad is reshaped (a recorded view), so
// it keeps its history.
Tensor strip_leading_ones(const Tensor& v, int64_t target_dim) {
  Tensor stripped = native::strip_leading_ones(v, target_dim);
  if (stripped.dim() == v.dim() || !autograd::should_record(v)) return stripped;
  return ember::reshape(v, stripped.sizes());
}

// self[index] while recording, as PyTorch: the basic indices are view ops that record
// themselves; the advanced ones then gather from that view and record IndexBackward0, whose
// formula is a recorded index_put (accumulate=True), so x[idx] and x[mask] are differentiable
// any number of times.
Tensor getitem_recorded(const Tensor& self, const std::vector<TensorIndex>& index) {
  if (native::is_full_mask(self, index)) {
    Tensor r = native::masked_select(self, index[0].tensor);
    return derivatives::index_recorded(self, {index[0].tensor}, r);
  }
  native::BasicIndexResult b = apply_basic(self, index, "index", /*ints_as_select=*/true);
  if (!b.has_advanced) return b.view.is_same(self) ? ember::alias(self) : b.view;
  Tensor r = native::gather_advanced(b.view, b.advanced, "index");
  return derivatives::index_recorded(b.view, b.advanced, r);
}

// self[index] = value while recording, as PyTorch: the basic indices give a (recorded) view,
// written with copy_ when no advanced index remains, else with a recorded index_put_. Writing
// through a view gives the base a CopySlices history; writing into self itself records
// IndexPutBackward0 (or CopyBackwards) on it.
void setitem_recorded(const Tensor& self, const std::vector<TensorIndex>& index,
                      const Tensor& value) {
  const char* op = "index_put_";
  Tensor v = value.dtype() == self.dtype() ? value : ember::to_dtype(value, self.dtype());
  if (native::is_full_mask(self, index)) {
    Tensor s = self;
    ember::index_put_(s, {index[0].tensor}, v, /*accumulate=*/false);
    return;
  }
  native::BasicIndexResult r = apply_basic(self, index, op, /*ints_as_select=*/true);
  Tensor dst = r.view;
  if (!r.has_advanced) {
    native::check_writable(dst, op);
    Tensor src = strip_leading_ones(v, dst.dim());
    if (native::shares_storage(src, dst)) src = ember::clone(src);
    ember::copy_(dst, ember::expand(src, dst.sizes()));
    return;
  }
  ember::index_put_(dst, r.advanced, v, /*accumulate=*/false);
}

// self[index] = number while recording, in PyTorch's two special forms (same values as the
// general path, and the same history): one bool mask over leading dims is masked_fill_
// (MaskedFillBackward0), and one int64 index tensor among basic indices is index_fill_ along
// its dim (IndexFillBackward0). Returns false for every other index.
bool setitem_scalar_recorded(const Tensor& self, const std::vector<TensorIndex>& index,
                             const Scalar& value) {
  using K = TensorIndex::Kind;
  const TensorIndex* tensor_index = nullptr;
  for (const TensorIndex& it : index) {
    if (it.kind == K::Boolean) return false;  // a bool scalar adds an advanced index too
    if (it.kind != K::Tensor) continue;
    if (tensor_index) return false;  // several tensor indices: index_put_
    tensor_index = &it;
  }
  if (!tensor_index || tensor_index->tensor.dim() == 0) return false;
  const Tensor& t = tensor_index->tensor;
  if (t.dtype() == ScalarType::Bool) {
    if (index.size() != 1 || t.dim() > self.dim()) return false;
    for (int64_t d = 0; d < t.dim(); ++d) {
      if (t.size(d) != self.size(d)) return false;  // the general path raises the error
    }
    DimVector mask_shape(t.sizes());
    while (static_cast<int64_t>(mask_shape.size()) < self.dim()) mask_shape.push_back(1);
    Tensor s = self;
    ember::masked_fill_(s, ember::reshape(t, mask_shape), value);
    return true;
  }
  if (t.dtype() != ScalarType::Int64) return false;
  native::BasicIndexResult r = apply_basic(self, index, "index_put_", /*ints_as_select=*/true);
  int64_t dim = -1;
  for (size_t d = 0; d < r.advanced.size(); ++d) {
    if (r.advanced[d].defined()) dim = static_cast<int64_t>(d);
  }
  Tensor dst = r.view;
  ember::index_fill_(dst, dim, ember::reshape(r.advanced[dim], {-1}), value);
  return true;
}

}  // namespace

// ---- Python-style indexing ----

Tensor getitem(const Tensor& self, const std::vector<TensorIndex>& index) {
  if (autograd::should_record(self)) return getitem_recorded(self, index);
  return native::getitem(self, index);
}

void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Tensor& value) {
  if (autograd::should_record(self, value)) {
    setitem_recorded(self, index, value);
    return;
  }
  native::setitem(self, index, value);
}

void setitem(const Tensor& self, const std::vector<TensorIndex>& index, const Scalar& value) {
  if (autograd::should_record(self)) {
    if (!setitem_scalar_recorded(self, index, value)) {
      setitem_recorded(self, index, ember::scalar_tensor(value, self.dtype()));
    }
    return;
  }
  native::setitem(self, index, value);
}

// ---- ATen-style advanced indexing ----

Tensor index(const Tensor& self, const std::vector<Tensor>& indices) {
  if (!autograd::should_record(self)) return native::index(self, indices);
  // The leading ':' entries are recorded views, as in getitem.
  native::BasicIndexResult r = apply_basic(self, native::aten_to_python_index(indices), "index",
                                           /*ints_as_select=*/false);
  if (!r.has_advanced) return ember::alias(r.view);
  Tensor out = native::gather_advanced(r.view, r.advanced, "index");
  if (!autograd::should_record(r.view)) return out;
  return derivatives::index_recorded(r.view, r.advanced, out);
}

Tensor& index_put_(Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                   bool accumulate) {
  if (autograd::should_record(self, values)) {
    derivatives::index_put(self, indices, values, accumulate, self);
    return self;
  }
  return native::index_put_(self, indices, values, accumulate);
}

Tensor index_put(const Tensor& self, const std::vector<Tensor>& indices, const Tensor& values,
                 bool accumulate) {
  if (autograd::should_record(self, values)) {
    return derivatives::index_put(self, indices, values, accumulate, {});
  }
  return native::index_put(self, indices, values, accumulate);
}

// ---- gather / scatter ----

Tensor gather(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (autograd::should_record(self)) return derivatives::gather(self, dim, index, out);
  return native::gather(self, dim, index, out);
}

Tensor take(const Tensor& self, const Tensor& index, const Tensor& out) {
  if (autograd::should_record(self)) return derivatives::take(self, index, out);
  return native::take(self, index, out);
}

Tensor take_along_dim(const Tensor& self, const Tensor& indices, std::optional<int64_t> dim,
                      const Tensor& out) {
  if (autograd::should_record(self)) return derivatives::take_along_dim(self, indices, dim, out);
  return native::take_along_dim(self, indices, dim, out);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                 const std::string& reduce) {
  if (autograd::should_record(self, src)) {
    derivatives::scatter(self, dim, index, src, reduce, self);
    return self;
  }
  return native::scatter_(self, dim, index, src, reduce);
}

Tensor& scatter_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
                 const std::string& reduce) {
  if (autograd::should_record(self)) {
    derivatives::scatter(self, dim, index, value, reduce, self);
    return self;
  }
  return native::scatter_(self, dim, index, value, reduce);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
               const std::string& reduce, const Tensor& out) {
  if (autograd::should_record(self, src)) {
    return derivatives::scatter(self, dim, index, src, reduce, out);
  }
  return native::scatter(self, dim, index, src, reduce, out);
}

Tensor scatter(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value,
               const std::string& reduce, const Tensor& out) {
  if (autograd::should_record(self)) {
    return derivatives::scatter(self, dim, index, value, reduce, out);
  }
  return native::scatter(self, dim, index, value, reduce, out);
}

Tensor& scatter_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src) {
  if (autograd::should_record(self, src)) {
    derivatives::scatter_add(self, dim, index, src, self);
    return self;
  }
  return native::scatter_add_(self, dim, index, src);
}

Tensor scatter_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                   const Tensor& out) {
  if (autograd::should_record(self, src)) {
    return derivatives::scatter_add(self, dim, index, src, out);
  }
  return native::scatter_add(self, dim, index, src, out);
}

Tensor& scatter_reduce_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                        const std::string& reduce, bool include_self) {
  if (autograd::should_record(self, src)) {
    derivatives::scatter_reduce(self, dim, index, src, reduce, include_self, self);
    return self;
  }
  return native::scatter_reduce_(self, dim, index, src, reduce, include_self);
}

Tensor scatter_reduce(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& src,
                      const std::string& reduce, bool include_self, const Tensor& out) {
  if (autograd::should_record(self, src)) {
    return derivatives::scatter_reduce(self, dim, index, src, reduce, include_self, out);
  }
  return native::scatter_reduce(self, dim, index, src, reduce, include_self, out);
}

// ---- index_* along one dim ----

Tensor index_select(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& out) {
  if (autograd::should_record(self)) return derivatives::index_select(self, dim, index, out);
  return native::index_select(self, dim, index, out);
}

Tensor& index_add_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                   const Scalar& alpha) {
  if (autograd::should_record(self, source)) {
    derivatives::index_add(self, dim, index, source, alpha, self);
    return self;
  }
  return native::index_add_(self, dim, index, source, alpha);
}

Tensor index_add(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                 const Scalar& alpha, const Tensor& out) {
  if (autograd::should_record(self, source)) {
    return derivatives::index_add(self, dim, index, source, alpha, out);
  }
  return native::index_add(self, dim, index, source, alpha, out);
}

Tensor& index_copy_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& source) {
  if (autograd::should_record(self, source)) {
    derivatives::index_copy(self, dim, index, source, self);
    return self;
  }
  return native::index_copy_(self, dim, index, source);
}

Tensor index_copy(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& source,
                  const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: promote (index is never cast)
    const ScalarType to = autocast::promote_type({self, source});
    const Tensor self2 = autocast::cast(self, to), source2 = autocast::cast(source, to);
    autocast::ExcludeGuard no_autocast;
    return ember::index_copy(self2, dim, index, source2);
  }
  if (autograd::should_record(self, source)) {
    return derivatives::index_copy(self, dim, index, source, out);
  }
  return native::index_copy(self, dim, index, source, out);
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  if (autograd::should_record(self)) {
    derivatives::index_fill(self, dim, index, value, self);
    return self;
  }
  return native::index_fill_(self, dim, index, value);
}

Tensor& index_fill_(Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  if (autograd::should_record(self, value)) {
    derivatives::index_fill(self, dim, index, value, self);
    return self;
  }
  return native::index_fill_(self, dim, index, value);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Scalar& value) {
  if (autograd::should_record(self)) return derivatives::index_fill(self, dim, index, value, {});
  return native::index_fill(self, dim, index, value);
}

Tensor index_fill(const Tensor& self, int64_t dim, const Tensor& index, const Tensor& value) {
  if (autograd::should_record(self, value)) {
    return derivatives::index_fill(self, dim, index, value, {});
  }
  return native::index_fill(self, dim, index, value);
}

// ---- masks ----

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Scalar& value) {
  if (autograd::should_record(self)) {
    derivatives::masked_fill(self, mask, value, self);
    return self;
  }
  return native::masked_fill_(self, mask, value);
}

Tensor& masked_fill_(Tensor& self, const Tensor& mask, const Tensor& value) {
  if (autograd::should_record(self, value)) {
    derivatives::masked_fill(self, mask, value, self);
    return self;
  }
  return native::masked_fill_(self, mask, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Scalar& value) {
  if (autograd::should_record(self)) return derivatives::masked_fill(self, mask, value, {});
  return native::masked_fill(self, mask, value);
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, const Tensor& value) {
  if (autograd::should_record(self, value)) return derivatives::masked_fill(self, mask, value, {});
  return native::masked_fill(self, mask, value);
}

Tensor masked_select(const Tensor& self, const Tensor& mask, const Tensor& out) {
  if (autograd::should_record(self)) return derivatives::masked_select(self, mask, out);
  return native::masked_select(self, mask, out);
}

Tensor& masked_scatter_(Tensor& self, const Tensor& mask, const Tensor& source) {
  if (autograd::should_record(self, source)) {
    derivatives::masked_scatter(self, mask, source, self);
    return self;
  }
  return native::masked_scatter_(self, mask, source);
}

Tensor masked_scatter(const Tensor& self, const Tensor& mask, const Tensor& source) {
  if (autograd::should_record(self, source)) {
    return derivatives::masked_scatter(self, mask, source, {});
  }
  return native::masked_scatter(self, mask, source);
}

}  // namespace ember
