// The FFT kernels: every row along the transformed dim goes through its cached plan
// (kernels/cpu/fft_plan.h). Contiguous rows are read and written in place by the plan's first and
// last passes (interleaved complex, the normalisation folded into the last pass); strided rows
// are copied through a contiguous row first. Rows run in parallel; a single long row
// parallelises inside its passes instead. Odd-length real transforms take their rows in pairs,
// one complex transform for two real rows. docs/design/fft.md.
#include <algorithm>
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

// The rows along dim of `in` and `out` (same shape except at dim): row r's element offsets.
class Rows {
 public:
  Rows(const Tensor& in, const Tensor& out, int64_t dim) {
    for (int64_t d = in.dim() - 1; d >= 0; --d) {
      if (d == dim) continue;
      sizes_.push_back(in.size(d));
      in_strides_.push_back(in.stride(d));
      out_strides_.push_back(out.stride(d));
      count_ *= in.size(d);
    }
  }
  int64_t count() const { return count_; }
  void offsets(int64_t r, int64_t& in_off, int64_t& out_off) const {
    in_off = 0;
    out_off = 0;
    for (size_t i = 0; i < sizes_.size(); ++i) {
      const int64_t idx = r % sizes_[i];
      r /= sizes_[i];
      in_off += idx * in_strides_[i];
      out_off += idx * out_strides_[i];
    }
  }

 private:
  int64_t count_ = 1;
  std::vector<int64_t> sizes_, in_strides_, out_strides_;  // innermost first
};

// Runs body(first, last) over the rows [0, count) in groups of `group` rows (the last group may
// be smaller), in parallel chunks of about 32K elements of work.
template <typename F>
void for_row_groups(int64_t count, int64_t group, int64_t row_work, const F& body) {
  const int64_t groups = (count + group - 1) / group;
  const int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(row_work * group, 1));
  parallel_for(0, groups, grain, [&](int64_t b, int64_t e) {
    for (int64_t g = b; g < e; ++g) body(g * group, std::min(count, (g + 1) * group));
  });
}

// A per-thread work buffer of at least `size` T's.
template <typename T>
T* thread_buffer(int64_t size) {
  return fft::scratch<T>(0, size);
}

template <typename T>
void c2c_typed(const Tensor& out, const Tensor& self, int64_t dim, bool forward, double scale) {
  using C = std::complex<T>;
  const int64_t n = self.size(dim);
  const auto plan = complex_plan<T>(n);
  const int64_t is = self.stride(dim), os = out.stride(dim);
  const T sc = static_cast<T>(scale);
  const Rows rows(self, out, dim);
  const C* in_base = static_cast<const C*>(self.data_ptr());
  C* out_base = static_cast<C*>(out.data_ptr());
  for_row_groups(rows.count(), 1, 5 * n, [&](int64_t r, int64_t) {
    int64_t in_off, out_off;
    rows.offsets(r, in_off, out_off);
    const C* x = in_base + in_off;
    C* y = out_base + out_off;
    // [a contiguous copy of a strided row (2n)][the plan's work]
    T* buf = thread_buffer<T>(2 * n + plan->io_work_size());
    C* row = reinterpret_cast<C*>(buf);
    T* work = buf + 2 * n;
    if (is != 1) {
      for (int64_t j = 0; j < n; ++j) row[j] = x[j * is];
      x = row;
    }
    T* dst = os == 1 ? reinterpret_cast<T*>(y) : buf;
    const T* src = reinterpret_cast<const T*>(x);
    if (forward) {
      plan->template transform<true>(src, true, dst, true, sc, work);
    } else {
      plan->template transform<false>(src, true, dst, true, sc, work);
    }
    if (os != 1) {
      for (int64_t j = 0; j < n; ++j) y[j * os] = row[j];
    }
  });
}

// Even n: z_j = x_{2j} + i x_{2j+1} (the real row read as h = n / 2 complex values) transformed
// at length h; with Z its DFT, the spectra of the even and odd samples are
// E_k = (Z_k + conj Z_{h-k}) / 2 and O_k = -i (Z_k - conj Z_{h-k}) / 2, and
// X_k = E_k + e^{-2 pi i k/n} O_k, k <= h (Z_h = Z_0). Writes X_0 .. X_{h} scaled to y.
template <typename T>
void r2c_separate(const T* zr, const T* zi, const T* wr, const T* wi, int64_t h, T sc,
                  std::complex<T>* y) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  const T half = T(0.5) * sc;
  auto one = [&](int64_t k) {
    const int64_t a = k == h ? 0 : k, b = k == 0 ? 0 : h - k;
    const T ar = zr[a], ai = zi[a], cr = zr[b], ci = -zi[b];
    const T er = ar + cr, ei = ai + ci;   // 2 E
    const T orr = ai - ci, oi = cr - ar;  // 2 O = -i (Z - conj Z')
    y[k] = std::complex<T>((er + wr[k] * orr - wi[k] * oi) * half,
                           (ei + wr[k] * oi + wi[k] * orr) * half);
  };
  one(0);
  int64_t k = 1;
  // k .. k + W - 1 pair with h - k - W + 1 .. h - k, loaded as one vector and reversed.
  const V hv(half);
  T* yt = reinterpret_cast<T*>(y);
  for (; k + W <= h; k += W) {
    const V ar = V::load(zr + k), ai = V::load(zi + k);
    const V cr = fft::lanes::reverse<T>(V::load(zr + h - k - W + 1));
    const V ci = -fft::lanes::reverse<T>(V::load(zi + h - k - W + 1));
    const V er = ar + cr, ei = ai + ci, orr = ai - ci, oi = cr - ar;
    const V w_r = V::load(wr + k), w_i = V::load(wi + k);
    const V xr = (er + w_r * orr - w_i * oi) * hv, xi = (ei + w_r * oi + w_i * orr) * hv;
    V lo, hi;
    fft::lanes::interleave<T>(xr, xi, lo, hi);
    lo.store(yt + 2 * k);
    hi.store(yt + 2 * k + W);
  }
  for (; k <= h; ++k) one(k);
}

// Odd n, two rows at once: with Z the DFT of x1 + i x2, X1_k = (Z_k + conj Z_{n-k}) / 2 and
// X2_k = -i (Z_k - conj Z_{n-k}) / 2, k < len. Writes them scaled to y1 and y2 (strides ys).
template <typename T>
void r2c_separate_pair(const T* zr, const T* zi, int64_t n, int64_t len, T sc, std::complex<T>* y1,
                       std::complex<T>* y2, int64_t ys) {
  const T half = T(0.5) * sc;
  for (int64_t k = 0; k < len; ++k) {
    const int64_t b = k == 0 ? 0 : n - k;
    const T ar = zr[k], ai = zi[k], br = zr[b], bi = zi[b];
    y1[k * ys] = std::complex<T>((ar + br) * half, (ai - bi) * half);
    y2[k * ys] = std::complex<T>((ai + bi) * half, (br - ar) * half);
  }
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
  const Rows rows(self, out, dim);
  const T* in_base = static_cast<const T*>(self.data_ptr());
  C* out_base = static_cast<C*>(out.data_ptr());
  if (n % 2 != 0) {
    // Two rows per complex transform of n (a last odd row alone, with zero imaginary parts).
    for_row_groups(rows.count(), 2, 3 * n, [&](int64_t r0, int64_t r1) {
      int64_t in1, out1, in2 = 0, out2 = 0;
      rows.offsets(r0, in1, out1);
      const bool pair = r1 - r0 == 2;
      if (pair) rows.offsets(r0 + 1, in2, out2);
      // [z (2n)][Z (2n)][the plan's work]
      T* buf = thread_buffer<T>(4 * n + cp->io_work_size());
      T* z = buf;
      T* zt = buf + 2 * n;
      for (int64_t j = 0; j < n; ++j) {
        z[j] = in_base[in1 + j * is];
        z[n + j] = pair ? in_base[in2 + j * is] : T(0);
      }
      cp->template transform<true>(z, false, zt, false, T(1), buf + 4 * n);
      if (pair) {
        r2c_separate_pair(zt, zt + n, n, out_len, sc, out_base + out1, out_base + out2, os);
      } else {
        for (int64_t k = 0; k < out_len; ++k)
          out_base[out1 + k * os] = C(zt[k] * sc, zt[n + k] * sc);
      }
    });
    return;
  }
  const int64_t h = n / 2;
  for_row_groups(rows.count(), 1, 3 * n, [&](int64_t r, int64_t) {
    int64_t in_off, out_off;
    rows.offsets(r, in_off, out_off);
    const T* x = in_base + in_off;
    C* y = out_base + out_off;
    // [contiguous input (n)][Z (n)][contiguous output (2 (h + 1))][the plan's work]
    T* buf = thread_buffer<T>(2 * n + 2 * (h + 1) + cp->io_work_size());
    T* zt = buf + n;
    C* yrow = reinterpret_cast<C*>(buf + 2 * n);
    if (is != 1) {
      for (int64_t j = 0; j < n; ++j) buf[j] = x[j * is];
      x = buf;
    }
    cp->template transform<true>(x, true, zt, false, T(1), buf + 2 * n + 2 * (h + 1));
    C* dst = os == 1 ? y : yrow;
    r2c_separate(zt, zt + h, plan->wr.data(), plan->wi.data(), h, sc, dst);
    if (os != 1) {
      for (int64_t k = 0; k <= h && k < out_len; ++k) y[k * os] = yrow[k];
    }
    // The two-sided transform of a real signal: X_{n-k} = conj X_k.
    for (int64_t k = h + 1; k < out_len; ++k) y[k * os] = std::conj(y[(n - k) * os]);
  });
}

// Even n, the forward separation run backwards: Z_k = 2 E_k + 2 i O_k with
// 2 E_k = X_k + conj X_{h-k} and 2 O_k = (X_k - conj X_{h-k}) e^{+2 pi i k/n}, k < h, into the
// split buffer z; the inverse transform of Z at length h is x_{2j} + i x_{2j+1}. x: contiguous.
template <typename T>
void c2r_combine(const std::complex<T>* x, const T* wr, const T* wi, int64_t h, T* z) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  using C = std::complex<T>;
  auto entry = [&](int64_t k) {
    C v = x[k];
    if (k == 0 || k == h) v = C(v.real(), T(0));
    return v;
  };
  auto one = [&](int64_t k) {
    const C a = entry(k), b = std::conj(entry(h - k));
    const T sr = a.real() + b.real(), si = a.imag() + b.imag();
    const T dr = a.real() - b.real(), di = a.imag() - b.imag();
    const T ur = wr[k], ui = -wi[k];  // e^{+2 pi i k/n}
    const T tr = dr * ur - di * ui, ti = dr * ui + di * ur;
    z[k] = sr - ti;  // S + i T
    z[h + k] = si + tr;
  };
  one(0);
  int64_t k = 1;
  const T* xt = reinterpret_cast<const T*>(x);
  for (; k + W <= h; k += W) {
    V ar, ai, br, bi;
    fft::lanes::deinterleave<T>(V::load(xt + 2 * k), V::load(xt + 2 * k + W), ar, ai);
    const T* bp = xt + 2 * (h - k - W + 1);
    fft::lanes::deinterleave<T>(V::load(bp), V::load(bp + W), br, bi);
    br = fft::lanes::reverse<T>(br);
    bi = -fft::lanes::reverse<T>(bi);  // conj
    const V sr = ar + br, si = ai + bi, dr = ar - br, di = ai - bi;
    const V ur = V::load(wr + k), ui = -V::load(wi + k);
    const V tr = dr * ur - di * ui, ti = dr * ui + di * ur;
    (sr - ti).store(z + k);
    (si + tr).store(z + h + k);
  }
  for (; k < h; ++k) one(k);
}

template <typename T>
void c2r_typed(const Tensor& out, const Tensor& self, int64_t dim, double scale) {
  using C = std::complex<T>;
  const int64_t n = out.size(dim);
  const int64_t is = self.stride(dim), os = out.stride(dim);
  const T sc = static_cast<T>(scale);
  const auto plan = real_plan<T>(n);
  const auto& cp = plan->complex;
  const Rows rows(self, out, dim);
  const C* in_base = static_cast<const C*>(self.data_ptr());
  T* out_base = static_cast<T*>(out.data_ptr());
  if (n % 2 != 0) {
    // Two Hermitian rows X1, X2 at once: Z = X1 + i X2 (each completed by X_{n-k} = conj X_k)
    // transforms to x1 + i x2. A last odd row alone (X2 = 0).
    for_row_groups(rows.count(), 2, 3 * n, [&](int64_t r0, int64_t r1) {
      int64_t in1, out1, in2 = 0, out2 = 0;
      rows.offsets(r0, in1, out1);
      const bool pair = r1 - r0 == 2;
      if (pair) rows.offsets(r0 + 1, in2, out2);
      T* buf = thread_buffer<T>(4 * n + cp->io_work_size());
      T* z = buf;
      T* zt = buf + 2 * n;
      for (int64_t k = 0; k <= n / 2; ++k) {
        C a = in_base[in1 + k * is];
        C b = pair ? in_base[in2 + k * is] : C(0);
        if (k == 0) {
          a = C(a.real(), T(0));
          b = C(b.real(), T(0));
        }
        z[k] = a.real() - b.imag();
        z[n + k] = a.imag() + b.real();
        if (k > 0) {
          z[n - k] = a.real() + b.imag();
          z[2 * n - k] = b.real() - a.imag();
        }
      }
      cp->template transform<false>(z, false, zt, false, T(1), buf + 4 * n);
      for (int64_t j = 0; j < n; ++j) out_base[out1 + j * os] = zt[j] * sc;
      if (pair) {
        for (int64_t j = 0; j < n; ++j) out_base[out2 + j * os] = zt[n + j] * sc;
      }
    });
    return;
  }
  const int64_t h = n / 2;
  for_row_groups(rows.count(), 1, 3 * n, [&](int64_t r, int64_t) {
    int64_t in_off, out_off;
    rows.offsets(r, in_off, out_off);
    const C* x = in_base + in_off;
    T* y = out_base + out_off;
    // [contiguous input (2 (h + 1))][Z (n)][contiguous output (n)][the plan's work]
    T* buf = thread_buffer<T>(2 * (h + 1) + 2 * n + cp->io_work_size());
    T* z = buf + 2 * (h + 1);
    T* yrow = z + n;
    if (is != 1) {
      C* row = reinterpret_cast<C*>(buf);
      for (int64_t k = 0; k <= h; ++k) row[k] = x[k * is];
      x = row;
    }
    c2r_combine(x, plan->wr.data(), plan->wi.data(), h, z);
    T* dst = os == 1 ? y : yrow;
    cp->template transform<false>(z, false, dst, true, sc, yrow + n);
    if (os != 1) {
      for (int64_t j = 0; j < n; ++j) y[j * os] = yrow[j];
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
