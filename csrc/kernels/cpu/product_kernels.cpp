// cross and cdist kernels.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "dispatch/tensor_iterator.h"
#include "kernels/cpu/wrap_acc.h"
#include "kernels/gemm_stubs.h"

namespace ember {
namespace native {
namespace {

// The op's iterator runs over the tensors narrowed to index 0 along the cross dim; each element
// then reads its three components at byte offsets 0, s and 2s.
void cross_kernel(TensorIterator& iter, int64_t so, int64_t sa, int64_t sb) {
  dispatch_dtype<kNumericTypes>(iter.dtype(0), "cross", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using A = wrap_acc_t<T>;
    iter.for_each([&](char** data, const int64_t* strides, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        char* o = data[0] + k * strides[0];
        const char* x = data[1] + k * strides[1];
        const char* y = data[2] + k * strides[2];
        auto ld = [](const char* p) { return static_cast<A>(*reinterpret_cast<const T*>(p)); };
        const A x0 = ld(x), x1 = ld(x + sa), x2 = ld(x + 2 * sa);
        const A y0 = ld(y), y1 = ld(y + sb), y2 = ld(y + 2 * sb);
        *reinterpret_cast<T*>(o) = static_cast<T>(x1 * y2 - x2 * y1);
        *reinterpret_cast<T*>(o + so) = static_cast<T>(x2 * y0 - x0 * y2);
        *reinterpret_cast<T*>(o + 2 * so) = static_cast<T>(x0 * y1 - x1 * y0);
      }
    });
  });
}

template <typename T>
void cdist_t(const Tensor& out, const Tensor& x1, const Tensor& x2, double p) {
  const int64_t B = x1.size(0), P = x1.size(1), R = x2.size(1), M = x1.size(2);
  const T* a = x1.data<T>();
  const T* b = x2.data<T>();
  T* o = out.data<T>();
  const T pt = static_cast<T>(p);
  const int kind = p == 0.0 ? 0 : p == 1.0 ? 1 : p == 2.0 ? 2 : std::isinf(p) ? 3 : 4;
  parallel_for(0, B * P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R * M, 1)),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   const int64_t bi = r / P;
                   const T* x = a + r * M;
                   for (int64_t j = 0; j < R; ++j) {
                     const T* y = b + (bi * R + j) * M;
                     T acc = 0;
                     switch (kind) {
                       case 0:
                         for (int64_t q = 0; q < M; ++q) acc += (x[q] - y[q]) != T(0) ? T(1) : T(0);
                         break;
                       case 1:
                         for (int64_t q = 0; q < M; ++q) acc += std::abs(x[q] - y[q]);
                         break;
                       case 2:
                         for (int64_t q = 0; q < M; ++q) acc += (x[q] - y[q]) * (x[q] - y[q]);
                         acc = std::sqrt(acc);
                         break;
                       case 3:
                         for (int64_t q = 0; q < M; ++q) acc = std::max(acc, std::abs(x[q] - y[q]));
                         break;
                       default:
                         for (int64_t q = 0; q < M; ++q) acc += std::pow(std::abs(x[q] - y[q]), pt);
                         acc = std::pow(acc, T(1) / pt);
                     }
                     o[r * R + j] = acc;
                   }
                 }
               });
}

void cdist_kernel(const Tensor& out, const Tensor& x1, const Tensor& x2, double p) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "cdist", [&](auto tag) {
    cdist_t<typename decltype(tag)::type>(out, x1, x2, p);
  });
}

void cdist_mm_finish_kernel(const Tensor& out, const Tensor& x1, const Tensor& x2) {
  dispatch_dtype<kFloat32 | kFloat64>(out.dtype(), "cdist", [&](auto tag) {
    using T = typename decltype(tag)::type;
    const int64_t B = x1.size(0), P = x1.size(1), R = x2.size(1), M = x1.size(2);
    auto norms = [M](const T* x, int64_t rows) {
      std::vector<T> n(rows);
      for (int64_t i = 0; i < rows; ++i) {
        T s = 0;
        for (int64_t q = 0; q < M; ++q) s += x[i * M + q] * x[i * M + q];
        n[i] = s;
      }
      return n;
    };
    const std::vector<T> n1 = norms(x1.data<T>(), B * P), n2 = norms(x2.data<T>(), B * R);
    T* o = out.data<T>();
    parallel_for(0, B * P, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(R, 1)),
                 [&](int64_t r0, int64_t r1) {
                   for (int64_t r = r0; r < r1; ++r) {
                     const T* nb = n2.data() + (r / P) * R;
                     for (int64_t j = 0; j < R; ++j) {
                       o[r * R + j] = std::sqrt(std::max(o[r * R + j] + n1[r] + nb[j], T(0)));
                     }
                   }
                 });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(cross_stub, CPU, cross_kernel);
EMBER_REGISTER_KERNEL(cdist_stub, CPU, cdist_kernel);
EMBER_REGISTER_KERNEL(cdist_mm_finish_stub, CPU, cdist_mm_finish_kernel);

}  // namespace native
}  // namespace ember
