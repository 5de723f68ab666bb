// The passes of Ember's complex FFT: small DFT butterflies (radix 2, 4, odd) and one Stockham
// pass over split-complex arrays, written once over a lane type V that is either a scalar T (the
// scalar twin, used for remainders and by the tests) or vec::Vec<T>. See docs/design/fft.md.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <cstdint>

#include "kernels/cpu/vec/vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace fft {

// Radices above this are not run as a direct odd DFT: a length with a larger prime factor goes
// through Bluestein (docs/design/fft.md, "Factorisation").
constexpr int kMaxRadix = 31;

template <typename V>
struct Cx {
  V re, im;
};

template <typename V>
inline Cx<V> operator+(Cx<V> a, Cx<V> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename V>
inline Cx<V> operator-(Cx<V> a, Cx<V> b) {
  return {a.re - b.re, a.im - b.im};
}

// a * w for the forward transform, a * conj(w) for the inverse: the twiddle tables hold the
// forward (e^{-i...}) factors only.
template <bool Fwd, typename V>
inline Cx<V> twiddle(Cx<V> a, V wr, V wi) {
  if constexpr (Fwd) {
    return {a.re * wr - a.im * wi, a.re * wi + a.im * wr};
  } else {
    return {a.re * wr + a.im * wi, a.im * wr - a.re * wi};
  }
}

// a * (-i) forward, a * (+i) inverse.
template <bool Fwd, typename V>
inline Cx<V> rot90(Cx<V> a) {
  if constexpr (Fwd) {
    return {a.im, -a.re};
  } else {
    return {-a.im, a.re};
  }
}

// b = DFT_r(a). R > 0: the radix as a compile-time constant (2, 3, 4, 5, 7); R == 0: any odd
// r <= kMaxRadix. cs / sn hold cos / sin(2 pi t / r), t < r, for the odd radices.
template <int R, bool Fwd, typename V, typename T>
inline void small_dft(const Cx<V>* a, Cx<V>* b, int r, const T* cs, const T* sn) {
  if constexpr (R == 2) {
    b[0] = a[0] + a[1];
    b[1] = a[0] - a[1];
  } else if constexpr (R == 4) {
    const Cx<V> t0 = a[0] + a[2], t1 = a[0] - a[2];
    const Cx<V> t2 = a[1] + a[3], t3 = rot90<Fwd>(a[1] - a[3]);
    b[0] = t0 + t2;
    b[2] = t0 - t2;
    b[1] = t1 + t3;
    b[3] = t1 - t3;
  } else {
    // Odd radix: pair j with r - j, so each output pair (k, r - k) costs (r - 1) / 2 complex
    // multiply-adds by real constants for each of its two halves.
    constexpr int kStatic = R > 0 ? R : kMaxRadix;
    const int rr = R > 0 ? R : r;
    const int h = (rr - 1) / 2;
    Cx<V> s[kStatic / 2], d[kStatic / 2];
    Cx<V> b0 = a[0];
    for (int j = 1; j <= h; ++j) {
      s[j - 1] = a[j] + a[rr - j];
      d[j - 1] = a[j] - a[rr - j];
      b0 = b0 + s[j - 1];
    }
    b[0] = b0;
    for (int k = 1; k <= h; ++k) {
      Cx<V> re_part = a[0];
      Cx<V> im_part{V(T(0)), V(T(0))};
      int t = 0;
      for (int j = 1; j <= h; ++j) {
        t += k;
        if (t >= rr) t -= rr;
        const V c(cs[t]), sv(sn[t]);
        re_part.re = re_part.re + c * s[j - 1].re;
        re_part.im = re_part.im + c * s[j - 1].im;
        im_part.re = im_part.re + sv * d[j - 1].re;
        im_part.im = im_part.im + sv * d[j - 1].im;
      }
      // Forward: b_k = R - i I, b_{r-k} = R + i I; the inverse swaps them.
      const Cx<V> minus{re_part.re + im_part.im, re_part.im - im_part.re};
      const Cx<V> plus{re_part.re - im_part.im, re_part.im + im_part.re};
      b[k] = Fwd ? minus : plus;
      b[rr - k] = Fwd ? plus : minus;
    }
  }
}

// One Stockham pass (decimation in frequency, self-sorting): with n = radix * m the current
// sub-transform length and s the product of the radices already done,
//   y[q + s (r p + k)] = w_n^{pk} * sum_j x[q + s (p + j m)] w_r^{jk},  p < m, q < s, k < r.
template <typename T>
struct Pass {
  int radix;
  int64_t m, s;
  const T* twr;  // (radix - 1) * m forward twiddles: [(k - 1) m + p] = e^{-2 pi i p k / n}
  const T* twi;
  const T* cs;  // radix entries: cos / sin(2 pi t / radix) (odd radices)
  const T* sn;
};

// The pass for p in [p0, p1). Where s is at least one vector, lanes run along q (contiguous,
// one twiddle per p); otherwise along p, gathering and scattering through small buffers.
template <int R, bool Fwd, typename T>
void run_pass(const Pass<T>& ps, const T* xr, const T* xi, T* yr, T* yi, int64_t p0, int64_t p1) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  constexpr int kStatic = R > 0 ? R : kMaxRadix;
  const int r = R > 0 ? R : ps.radix;
  const int64_t m = ps.m, s = ps.s;
  // One butterfly on scalars: the remainder lanes.
  auto scalar_body = [&](int64_t p, int64_t q) {
    Cx<T> a[kStatic], b[kStatic];
    for (int j = 0; j < r; ++j) {
      const int64_t i = q + s * (p + j * m);
      a[j] = {xr[i], xi[i]};
    }
    small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
    const int64_t o = q + s * r * p;
    yr[o] = b[0].re;
    yi[o] = b[0].im;
    for (int k = 1; k < r; ++k) {
      const Cx<T> v = twiddle<Fwd>(b[k], ps.twr[(k - 1) * m + p], ps.twi[(k - 1) * m + p]);
      yr[o + s * k] = v.re;
      yi[o + s * k] = v.im;
    }
  };
  if (s >= W) {
    for (int64_t p = p0; p < p1; ++p) {
      int64_t q = 0;
      for (; q + W <= s; q += W) {
        Cx<V> a[kStatic], b[kStatic];
        for (int j = 0; j < r; ++j) {
          const int64_t i = q + s * (p + j * m);
          a[j] = {V::load(xr + i), V::load(xi + i)};
        }
        small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
        const int64_t o = q + s * r * p;
        b[0].re.store(yr + o);
        b[0].im.store(yi + o);
        for (int k = 1; k < r; ++k) {
          const Cx<V> v =
              twiddle<Fwd>(b[k], V(ps.twr[(k - 1) * m + p]), V(ps.twi[(k - 1) * m + p]));
          v.re.store(yr + o + s * k);
          v.im.store(yi + o + s * k);
        }
      }
      for (; q < s; ++q) scalar_body(p, q);
    }
    return;
  }
  int64_t p = p0;
  for (; p + W <= p1; p += W) {
    for (int64_t q = 0; q < s; ++q) {
      Cx<V> a[kStatic], b[kStatic];
      for (int j = 0; j < r; ++j) {
        const int64_t i = q + s * (p + j * m);
        if (s == 1) {
          a[j] = {V::load(xr + i), V::load(xi + i)};
        } else {
          alignas(64) T lr[W], li[W];
          for (int l = 0; l < W; ++l) {
            lr[l] = xr[i + s * l];
            li[l] = xi[i + s * l];
          }
          a[j] = {V::load(lr), V::load(li)};
        }
      }
      small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
      const int64_t o = q + s * r * p;
      for (int k = 0; k < r; ++k) {
        const Cx<V> v = k == 0 ? b[0]
                               : twiddle<Fwd>(b[k], V::load(ps.twr + (k - 1) * m + p),
                                              V::load(ps.twi + (k - 1) * m + p));
        alignas(64) T lr[W], li[W];
        v.re.store(lr);
        v.im.store(li);
        for (int l = 0; l < W; ++l) {
          yr[o + s * (r * l + k)] = lr[l];
          yi[o + s * (r * l + k)] = li[l];
        }
      }
    }
  }
  for (; p < p1; ++p) {
    for (int64_t q = 0; q < s; ++q) scalar_body(p, q);
  }
}

}  // namespace fft
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
