// The FFT kernels: each row along the transformed dim is gathered into a split-complex buffer
// (real parts, then imaginary parts), transformed by its cached plan (kernels/cpu/fft_plan.h) and
// scattered into the output with the normalisation applied. Rows run in parallel; a single long
// row parallelises inside its passes instead.
#include <complex>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/fft_plan.h"
#include "kernels/fft_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

using fft::complex_plan;
using fft::real_plan;

// Calls body(in_row, out_row) for every row along dim of `in` and `out` (same shape except at
// dim), as element pointers; rows in parallel chunks of about 32K elements of work.
template <typename In, typename Out, typename F>
void for_each_row(const Tensor& in, const Tensor& out, int64_t dim, int64_t row_work,
                  const F& body) {
  const int64_t nd = in.dim();
  int64_t rows = 1;
  for (int64_t d = 0; d < nd; ++d) {
    if (d != dim) rows *= in.size(d);
  }
  if (rows == 0) return;
  const In* in_base = static_cast<const In*>(in.data_ptr());
  Out* out_base = static_cast<Out*>(out.data_ptr());
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(row_work, 1));
  parallel_for(0, rows, grain, [&](int64_t b, int64_t e) {
    for (int64_t r = b; r < e; ++r) {
      int64_t rem = r, in_off = 0, out_off = 0;
      for (int64_t d = nd - 1; d >= 0; --d) {
        if (d == dim) continue;
        const int64_t idx = rem % in.size(d);
        rem /= in.size(d);
        in_off += idx * in.stride(d);
        out_off += idx * out.stride(d);
      }
      body(in_base + in_off, out_base + out_off);
    }
  });
}

// A per-thread work buffer of at least `size` T's.
template <typename T>
T* thread_buffer(int64_t size) {
  thread_local std::vector<T> buf;
  if (static_cast<int64_t>(buf.size()) < size) buf.resize(size);
  return buf.data();
}

template <typename T>
void c2c_typed(const Tensor& out, const Tensor& self, int64_t dim, bool forward, double scale) {
  using C = std::complex<T>;
  const int64_t n = self.size(dim);
  const auto plan = complex_plan<T>(n);
  const int64_t is = self.stride(dim), os = out.stride(dim);
  const T sc = static_cast<T>(scale);
  for_each_row<C, C>(self, out, dim, 5 * n, [&](const C* x, C* y) {
    T* buf = thread_buffer<T>(2 * n + plan->work_size());
    for (int64_t j = 0; j < n; ++j) {
      buf[j] = x[j * is].real();
      buf[n + j] = x[j * is].imag();
    }
    const T* res = forward ? plan->template execute<true>(buf, buf + 2 * n)
                           : plan->template execute<false>(buf, buf + 2 * n);
    for (int64_t j = 0; j < n; ++j) y[j * os] = C(res[j] * sc, res[n + j] * sc);
  });
}

template <typename T>
void r2c_typed(const Tensor& out, const Tensor& self, int64_t dim, double scale) {
  using C = std::complex<T>;
  const int64_t n = self.size(dim);
  const int64_t out_len = out.size(dim);
  const int64_t is = self.stride(dim), os = out.stride(dim);
  const T sc = static_cast<T>(scale);
  const auto plan = real_plan<T>(n);
  const auto& cp = plan->complex;
  for_each_row<T, C>(self, out, dim, 3 * n, [&](const T* x, C* y) {
    T* buf = thread_buffer<T>(2 * cp->size() + cp->work_size());
    if (n % 2 != 0) {
      for (int64_t j = 0; j < n; ++j) {
        buf[j] = x[j * is];
        buf[n + j] = T(0);
      }
      const T* z = cp->template execute<true>(buf, buf + 2 * n);
      for (int64_t k = 0; k < out_len; ++k) y[k * os] = C(z[k] * sc, z[n + k] * sc);
      return;
    }
    // Even n: z_j = x_{2j} + i x_{2j+1} transformed at length h = n / 2; with Z its DFT, the
    // spectra of the even and odd samples are E_k = (Z_k + conj Z_{h-k}) / 2 and
    // O_k = -i (Z_k - conj Z_{h-k}) / 2, and X_k = E_k + e^{-2 pi i k/n} O_k.
    const int64_t h = n / 2;
    for (int64_t j = 0; j < h; ++j) {
      buf[j] = x[2 * j * is];
      buf[h + j] = x[(2 * j + 1) * is];
    }
    const T* z = cp->template execute<true>(buf, buf + 2 * h);
    const T half = T(0.5) * sc;
    for (int64_t k = 0; k <= h && k < out_len; ++k) {
      const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
      const T zr = z[a], zi = z[h + a], cr = z[b], ci = -z[h + b];
      const T er = zr + cr, ei = zi + ci;   // 2 E
      const T orr = zi - ci, oi = cr - zr;  // 2 O = -i (Z - conj Z')
      const T wr = plan->wr[k], wi = plan->wi[k];
      y[k * os] = C((er + wr * orr - wi * oi) * half, (ei + wr * oi + wi * orr) * half);
    }
    for (int64_t k = h + 1; k < out_len; ++k) y[k * os] = std::conj(y[(n - k) * os]);
  });
}

template <typename T>
void c2r_typed(const Tensor& out, const Tensor& self, int64_t dim, double scale) {
  using C = std::complex<T>;
  const int64_t n = out.size(dim);
  const int64_t is = self.stride(dim), os = out.stride(dim);
  const T sc = static_cast<T>(scale);
  const auto plan = real_plan<T>(n);
  const auto& cp = plan->complex;
  for_each_row<C, T>(self, out, dim, 3 * n, [&](const C* x, T* y) {
    T* buf = thread_buffer<T>(2 * cp->size() + cp->work_size());
    if (n % 2 != 0) {
      // The Hermitian completion X_{n-k} = conj X_k, then one complex inverse transform.
      buf[0] = x[0].real();
      buf[n] = T(0);
      for (int64_t k = 1; k <= n / 2; ++k) {
        const C v = x[k * is];
        buf[k] = v.real();
        buf[n + k] = v.imag();
        buf[n - k] = v.real();
        buf[2 * n - k] = -v.imag();
      }
      const T* z = cp->template execute<false>(buf, buf + 2 * n);
      for (int64_t j = 0; j < n; ++j) y[j * os] = z[j] * sc;
      return;
    }
    // Even n, the forward packing run backwards: Z_k = 2 E_k + 2 i O_k with
    // 2 E_k = X_k + conj X_{h-k} and 2 O_k = (X_k - conj X_{h-k}) e^{+2 pi i k/n}; the inverse
    // transform of Z at length h is x_{2j} + i x_{2j+1}.
    const int64_t h = n / 2;
    auto entry = [&](int64_t k) {
      C v = x[k * is];
      if (k == 0 || k == h) v = C(v.real(), T(0));
      return v;
    };
    for (int64_t k = 0; k < h; ++k) {
      const C a = entry(k), b = std::conj(entry(h - k));
      const T sr = a.real() + b.real(), si = a.imag() + b.imag();
      const T dr = a.real() - b.real(), di = a.imag() - b.imag();
      const T wr = plan->wr[k], wi = -plan->wi[k];  // e^{+2 pi i k/n}
      const T tr = dr * wr - di * wi, ti = dr * wi + di * wr;
      buf[k] = sr - ti;  // S + i T
      buf[h + k] = si + tr;
    }
    const T* z = cp->template execute<false>(buf, buf + 2 * h);
    for (int64_t j = 0; j < h; ++j) {
      y[2 * j * os] = z[j] * sc;
      y[(2 * j + 1) * os] = z[h + j] * sc;
    }
  });
}

void fft_c2c_kernel(const Tensor& out, const Tensor& self, int64_t dim, bool forward,
                    double scale) {
  dispatch_dtype<kComplexTypes>(self.dtype(), "fft_c2c", [&](auto tag) {
    using T = typename decltype(tag)::type::value_type;
    c2c_typed<T>(out, self, dim, forward, scale);
  });
}

void fft_r2c_kernel(const Tensor& out, const Tensor& self, int64_t dim, double scale) {
  dispatch_dtype<kFloat32 | kFloat64>(self.dtype(), "fft_r2c", [&](auto tag) {
    using T = typename decltype(tag)::type;
    r2c_typed<T>(out, self, dim, scale);
  });
}

void fft_c2r_kernel(const Tensor& out, const Tensor& self, int64_t dim, double scale) {
  dispatch_dtype<kComplexTypes>(self.dtype(), "fft_c2r", [&](auto tag) {
    using T = typename decltype(tag)::type::value_type;
    c2r_typed<T>(out, self, dim, scale);
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(fft_c2c_stub, CPU, fft_c2c_kernel);
EMBER_REGISTER_KERNEL(fft_r2c_stub, CPU, fft_r2c_kernel);
EMBER_REGISTER_KERNEL(fft_c2r_stub, CPU, fft_c2r_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
