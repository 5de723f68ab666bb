// unique and unique_consecutive: the kernel orders rows (sorted unique) and finds runs of equal
// rows; values, inverse and counts are assembled here.
#include <algorithm>
#include <numeric>

#include "core/factory.h"
#include "core/shape.h"
#include "ops/creation.h"
#include "ops/shape_util.h"
#include "ops/sort.h"
#include "ops/views.h"

namespace ember {
namespace native {

EMBER_DEFINE_STUB(unique_stub, UniqueFn);

namespace {

std::tuple<Tensor, Tensor, Tensor> unique_impl(const Tensor& t, bool sort, bool return_inverse,
                                               bool return_counts, std::optional<int64_t> dim,
                                               const char* op) {
  EMBER_CHECK_T(NotImplementedError, !t.is_complex(), "[", op, "] \"", op,
                "\" not implemented for '", torch_type_name(t.dtype()), "'");
  Tensor src, rows;
  int64_t d = 0;
  DimVector inverse_shape;
  if (!dim) {
    src = reshape(t, {-1});
    rows = contiguous(reshape(t, {-1, 1}));
    inverse_shape = DimVector(t.sizes());
  } else {
    EMBER_CHECK_T(IndexError, t.dim() > 0, "[", op, "] Dimension specified as ", *dim,
                  " but tensor has no dimensions");
    d = wrap_dim(*dim, t.dim(), op);
    if (t.numel() == 0) {
      EMBER_CHECK(t.size(d) == 0, "[", op,
                  "] There are 0 sized dimensions, and they aren't "
                  "selected, so unique cannot be applied");
    }
    src = t;
    const int64_t n = t.size(d);
    rows = n == 0 ? empty_tensor({0, 1}, t.dtype(), t.device(), op)
                  : contiguous(reshape(contiguous(transpose(t, 0, d)), {n, -1}));
    inverse_shape = DimVector{n};
  }
  std::vector<int64_t> order, group_start;
  const int64_t n = rows.size(0);
  if (n > 0) unique_stub(t.device(), rows, sort, order, group_start);
  const int64_t groups = static_cast<int64_t>(group_start.size());
  std::vector<int64_t> picks(groups);
  for (int64_t g = 0; g < groups; ++g) picks[g] = order[group_start[g]];
  Tensor values = gather_slices(src, d, picks, op);
  Tensor inverse = empty_tensor(return_inverse ? IntArrayRef(inverse_shape) : IntArrayRef({0}),
                                ScalarType::Int64, t.device(), op);
  if (return_inverse && n > 0) {
    int64_t* inv = inverse.data<int64_t>();
    for (int64_t g = 0; g < groups; ++g) {
      const int64_t end = g + 1 < groups ? group_start[g + 1] : n;
      for (int64_t i = group_start[g]; i < end; ++i) inv[order[i]] = g;
    }
  }
  Tensor counts = empty_tensor({return_counts ? groups : 0}, ScalarType::Int64, t.device(), op);
  if (return_counts) {
    int64_t* c = counts.data<int64_t>();
    for (int64_t g = 0; g < groups; ++g) {
      c[g] = (g + 1 < groups ? group_start[g + 1] : n) - group_start[g];
    }
  }
  return {values, inverse, counts};
}

}  // namespace

std::tuple<Tensor, Tensor, Tensor> unique(const Tensor& t, bool sorted, bool return_inverse,
                                          bool return_counts, std::optional<int64_t> dim) {
  // CPU unique always sorts (as PyTorch's does): `sorted` only allows an unsorted result.
  (void)sorted;
  return unique_impl(t, true, return_inverse, return_counts, dim, "unique");
}

std::tuple<Tensor, Tensor, Tensor> unique_consecutive(const Tensor& t, bool return_inverse,
                                                      bool return_counts,
                                                      std::optional<int64_t> dim) {
  return unique_impl(t, false, return_inverse, return_counts, dim, "unique_consecutive");
}

}  // namespace native
}  // namespace ember
