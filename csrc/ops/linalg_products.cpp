// linalg.multi_dot and linalg.matrix_power: chains of matrix products through the public mm /
// matmul ops (which record autograd), ordered to do the fewest flops.
#include <cstdlib>
#include <limits>

#include "autograd/record.h"
#include "core/dtype.h"
#include "core/error.h"
#include "dispatch/copy.h"
#include "ops/creation.h"
#include "ops/linalg_common.h"
#include "ops/linalg_misc.h"
#include "ops/matmul.h"
#include "ops/range_factories.h"
#include "ops/shape_util.h"
#include "ops/views.h"

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
  return mm(chain_product(m, split, i, k), chain_product(m, split, k + 1, j));
}

// out= of the linalg ops that compute a fresh result: out's dtype must hold the result's
// (PyTorch's checkLinalgCompatibleDtype), then out is resized and filled.
Tensor copy_to_out(const Tensor& result, const Tensor& out, const char* op) {
  if (!out.defined()) return result;
  EMBER_CHECK(can_cast(result.dtype(), out.dtype()), "[", op,
              "] Expected result to be safely castable from ", torch_type_name(result.dtype()),
              " dtype, but got result with dtype ", torch_type_name(out.dtype()));
  resize_output(out, result.sizes(), op);
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
    m.front() = unsqueeze(first, 0);
  } else {
    out_shape.push_back(first.size(0));
  }
  if (last.dim() == 1) {
    m.back() = unsqueeze(last, -1);
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
    result = mm(m[0], m[1]);
  } else if (n == 3) {
    // (a x b)(b x c)(c x d): one comparison instead of the table.
    const int64_t a = m[0].size(0), b = m[1].size(0), c = m[2].size(0), d = m[2].size(1);
    const double left_first = double(a) * double(c) * double(b + d);
    const double right_first = double(b) * double(d) * double(a + c);
    result = left_first > right_first ? mm(m[0], mm(m[1], m[2])) : mm(mm(m[0], m[1]), m[2]);
  } else {
    std::vector<int64_t> dims;
    for (const Tensor& t : m) dims.push_back(t.size(0));
    dims.push_back(m.back().size(1));
    result = chain_product(m, chain_order(dims), 0, n - 1);
  }
  result = view(result, out_shape);
  if (!out.defined()) return result;
  resize_output(out, out_shape, op);
  copy_into(out, result, op);
  return out;
}

Tensor linalg_matrix_power(const Tensor& A, int64_t n, const Tensor& out) {
  const char* op = "linalg.matrix_power";
  linalg::check_square(A, op);
  if (out.defined() && autograd::should_record(A)) autograd::check_out_arg(out, {A}, op);
  if (n == 0) {
    // The identity, attached to A's graph (a zero gradient) as PyTorch's clone().copy_(eye).
    Tensor r = clone(A);
    copy_(r, expand(eye(linalg::cols(A), linalg::cols(A), A.dtype()), A.sizes()));
    return copy_to_out(r, out, op);
  }
  if (n == 1) return copy_to_out(clone(A), out, op);
  EMBER_CHECK_T(NotImplementedError, n > 0, "[", op,
                "] negative powers need linalg.inv, which is not in this build");
  const Tensor& a = A;
  Tensor result;
  if (n == 2) {
    result = matmul(a, a);
  } else if (n == 3) {
    result = matmul(matmul(a, a), a);
  } else {
    // Binary powering: z runs through a^(2^k); the set bits of n multiply into the result.
    Tensor z;
    for (int64_t e = n; e > 0; e /= 2) {
      z = z.defined() ? matmul(z, z) : a;
      if (e % 2 == 1) result = result.defined() ? matmul(result, z) : z;
    }
  }
  return copy_to_out(result, out, op);
}

}  // namespace ember
