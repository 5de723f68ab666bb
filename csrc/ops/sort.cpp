// sort, argsort, topk, kthvalue.
#include "ops/sort.h"

#include "core/factory.h"
#include "core/shape.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/shape_util.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(sort_stub, SortFn);
EMBER_DEFINE_STUB(topk_stub, TopkFn);

namespace {

void check_sortable(const Tensor& t, const char* op) {
  EMBER_CHECK_T(TypeError, !t.is_complex(), "[", op,
                "] Sort does not support complex dtypes on "
                "CPU");
}

// The (values, indices) pair of an op: the caller's out= tensors resized to `shape`, or new ones.
std::pair<Tensor, Tensor> make_outputs(IntArrayRef shape, ScalarType dtype, Device device,
                                       const Tensor& values_out, const Tensor& indices_out,
                                       const char* op) {
  if (values_out.defined() || indices_out.defined()) {
    EMBER_CHECK(values_out.defined() && indices_out.defined(), "[", op,
                "] out= needs both a values and an indices tensor");
    check_out_dtype(values_out, dtype, op);
    check_out_dtype(indices_out, ScalarType::Int64, op);
    resize_output(values_out, shape, op);
    resize_output(indices_out, shape, op);
    return {values_out, indices_out};
  }
  return {empty_tensor(shape, dtype, device, op),
          empty_tensor(shape, ScalarType::Int64, device, op)};
}

// A source that the kernel may read while writing the outputs.
Tensor readable_source(const Tensor& t, const Tensor& values_out, const Tensor& indices_out) {
  const auto* s = t.storage().get();
  if ((values_out.defined() && values_out.storage().get() == s) ||
      (indices_out.defined() && indices_out.storage().get() == s)) {
    return clone(t);
  }
  return t;
}

}  // namespace

std::tuple<Tensor, Tensor> sort(const Tensor& t, int64_t dim, bool descending, bool stable,
                                const Tensor& values_out, const Tensor& indices_out) {
  const char* op = "sort";
  check_sortable(t, op);
  const int64_t d = wrap_dim(dim, t.dim(), op);
  Tensor src = readable_source(t, values_out, indices_out);
  auto [values, indices] =
      make_outputs(t.sizes(), t.dtype(), t.device(), values_out, indices_out, op);
  // The kernel's sort is always stable, which satisfies both settings of `stable`.
  (void)stable;
  if (t.numel() > 0) sort_stub(t.device(), values, indices, src, d, descending);
  values.bump_version();
  indices.bump_version();
  return {values, indices};
}

Tensor argsort(const Tensor& t, int64_t dim, bool descending, bool stable) {
  return std::get<1>(sort(t, dim, descending, stable));
}

std::tuple<Tensor, Tensor> topk(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                bool largest, bool sorted, const Tensor& values_out,
                                const Tensor& indices_out) {
  const char* op = "topk";
  check_sortable(t, op);
  const int64_t d = wrap_dim(dim.value_or(-1), t.dim(), op);
  const int64_t n = t.dim() > 0 ? t.size(d) : 1;
  EMBER_CHECK(k >= 0 && k <= n, "[topk] selected index k out of range");
  DimVector shape(t.sizes());
  if (t.dim() > 0) shape[d] = k;
  Tensor src = readable_source(t, values_out, indices_out);
  auto [values, indices] = make_outputs(shape, t.dtype(), t.device(), values_out, indices_out, op);
  // Results always come sorted, which is a valid order when sorted=False too.
  (void)sorted;
  if (t.dim() == 0) {
    // A 0-d input is its own top element whatever k (0 or 1), at index 0, as PyTorch.
    copy_into(values, src, op);
    fill_(indices, Scalar(int64_t{0}));
  } else if (values.numel() > 0) {
    topk_stub(t.device(), values, indices, src, k, d, largest);
  }
  values.bump_version();
  indices.bump_version();
  return {values, indices};
}

std::tuple<Tensor, Tensor> kthvalue(const Tensor& t, int64_t k, std::optional<int64_t> dim,
                                    bool keepdim, const Tensor& values_out,
                                    const Tensor& indices_out) {
  const char* op = "kthvalue";
  check_sortable(t, op);
  const int64_t d = wrap_dim(dim.value_or(-1), t.dim(), op);
  const int64_t n = t.dim() > 0 ? t.size(d) : 1;
  EMBER_CHECK(k >= 1 && k <= n,
              "[kthvalue] kthvalue(): selected number k out of range for "
              "dimension ",
              d);
  DimVector kshape(t.sizes());
  if (t.dim() > 0) kshape[d] = k;
  Tensor vals = empty_tensor(kshape, t.dtype(), t.device(), op);
  Tensor idxs = empty_tensor(kshape, ScalarType::Int64, t.device(), op);
  if (t.dim() == 0) {
    copy_into(vals, t, op);
    fill_(idxs, Scalar(int64_t{0}));
  } else if (vals.numel() > 0) {
    topk_stub(t.device(), vals, idxs, t, k, d, /*largest=*/false);
  }
  if (t.dim() > 0) {
    vals = narrow(vals, d, k - 1, 1);
    idxs = narrow(idxs, d, k - 1, 1);
    if (!keepdim) {
      vals = squeeze(vals, {d});
      idxs = squeeze(idxs, {d});
    }
  }
  if (values_out.defined() || indices_out.defined()) {
    auto [v, i] = make_outputs(vals.sizes(), t.dtype(), t.device(), values_out, indices_out, op);
    copy_into(v, vals, op);
    copy_into(i, idxs, op);
    return {v, i};
  }
  return {contiguous(vals), contiguous(idxs)};
}

}  // namespace native
}  // namespace ember
