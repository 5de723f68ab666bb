// Public linalg.multi_dot, linalg.matrix_power, linalg.tensorinv and linalg.tensorsolve:
// chains of matrix products through the public mm / matmul ops ordered to do the fewest flops,
// and the tensor forms of inv / solve as one reshaped call. Everything records autograd through
// the public ops it calls.
#include <cstdlib>
#include <limits>

#include "api/autocast.h"
#include "api/creation.h"
#include "api/linalg/common.h"
#include "api/linalg/misc.h"
#include "api/linalg/solve.h"
#include "api/matmul.h"
#include "api/range_factories.h"
#include "api/shape_util.h"
#include "api/views.h"
#include "autograd/record.h"
#include "core/dtype.h"
#include "core/error.h"
#include "core/shape.h"
#include "dispatch/copy.h"

namespace ember {

namespace {

// split[i][j]: where the cheapest product of matrices i..j splits, (i..k)(k+1..j). Matrix i is
// dims[i] x dims[i + 1]. The classic dynamic program over chain lengths (Cormen et al. 15.2).
std::vector<std::vector<int64_t>> chain_order(const std::vector<int64_t>& dims) {
  const int64_t n = static_cast<int64_t>(dims.size()) - 1;
  std::vector<std::vector<int64_t>> cost(n, std::vector<int64_t>(n, 0));
  std::vector<std::vector<int64_t>> split(n, std::vector<int64_t>(n, 0));
  for (int64_t len = 1; len < n; ++len) {
    for (int64_t i = 0; i + len < n; ++i) {
      const int64_t j = i + len;
      cost[i][j] = std::numeric_limits<int64_t>::max();
      for (int64_t k = i; k < j; ++k) {
        // Sizes fit in int64 (the tensors exist); the flop count saturates instead of wrapping.
        const double flops = double(dims[i]) * double(dims[k + 1]) * double(dims[j + 1]);
        const double total = double(cost[i][k]) + double(cost[k + 1][j]) + flops;
        const int64_t q =
            total >= 9.0e18 ? std::numeric_limits<int64_t>::max() - 1 : static_cast<int64_t>(total);
        if (q < cost[i][j]) {
          cost[i][j] = q;
          split[i][j] = k;
        }
      }
    }
  }
  return split;
}

Tensor chain_product(const std::vector<Tensor>& m, const std::vector<std::vector<int64_t>>& split,
                     int64_t i, int64_t j) {
  if (i == j) return m[i];
  const int64_t k = split[i][j];
  return ember::mm(chain_product(m, split, i, k), chain_product(m, split, k + 1, j));
}

// out= of the linalg ops that compute a fresh result: out's dtype must hold the result's
// (PyTorch's checkLinalgCompatibleDtype), then out is resized and filled.
Tensor copy_to_out(const Tensor& result, const Tensor& out, const char* op) {
  if (!out.defined()) return result;
  EMBER_CHECK(can_cast(result.dtype(), out.dtype()), "[", op,
              "] Expected result to be safely castable from ", torch_type_name(result.dtype()),
              " dtype, but got result with dtype ", torch_type_name(out.dtype()));
  native::resize_output(out, result.sizes(), op);
  copy_into(out, result, op);
  return out;
}

}  // namespace

Tensor linalg_multi_dot(const std::vector<Tensor>& tensors, const Tensor& out) {
  const char* op = "linalg.multi_dot";
  const int64_t n = static_cast<int64_t>(tensors.size());
  EMBER_CHECK(n >= 2, "[", op, "] expected at least 2 tensors but got ", n);
  const Tensor& first = tensors.front();
  const Tensor& last = tensors.back();
  EMBER_CHECK(first.dim() == 1 || first.dim() == 2, "[", op,
              "] the first tensor must be 1D or 2D but got ", first.dim(), "D");
  EMBER_CHECK(last.dim() == 1 || last.dim() == 2, "[", op,
              "] the last tensor must be 1D or 2D but got ", last.dim(), "D");
  for (int64_t i = 1; i + 1 < n; ++i) {
    EMBER_CHECK(tensors[i].dim() == 2, "[", op, "] tensor ", i, " must be 2D but got ",
                tensors[i].dim(), "D");
  }
  // A 1-D first tensor is a row vector, a 1-D last one a column vector; both leave the shape.
  std::vector<Tensor> m(tensors);
  DimVector out_shape;
  if (first.dim() == 1) {
    m.front() = ember::unsqueeze(first, 0);
  } else {
    out_shape.push_back(first.size(0));
  }
  if (last.dim() == 1) {
    m.back() = ember::unsqueeze(last, -1);
  } else {
    out_shape.push_back(last.size(1));
  }
  const ScalarType dtype = first.dtype();
  for (int64_t i = 1; i < n; ++i) {
    EMBER_CHECK(m[i].dtype() == dtype, "[", op,
                "] all tensors must have be the same dtype but tensor 0 is ",
                torch_cpp_type_name(dtype), " and tensor ", i, " ",
                torch_cpp_type_name(m[i].dtype()));
    EMBER_CHECK(m[i - 1].size(1) == m[i].size(0), "[", op, "] tensors ", i - 1, " and ", i,
                " with shapes ", torch_shape_str(tensors[i - 1].sizes()), " and ",
                torch_shape_str(tensors[i].sizes()), " cannot be multiplied");
  }
  if (out.defined()) {
    EMBER_CHECK(out.dtype() == dtype, "[", op, "] expected out tensor to have dtype ",
                torch_cpp_type_name(dtype), " but got ", torch_cpp_type_name(out.dtype()));
    if (autograd::should_record_list(tensors)) autograd::check_out_arg(out, tensors, op);
  }
  Tensor result;
  if (n == 2) {
    result = ember::mm(m[0], m[1]);
  } else if (n == 3) {
    // (a x b)(b x c)(c x d): one comparison instead of the table.
    const int64_t a = m[0].size(0), b = m[1].size(0), c = m[2].size(0), d = m[2].size(1);
    const double left_first = double(a) * double(c) * double(b + d);
    const double right_first = double(b) * double(d) * double(a + c);
    result = left_first > right_first ? ember::mm(m[0], ember::mm(m[1], m[2]))
                                      : ember::mm(ember::mm(m[0], m[1]), m[2]);
  } else {
    std::vector<int64_t> dims;
    for (const Tensor& t : m) dims.push_back(t.size(0));
    dims.push_back(m.back().size(1));
    result = chain_product(m, chain_order(dims), 0, n - 1);
  }
  result = ember::view(result, out_shape);
  if (!out.defined()) return result;
  native::resize_output(out, out_shape, op);
  copy_into(out, result, op);
  return out;
}

Tensor linalg_matrix_power(const Tensor& A, int64_t n, const Tensor& out) {
  const char* op = "linalg.matrix_power";
  linalg::check_square(A, op);
  if (out.defined() && autograd::should_record(A)) autograd::check_out_arg(out, {A}, op);
  if (n == 0) {
    // The identity, attached to A's graph (a zero gradient) as PyTorch's clone().copy_(eye).
    Tensor r = ember::clone(A);
    ember::copy_(r,
                 ember::expand(ember::eye(linalg::cols(A), linalg::cols(A), A.dtype()), A.sizes()));
    return copy_to_out(r, out, op);
  }
  if (n == 1) return copy_to_out(ember::clone(A), out, op);
  if (n == -1) return ember::linalg_inv(A, out);
  // A^-n = (A^-1)^n: one inversion, then the same products as for n.
  const Tensor a = n < 0 ? ember::linalg_inv(A) : A;
  // |n| as unsigned: -n overflows for n = INT64_MIN.
  const uint64_t magnitude = n < 0 ? uint64_t{0} - static_cast<uint64_t>(n) : uint64_t(n);
  Tensor result;
  if (magnitude == 2) {
    result = ember::matmul(a, a);
  } else if (magnitude == 3) {
    result = ember::matmul(ember::matmul(a, a), a);
  } else {
    // Binary powering: z runs through a^(2^k); the set bits of |n| multiply into the result.
    // At most 64 squarings, whatever the exponent.
    Tensor z;
    for (uint64_t e = magnitude; e > 0; e /= 2) {
      z = z.defined() ? ember::matmul(z, z) : a;
      if (e % 2 == 1) result = result.defined() ? ember::matmul(result, z) : z;
    }
  }
  return copy_to_out(result, out, op);
}

Tensor linalg_tensorinv(const Tensor& A, int64_t ind, const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_tensorinv(A2, ind);
  }
  const char* op = "linalg.tensorinv";
  EMBER_CHECK(ind > 0, "[", op, "] Expected a strictly positive integer for 'ind', but got ", ind);
  EMBER_CHECK(ind <= A.dim(), "[", op, "] ind (", ind,
              ") must not exceed the number of dimensions of the input (", A.dim(), ")");
  const IntArrayRef sizes = A.sizes();
  const IntArrayRef rows_shape(sizes.begin(), static_cast<size_t>(ind));
  const IntArrayRef cols_shape(sizes.begin() + ind, sizes.size() - static_cast<size_t>(ind));
  const int64_t rows = checked_numel(rows_shape, op), cols = checked_numel(cols_shape, op);
  EMBER_CHECK(rows == cols, "[", op,
              "] Expected self to satisfy the requirement prod(self.shape[ind:]) == "
              "prod(self.shape[:ind]), but got ",
              cols, " != ", rows);
  if (out.defined() && autograd::should_record(A)) autograd::check_out_arg(out, {A}, op);
  // The inverse of the (rows x rows) matrix maps the trailing dims back to the leading ones.
  DimVector result_shape(cols_shape);
  for (int64_t s : rows_shape) result_shape.push_back(s);
  const Tensor inverse = ember::linalg_inv(ember::reshape(A, {rows, cols}));
  return copy_to_out(ember::reshape(inverse, result_shape), out, op);
}

Tensor linalg_tensorsolve(const Tensor& A, const Tensor& B, const std::optional<DimVector>& dims,
                          const Tensor& out) {
  if (autocast::active() && !out.defined()) {  // autocast: float32
    const Tensor A2 = autocast::to_fp32(A), B2 = autocast::to_fp32(B);
    autocast::ExcludeGuard no_autocast;
    return ember::linalg_tensorsolve(A2, B2, dims);
  }
  const char* op = "linalg.tensorsolve";
  Tensor a = A;
  if (dims) {
    // The named dims of A go last, in the given order (PyTorch's movedim).
    const int64_t k = static_cast<int64_t>(dims->size());
    EMBER_CHECK(k <= A.dim(), "[", op, "] dims names ", k, " dimensions but A has ", A.dim());
    DimVector destination;
    for (int64_t i = A.dim() - k; i < A.dim(); ++i) destination.push_back(i);
    a = ember::movedim(A, *dims, destination);
  }
  EMBER_CHECK(B.dim() <= a.dim(), "[", op, "] B (", B.dim(),
              " dims) must not have more dimensions than A (", a.dim(), ")");
  const IntArrayRef sizes = a.sizes();
  const IntArrayRef result_shape(sizes.begin() + B.dim(), sizes.size() - B.dim());
  const int64_t n = checked_numel(result_shape, op);
  EMBER_CHECK(n == B.numel(), "[", op,
              "] Expected self to satisfy the requirement prod(self.shape[other.ndim:]) == "
              "prod(self.shape[:other.ndim]), but got ",
              n, " != ", B.numel());
  if (out.defined() && autograd::should_record(A, B)) autograd::check_out_arg(out, {A, B}, op);
  const Tensor x =
      ember::linalg_solve(ember::reshape(a, {n, n}), ember::reshape(B, {n}), /*left=*/true);
  return copy_to_out(ember::reshape(x, result_shape), out, op);
}

}  // namespace ember
