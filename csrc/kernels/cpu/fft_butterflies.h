// The passes of Ember's complex FFT: small DFT butterflies (radix 2, 4, odd) and one Stockham
// pass over split-complex arrays, written once over a lane type V that is either a scalar T (the
// scalar twin, used for remainders and by the tests) or vec::Vec<T>. See docs/design/fft.md.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <cstdint>
#include <type_traits>

#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_shuffle.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace fft {

// GCC would otherwise keep the radix-16 butterfly and the transposes as calls taking their 32
// vectors through memory.
#define EMBER_FFT_INLINE inline __attribute__((always_inline))

// Radices above this are not run as a direct odd DFT: a length with a larger prime factor goes
// through Bluestein (docs/design/fft.md, "Factorisation").
constexpr int kMaxRadix = 31;

template <typename V>
struct Cx {
  V re, im;
};

template <typename V>
EMBER_FFT_INLINE Cx<V> operator+(Cx<V> a, Cx<V> b) {
  return {a.re + b.re, a.im + b.im};
}
template <typename V>
EMBER_FFT_INLINE Cx<V> operator-(Cx<V> a, Cx<V> b) {
  return {a.re - b.re, a.im - b.im};
}

// a * b + c: one fused instruction on vectors where the level has FMA; plain on scalars (the
// scalar twin must not call std::fma, a library call on CPUs without FMA).
template <typename T>
EMBER_FFT_INLINE vec::Vec<T> mul_add(vec::Vec<T> a, vec::Vec<T> b, vec::Vec<T> c) {
  return vec::fma(a, b, c);
}
EMBER_FFT_INLINE float mul_add(float a, float b, float c) {
  return a * b + c;
}
EMBER_FFT_INLINE double mul_add(double a, double b, double c) {
  return a * b + c;
}

// a * w for the forward transform, a * conj(w) for the inverse: the twiddle tables hold the
// forward (e^{-i...}) factors only.
template <bool Fwd, typename V>
EMBER_FFT_INLINE Cx<V> twiddle(Cx<V> a, V wr, V wi) {
  if constexpr (Fwd) {
    return {mul_add(a.re, wr, -(a.im * wi)), mul_add(a.re, wi, a.im * wr)};
  } else {
    return {mul_add(a.re, wr, a.im * wi), mul_add(a.im, wr, -(a.re * wi))};
  }
}

// a * (-i) forward, a * (+i) inverse.
template <bool Fwd, typename V>
EMBER_FFT_INLINE Cx<V> rot90(Cx<V> a) {
  if constexpr (Fwd) {
    return {a.im, -a.re};
  } else {
    return {-a.im, a.re};
  }
}

constexpr double kSqrtHalf = 0.70710678118654752440084436210484903;
constexpr double kCos1_16 = 0.92387953251128675612818318939678829;  // cos(2 pi / 16)
constexpr double kSin1_16 = 0.38268343236508977172845998403039887;  // sin(2 pi / 16)

// a * w_8 forward (w_8 = e^{-i pi/4} = (1 - i) / sqrt 2), a * conj(w_8) inverse.
template <bool Fwd, typename T, typename V>
EMBER_FFT_INLINE Cx<V> mul_w8(Cx<V> a) {
  const V h(static_cast<T>(kSqrtHalf));
  if constexpr (Fwd) {
    return {(a.re + a.im) * h, (a.im - a.re) * h};
  } else {
    return {(a.re - a.im) * h, (a.re + a.im) * h};
  }
}

// a * w_8^3 forward ((-1 - i) / sqrt 2), its conjugate inverse.
template <bool Fwd, typename T, typename V>
EMBER_FFT_INLINE Cx<V> mul_w8_3(Cx<V> a) {
  const V h(static_cast<T>(kSqrtHalf));
  if constexpr (Fwd) {
    return {(a.im - a.re) * h, -((a.re + a.im) * h)};
  } else {
    return {-((a.re + a.im) * h), (a.re - a.im) * h};
  }
}

// b0..b3 = DFT_4(a0..a3).
template <bool Fwd, typename V>
EMBER_FFT_INLINE void dft4(Cx<V> a0, Cx<V> a1, Cx<V> a2, Cx<V> a3, Cx<V>& b0, Cx<V>& b1, Cx<V>& b2,
                           Cx<V>& b3) {
  const Cx<V> t0 = a0 + a2, t1 = a0 - a2;
  const Cx<V> t2 = a1 + a3, t3 = rot90<Fwd>(a1 - a3);
  b0 = t0 + t2;
  b2 = t0 - t2;
  b1 = t1 + t3;
  b3 = t1 - t3;
}

// b = DFT_r(a). R > 0: the radix as a compile-time constant (2, 3, 4, 5, 7, 8, 16); R == 0: any
// odd r <= kMaxRadix. cs / sn hold cos / sin(2 pi t / r), t < r, for the odd radices.
template <int R, bool Fwd, typename V, typename T>
EMBER_FFT_INLINE void small_dft(const Cx<V>* a, Cx<V>* b, int r, const T* cs, const T* sn) {
  if constexpr (R == 2) {
    b[0] = a[0] + a[1];
    b[1] = a[0] - a[1];
  } else if constexpr (R == 4) {
    dft4<Fwd>(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3]);
  } else if constexpr (R == 8) {
    // Split by halves: the even outputs are DFT_4(a_j + a_{j+4}), the odd ones
    // DFT_4((a_j - a_{j+4}) w_8^j).
    const Cx<V> v0 = a[0] - a[4];
    const Cx<V> v1 = mul_w8<Fwd, T>(a[1] - a[5]);
    const Cx<V> v2 = rot90<Fwd>(a[2] - a[6]);
    const Cx<V> v3 = mul_w8_3<Fwd, T>(a[3] - a[7]);
    dft4<Fwd>(a[0] + a[4], a[1] + a[5], a[2] + a[6], a[3] + a[7], b[0], b[2], b[4], b[6]);
    dft4<Fwd>(v0, v1, v2, v3, b[1], b[3], b[5], b[7]);
  } else if constexpr (R == 16) {
    // 4 x 4: with j = j1 + 4 j2 and k = k2 + 4 k1, X_k = sum_j1 w_4^{j1 k1} w_16^{j1 k2}
    // sum_j2 a_j w_4^{j2 k2}: four DFT_4 over j2, twiddles w_16^{j1 k2}, four DFT_4 over j1.
    Cx<V> t[4][4];
    for (int j1 = 0; j1 < 4; ++j1) {
      dft4<Fwd>(a[j1], a[j1 + 4], a[j1 + 8], a[j1 + 12], t[j1][0], t[j1][1], t[j1][2], t[j1][3]);
    }
    const T c1 = static_cast<T>(kCos1_16), s1 = static_cast<T>(kSin1_16);
    t[1][1] = twiddle<Fwd>(t[1][1], V(c1), V(-s1));  // w_16^1
    t[1][2] = mul_w8<Fwd, T>(t[1][2]);               // w_16^2
    t[1][3] = twiddle<Fwd>(t[1][3], V(s1), V(-c1));  // w_16^3
    t[2][1] = mul_w8<Fwd, T>(t[2][1]);               // w_16^2
    t[2][2] = rot90<Fwd>(t[2][2]);                   // w_16^4
    t[2][3] = mul_w8_3<Fwd, T>(t[2][3]);             // w_16^6
    t[3][1] = twiddle<Fwd>(t[3][1], V(s1), V(-c1));  // w_16^3
    t[3][2] = mul_w8_3<Fwd, T>(t[3][2]);             // w_16^6
    t[3][3] = twiddle<Fwd>(t[3][3], V(-c1), V(s1));  // w_16^9
    for (int k2 = 0; k2 < 4; ++k2) {
      dft4<Fwd>(t[0][k2], t[1][k2], t[2][k2], t[3][k2], b[k2], b[k2 + 4], b[k2 + 8], b[k2 + 12]);
    }
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

// Lane shuffles for the passes (vec_shuffle.h holds the generic ones): they move complex data
// between the interleaved layout of std::complex and the split layout of the passes, and
// transpose W x W blocks so a pass whose lanes run along p can store whole vectors.
namespace lanes {

using vec::shuffle2;

// v[i][j] <-> v[j][i] for the W vectors v[0 .. W).
template <typename T>
EMBER_FFT_INLINE void transpose(vec::Vec<T>* v) {
  vec::transpose_square<T>(v);
}

// Interleaved complex (lo holds the first W / 2 values, hi the next) to real and imaginary
// parts, and back.
template <typename T>
EMBER_FFT_INLINE void deinterleave(vec::Vec<T> lo, vec::Vec<T> hi, vec::Vec<T>& re,
                                   vec::Vec<T>& im) {
  re = shuffle2<T>(lo, hi, [](int c) { return 2 * c; });
  im = shuffle2<T>(lo, hi, [](int c) { return 2 * c + 1; });
}
template <typename T>
EMBER_FFT_INLINE void interleave(vec::Vec<T> re, vec::Vec<T> im, vec::Vec<T>& lo, vec::Vec<T>& hi) {
  constexpr int W = vec::Vec<T>::size;
  lo = shuffle2<T>(re, im, [](int c) { return (c % 2) * W + c / 2; });
  hi = shuffle2<T>(re, im, [](int c) { return (c % 2) * W + W / 2 + c / 2; });
}

// The lanes in reverse order.
template <typename T>
EMBER_FFT_INLINE vec::Vec<T> reverse(vec::Vec<T> a) {
  constexpr int W = vec::Vec<T>::size;
  return shuffle2<T>(a, a, [](int c) { return W - 1 - c; });
}

}  // namespace lanes

// One Stockham pass (decimation in frequency, self-sorting): with n = radix * m the current
// sub-transform length and s the product of the radices already done,
//   y[q + s (r p + k)] = w_n^{pk} * sum_j x[q + s (p + j m)] w_r^{jk},  p < m, q < s, k < r.
template <typename T>
struct Pass {
  int radix;
  int64_t m, s;
  // (radix - 1) * m forward twiddles e^{-2 pi i p k / n}, 1 <= k < radix: where s >= W (lanes
  // along q) p-major, [2 (r - 1) p + k - 1] real, + (r - 1) imaginary; otherwise k-major,
  // [(k - 1) m + p] real, + (r - 1) m imaginary.
  const T* tw;
  const T* cs;  // radix entries: cos / sin(2 pi t / radix) (odd radices)
  const T* sn;
};

// Where a pass reads and writes. Split: real parts at p[i], imaginary parts at p[im + i].
// Interleaved (InC / OutC, the layout of std::complex): p[2 i], p[2 i + 1]; the first pass of a
// transform can read it and the last one write it, so no separate pass converts the layouts.
// An interleaved output is multiplied by `scale` (the normalisation).
template <typename T>
struct PassIo {
  const T* x;
  int64_t x_im;
  T* y;
  int64_t y_im;
  T scale;
};

// Whether a pass of radix r with stride s runs the transposing shape below (lanes along p, whole
// vector stores): the only shape that reads interleaved input without scalar gathers.
template <typename T>
constexpr bool transposing_pass(int r, int64_t s) {
  return s == 1 && (r == 8 || r == 16) && r % vec::Vec<T>::size == 0;
}

// v, hidden from the optimiser (see run_pass).
EMBER_FFT_INLINE int64_t opaque(int64_t v) {
  asm volatile("" : "+r"(v));
  return v;
}

// The pass for p in [p0, p1) and q in [q0, q1) (q0 a multiple of W; the whole [0, s) but in the
// first shape, where the last passes, with few p, split over q between threads), in one of
// three shapes:
//  - s >= W: lanes along q (contiguous loads and stores, one broadcast twiddle per p and k; the
//    last pass, m == 1, has no twiddles);
//  - s == 1 and a compile-time radix that is a multiple of W (16, 8, ...): lanes along p, the
//    outputs y[r p + k] transposed W x W in registers into whole-vector stores;
//  - otherwise lanes along p, gathering with stride s and scattering through small buffers.
// The butterflies index with strides made opaque to the optimiser (`opaque`): GCC otherwise
// turns the fifteen pointers of a radix-16 butterfly into loop induction variables and, out of
// registers, keeps them on the stack (an add to memory per load).
template <int R, bool Fwd, bool InC, bool OutC, typename T>
void run_pass(const Pass<T>& ps, const PassIo<T>& io, int64_t p0, int64_t p1, int64_t q0,
              int64_t q1) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  constexpr int kStatic = R > 0 ? R : kMaxRadix;
  const int r = R > 0 ? R : ps.radix;
  // Runtime radices are odd primes up to kMaxRadix (tells GCC the input loops fill a[0]).
  if (r < 2 || r > kStatic) __builtin_unreachable();
  const int64_t m = ps.m, s = ps.s;
  const bool p_major = s >= W;
  const T* tw = ps.tw;
  const T* x = io.x;
  T* y = io.y;
  const int64_t x_im = io.x_im, y_im = io.y_im;
  const T scale = io.scale;
  // Element access in either layout, scalar and W consecutive elements.
  auto load1 = [&](int64_t i) -> Cx<T> {
    if constexpr (InC) {
      return {x[2 * i], x[2 * i + 1]};
    } else {
      return {x[i], x[x_im + i]};
    }
  };
  auto store1 = [&](int64_t o, Cx<T> v) {
    if constexpr (OutC) {
      y[2 * o] = v.re * scale;
      y[2 * o + 1] = v.im * scale;
    } else {
      y[o] = v.re;
      y[y_im + o] = v.im;
    }
  };
  // The vector forms take pointers already offset by the element index (2 i when interleaved)
  // and the opaque offset of the imaginary parts.
  auto loadv = [&](const T* xp, int64_t xo) -> Cx<V> {
    if constexpr (InC) {
      Cx<V> v;
      lanes::deinterleave<T>(V::load(xp), V::load(xp + W), v.re, v.im);
      return v;
    } else {
      return {V::load(xp), V::load(xp + xo)};
    }
  };
  auto storev = [&](T* yp, int64_t yo, Cx<V> v) {
    if constexpr (OutC) {
      V lo, hi;
      const V sc(scale);
      lanes::interleave<T>(v.re * sc, v.im * sc, lo, hi);
      lo.store(yp);
      hi.store(yp + W);
    } else {
      v.re.store(yp);
      v.im.store(yp + yo);
    }
  };
  constexpr int64_t xe = InC ? 2 : 1, ye = OutC ? 2 : 1;  // T's per element index
  // The twiddle (k, p) in either layout.
  auto tw_re = [&](int k, int64_t p) {
    return p_major ? tw[2 * (r - 1) * p + k - 1] : tw[(k - 1) * m + p];
  };
  auto tw_im = [&](int k, int64_t p) {
    return p_major ? tw[2 * (r - 1) * p + (r - 1) + k - 1] : tw[(r - 1 + k - 1) * m + p];
  };
  // One butterfly on scalars: the remainder lanes.
  auto scalar_body = [&](int64_t p, int64_t q) {
    Cx<T> a[kStatic], b[kStatic];
    for (int j = 0; j < r; ++j) a[j] = load1(q + s * (p + j * m));
    small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
    const int64_t o = q + s * r * p;
    store1(o, b[0]);
    for (int k = 1; k < r; ++k) store1(o + s * k, twiddle<Fwd>(b[k], tw_re(k, p), tw_im(k, p)));
  };
  if (s >= W) {
    const int64_t sm = s * m;
    auto along_q = [&](auto has_twiddles) {
      for (int64_t p = p0; p < p1; ++p) {
        const T* twp = tw + 2 * (r - 1) * p;
        int64_t q = q0;
        for (; q + W <= q1; q += W) {
          Cx<V> a[kStatic], b[kStatic];
          const T* xp = x + xe * (q + s * p);
          const int64_t xs = opaque(xe * sm), xo = opaque(x_im);
          for (int j = 0; j < r; ++j, xp += xs) a[j] = loadv(xp, xo);
          small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
          T* yp = y + ye * (q + s * r * p);
          const int64_t ys = opaque(ye * s), yo = opaque(y_im);
          storev(yp, yo, b[0]);
          for (int k = 1; k < r; ++k) {
            yp += ys;
            Cx<V> v = b[k];
            if constexpr (decltype(has_twiddles)::value) {
              v = twiddle<Fwd>(v, V(twp[k - 1]), V(twp[r - 1 + k - 1]));
            }
            storev(yp, yo, v);
          }
        }
        for (; q < q1; ++q) scalar_body(p, q);
      }
    };
    if (m == 1) {
      along_q(std::false_type{});
    } else {
      along_q(std::true_type{});
    }
    return;
  }
  int64_t p = p0;
  if constexpr (R > 0 && R % W == 0) {
    if (s == 1) {
      for (; p + W <= p1; p += W) {
        Cx<V> a[R], b[R];
        const T* xp = x + xe * p;
        const int64_t xs = opaque(xe * m), xo = opaque(x_im);
        for (int j = 0; j < R; ++j, xp += xs) a[j] = loadv(xp, xo);
        small_dft<R, Fwd>(a, b, R, ps.cs, ps.sn);
        const T* twp = tw + p;
        const int64_t ts = opaque(m), to = opaque((R - 1) * m);
        for (int k = 1; k < R; ++k, twp += ts) {
          b[k] = twiddle<Fwd>(b[k], V::load(twp), V::load(twp + to));
        }
        // Lane l of b[k] goes to y[R (p + l) + k]: W x W transposes of b[kb W .. kb W + W).
        for (int kb = 0; kb < R / W; ++kb) {
          V tr[W], ti[W];
          for (int c = 0; c < W; ++c) {
            tr[c] = b[kb * W + c].re;
            ti[c] = b[kb * W + c].im;
          }
          lanes::transpose<T>(tr);
          lanes::transpose<T>(ti);
          T* yp = y + ye * (R * p + kb * W);
          const int64_t ys = opaque(ye * R), yo = opaque(y_im);
          for (int l = 0; l < W; ++l, yp += ys) storev(yp, yo, Cx<V>{tr[l], ti[l]});
        }
      }
      for (; p < p1; ++p) scalar_body(p, 0);
      return;
    }
  }
  for (; p + W <= p1; p += W) {
    for (int64_t q = 0; q < s; ++q) {
      Cx<V> a[kStatic], b[kStatic];
      for (int j = 0; j < r; ++j) {
        if (s == 1) {
          a[j] = loadv(x + xe * (p + j * m), x_im);
          continue;
        }
        alignas(64) T lr[W], li[W];
        for (int l = 0; l < W; ++l) {
          const Cx<T> e = load1(q + s * (p + l + j * m));
          lr[l] = e.re;
          li[l] = e.im;
        }
        a[j] = {V::load(lr), V::load(li)};
      }
      small_dft<R, Fwd>(a, b, r, ps.cs, ps.sn);
      const int64_t o = q + s * r * p;
      for (int k = 0; k < r; ++k) {
        const Cx<V> v = k == 0 ? b[0]
                               : twiddle<Fwd>(b[k], V::load(tw + (k - 1) * m + p),
                                              V::load(tw + (r - 1 + k - 1) * m + p));
        alignas(64) T lr[W], li[W];
        v.re.store(lr);
        v.im.store(li);
        for (int l = 0; l < W; ++l) store1(o + s * (r * l + k), Cx<T>{lr[l], li[l]});
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
