#include "core/shape.h"

#include <algorithm>
#include <numeric>
#include <string>
#include <utility>

#include "core/error.h"

namespace ember {

int64_t checked_numel(IntArrayRef sizes, const char* op) {
  int64_t n = 1;
  for (int64_t s : sizes) {
    EMBER_CHECK(s >= 0, "[", op, "] negative dimension ", s, " in shape ", shape_str(sizes));
    EMBER_CHECK(!__builtin_mul_overflow(n, s, &n), "[", op, "] the number of elements of shape ",
                shape_str(sizes), " overflows int64");
  }
  return n;
}

int64_t checked_mul(int64_t a, int64_t b, const char* op) {
  int64_t r;
  EMBER_CHECK(!__builtin_mul_overflow(a, b, &r), "[", op, "] size arithmetic overflows int64: ", a,
              " * ", b);
  return r;
}

size_t checked_nbytes(int64_t numel, size_t itemsize, const char* op) {
  int64_t bytes;
  EMBER_CHECK(!__builtin_mul_overflow(numel, static_cast<int64_t>(itemsize), &bytes), "[", op,
              "] storage size of ", numel, " elements of ", itemsize, " bytes overflows");
  return static_cast<size_t>(bytes);
}

DimVector dense_strides_like(IntArrayRef sizes, IntArrayRef strides) {
  const int64_t n = static_cast<int64_t>(sizes.size());
  // inner[0] is the innermost dim. Insertion sort from the contiguous order, so that dims
  // whose order is ambiguous (a stride of 0 on either side) keep it.
  DimVector inner(n);
  for (int64_t i = 0; i < n; ++i) inner[i] = n - 1 - i;
  const auto goes_outside = [&](int64_t a, int64_t b) {  // 1: a outside b, -1: inside, 0: tie
    if (strides[a] == 0 || strides[b] == 0) return 0;
    if (strides[a] != strides[b]) return strides[a] > strides[b] ? 1 : -1;
    return sizes[a] > sizes[b] ? 1 : 0;
  };
  for (int64_t i = 1; i < n; ++i) {
    int64_t at = i;  // where dim inner[i] has got to; a tie passes over a dim without a swap
    for (int64_t k = i - 1; k >= 0; --k) {
      const int order = goes_outside(inner[k], inner[at]);
      if (order < 0) break;
      if (order > 0) {
        std::swap(inner[k], inner[at]);
        at = k;
      }
    }
  }
  DimVector out(n);
  int64_t step = 1;
  for (int64_t i = 0; i < n; ++i) {
    out[inner[i]] = step;
    if (sizes[inner[i]] > 1 && __builtin_mul_overflow(step, sizes[inner[i]], &step)) {
      EMBER_THROW(Error, "Stride calculation overflowed for shape ", shape_str(sizes));
    }
  }
  return out;
}

bool is_non_overlapping_and_dense(IntArrayRef sizes, IntArrayRef strides) {
  DimVector perm(sizes.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(),
                   [&](int64_t a, int64_t b) { return strides[a] < strides[b]; });
  int64_t expected = 1;
  for (int64_t d : perm) {
    if (sizes[d] == 1) continue;
    if (strides[d] != expected) return false;
    expected *= sizes[d];
  }
  return true;
}

DimVector preserved_strides(IntArrayRef sizes, IntArrayRef strides) {
  return is_non_overlapping_and_dense(sizes, strides) ? DimVector(strides)
                                                      : dense_strides_like(sizes, strides);
}

DimVector contiguous_strides(IntArrayRef sizes) {
  DimVector strides(sizes.size());
  int64_t s = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    strides[i] = s;
    // An empty tensor's huge other dims can still overflow the strides (empty(0, 2**62, 2**62)).
    if (i > 0 && __builtin_mul_overflow(s, sizes[i] > 1 ? sizes[i] : 1, &s)) {
      EMBER_THROW(Error, "Stride calculation overflowed for shape ", shape_str(sizes));
    }
  }
  return strides;
}

bool compute_is_contiguous(IntArrayRef sizes, IntArrayRef strides) {
  int64_t expected = 1;
  for (size_t i = sizes.size(); i-- > 0;) {
    if (sizes[i] == 0) return true;
    if (sizes[i] == 1) continue;
    if (strides[i] != expected) return false;
    expected *= sizes[i];
  }
  return true;
}

int64_t wrap_dim(int64_t dim, int64_t ndim, const char* op) {
  int64_t n = ndim > 0 ? ndim : 1;
  if (dim < -n || dim >= n) {
    EMBER_THROW(IndexError, "[", op, "] Dimension out of range (expected to be in range of [", -n,
                ", ", n - 1, "], but got ", dim, ")");
  }
  return dim < 0 ? dim + n : dim;
}

DimVector broadcast_shapes(IntArrayRef a, IntArrayRef b, const char* op) {
  size_t n = a.size() > b.size() ? a.size() : b.size();
  DimVector out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t da = i < n - a.size() ? 1 : a[i - (n - a.size())];
    int64_t db = i < n - b.size() ? 1 : b[i - (n - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      EMBER_THROW(Error, "[", op, "] The size of tensor a (", da,
                  ") must match the size of tensor b (", db, ") at non-singleton dimension ", i,
                  "; shapes ", shape_str(a), " and ", shape_str(b), " cannot be broadcast");
    }
  }
  return out;
}

std::string shape_str(IntArrayRef sizes) {
  std::string s = "(";
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(sizes[i]);
  }
  if (sizes.size() == 1) s += ",";
  return s + ")";
}

DimVector infer_size(IntArrayRef shape, int64_t numel, const char* op) {
  DimVector out(shape);
  int64_t known = 1;
  int64_t infer_at = -1;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == -1) {
      EMBER_CHECK(infer_at < 0, "[", op, "] only one dimension can be inferred");
      infer_at = static_cast<int64_t>(i);
    } else {
      EMBER_CHECK(shape[i] >= 0, "[", op, "] invalid shape dimension ", shape[i]);
      EMBER_CHECK(!__builtin_mul_overflow(known, shape[i], &known), "[", op, "] shape ",
                  shape_str(shape), " overflows int64");
    }
  }
  if (infer_at >= 0) {
    EMBER_CHECK(known != 0, "[", op, "] cannot reshape tensor of 0 elements into shape ",
                shape_str(shape),
                " because the unspecified dimension size -1 can be any value "
                "and is ambiguous");
    EMBER_CHECK(numel % known == 0, "[", op, "] shape '", shape_str(shape),
                "' is invalid for input of size ", numel);
    out[infer_at] = numel / known;
  } else {
    EMBER_CHECK(known == numel, "[", op, "] shape '", shape_str(shape),
                "' is invalid for input of size ", numel);
  }
  return out;
}

}  // namespace ember
