// Building, caching and running the FFT plans of kernels/cpu/fft_plan.h.
#include "kernels/cpu/fft_plan.h"

#include <sys/mman.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <mutex>
#include <new>
#include <unordered_map>
#include <utility>

#include "core/parallel.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace fft {
namespace {

constexpr double kTwoPi = 6.283185307179586476925286766559;

// The smallest 2^a 3^b 5^c >= n: Bluestein's convolution length.
int64_t next_smooth(int64_t n) {
  int64_t best = INT64_MAX;
  for (int64_t p5 = 1; p5 < 2 * n; p5 *= 5) {
    for (int64_t p35 = p5; p35 < 2 * n; p35 *= 3) {
      int64_t v = p35;
      while (v < n) v *= 2;
      best = std::min(best, v);
    }
  }
  return best;
}

// Runs fn(begin, end) over [0, count) units of `unit_work` elements each, in parallel chunks of at
// least ~32K elements (serially inside a parallel region, such as the batch loop of the kernels).
template <typename F>
void parallel_units(int64_t count, int64_t unit_work, int64_t align, const F& fn) {
  int64_t grain = std::max<int64_t>(1, 32768 / std::max<int64_t>(unit_work, 1));
  grain = (grain + align - 1) / align * align;
  parallel_for(0, count, grain, fn);
}

// Runs fn(p0, p1, q0, q1) over a pass in parallel: over p, or, for the last passes of a long
// transform (few p, s >= W), over blocks of W along q (the last pass has a single p).
template <typename T, typename F>
void split_pass(int64_t radix, int64_t m, int64_t s, const F& fn) {
  constexpr int W = vec::Vec<T>::size;
  if (s >= W && m < 16) {
    const int64_t blocks = (s + W - 1) / W;
    parallel_units(blocks, radix * m * W, 1,
                   [&](int64_t b, int64_t e) { fn(0, m, b * W, std::min(s, e * W)); });
    return;
  }
  parallel_units(m, radix * s, W, [&](int64_t b, int64_t e) { fn(b, e, 0, s); });
}

// Lengths from kFourStepMin up run as four steps (docs/design/fft.md, "Long transforms"): the
// passes of a plain plan each stream the whole transform through memory, which bandwidth bounds
// once it outgrows the caches (2^20 complex64 is 8 MB, 24 MB with its work and output), and each
// pass is its own parallel region. Measured on Zen 4 (complex64, ms, 1 / 2 threads): 2^20 takes
// 6.3 / 3.6 as passes and 5.2 / 3.4 in four steps, 2^22 39 / 23 and 28 / 15; but 2^19 takes 1.7 /
// 0.8 as passes and 1.6 / 1.5 in four steps, and 2^17 0.31 / 0.20 against 0.35 / 0.43.
constexpr int64_t kFourStepMin = int64_t{1} << 20;

// The split n = n1 x n2 of a four-step plan, n1 <= n2 as close to sqrt(n) as n's divisors allow;
// 0 when there is none with both sides at least 64 and below kFourStepMin (so that the sub-plans
// are plain plans, whose per-thread buffers cannot collide with the four-step ones).
int64_t four_step_split(int64_t n, PlanShape shape) {
  if (n < kFourStepMin && shape != PlanShape::kFourStep) return 0;
  int64_t n1 = static_cast<int64_t>(std::sqrt(static_cast<double>(n)));
  while (n1 > 1 && n % n1 != 0) --n1;
  if (n1 < 64 || n / n1 >= kFourStepMin) return 0;
  return n1;
}

// Transposes of the four-step plans, in W x W tiles transposed in registers (remainders scalar).
// Runs tile(r, c) over the whole tiles of a rows x cols block and one(r, c) over the rest.
template <typename T, typename Tile, typename One>
void for_tiles(int64_t rows, int64_t cols, const Tile& tile, const One& one) {
  constexpr int64_t W = vec::Vec<T>::size;
  const int64_t rv = rows - rows % W, cv = cols - cols % W;
  for (int64_t r = 0; r < rv; r += W) {
    for (int64_t c = 0; c < cv; c += W) tile(r, c);
  }
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = r < rv ? cv : 0; c < cols; ++c) one(r, c);
  }
}

// dst[c * ds + r] = src[r * ss + c] * scale, r < rows, c < cols, on one split plane.
template <typename T>
void transpose_plane(const T* src, int64_t ss, int64_t rows, int64_t cols, T* dst, int64_t ds,
                     T scale) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  const V sc(scale);
  for_tiles<T>(
      rows, cols,
      [&](int64_t r, int64_t c) {
        V v[W];
        for (int64_t i = 0; i < W; ++i) v[i] = V::load(src + (r + i) * ss + c);
        lanes::transpose<T>(v);
        for (int64_t i = 0; i < W; ++i) (v[i] * sc).store(dst + (c + i) * ds + r);
      },
      [&](int64_t r, int64_t c) { dst[c * ds + r] = src[r * ss + c] * scale; });
}

// The same from interleaved complex (src: complex r * ss + c) into the planes dre and dim.
template <typename T>
void transpose_from_complex(const T* src, int64_t ss, int64_t rows, int64_t cols, T* dre, T* dim,
                            int64_t ds) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  for_tiles<T>(
      rows, cols,
      [&](int64_t r, int64_t c) {
        V re[W], im[W];
        for (int64_t i = 0; i < W; ++i) {
          const T* p = src + 2 * ((r + i) * ss + c);
          lanes::deinterleave<T>(V::load(p), V::load(p + W), re[i], im[i]);
        }
        lanes::transpose<T>(re);
        lanes::transpose<T>(im);
        for (int64_t i = 0; i < W; ++i) {
          re[i].store(dre + (c + i) * ds + r);
          im[i].store(dim + (c + i) * ds + r);
        }
      },
      [&](int64_t r, int64_t c) {
        dre[c * ds + r] = src[2 * (r * ss + c)];
        dim[c * ds + r] = src[2 * (r * ss + c) + 1];
      });
}

// And from the planes sre, sim into interleaved complex (dst: complex c * ds + r), scaled.
template <typename T>
void transpose_to_complex(const T* sre, const T* sim, int64_t ss, int64_t rows, int64_t cols,
                          T* dst, int64_t ds, T scale) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  const V sc(scale);
  for_tiles<T>(
      rows, cols,
      [&](int64_t r, int64_t c) {
        V re[W], im[W];
        for (int64_t i = 0; i < W; ++i) {
          re[i] = V::load(sre + (r + i) * ss + c);
          im[i] = V::load(sim + (r + i) * ss + c);
        }
        lanes::transpose<T>(re);
        lanes::transpose<T>(im);
        for (int64_t i = 0; i < W; ++i) {
          V lo, hi;
          lanes::interleave<T>(re[i] * sc, im[i] * sc, lo, hi);
          T* p = dst + 2 * ((c + i) * ds + r);
          lo.store(p);
          hi.store(p + W);
        }
      },
      [&](int64_t r, int64_t c) {
        dst[2 * (c * ds + r)] = sre[r * ss + c] * scale;
        dst[2 * (c * ds + r) + 1] = sim[r * ss + c] * scale;
      });
}

}  // namespace

template <typename T>
ComplexPlan<T>::ComplexPlan(int64_t n, PlanShape shape) : n_(n) {
  // The powers of two as radix 16 (fewer passes over memory than radix 4), the first pass a 16
  // (its lanes run along p and its outputs are transposed in registers, vec::Vec being at most 16
  // lanes wide), so that every later pass has s >= 16 and runs on contiguous vectors along q:
  // the odd radices, the other 16s, and a last 2, 4 or 8 for the remaining powers of two.
  std::vector<int> radices;
  int64_t rest = n;
  int twos = 0;
  while (rest % 2 == 0) {
    ++twos;
    rest /= 2;
  }
  int sixteens = twos / 4;
  const int last_pow2 = 1 << (twos % 4);
  // A power of two below 16 alone: one pass.
  const bool pow2_alone = sixteens == 0 && rest == 1;
  if (sixteens > 0) {
    radices.push_back(16);
    --sixteens;
  } else if (pow2_alone && last_pow2 > 1) {
    radices.push_back(last_pow2);
  }
  for (int p = kMaxRadix - (kMaxRadix % 2 == 0); p >= 3; p -= 2) {
    while (rest % p == 0) {
      radices.push_back(p);
      rest /= p;
    }
  }
  for (int i = 0; i < sixteens; ++i) radices.push_back(16);
  if (last_pow2 > 1 && !pow2_alone) radices.push_back(last_pow2);
  // A composite radix such as 9 or 15 never divides `rest` here: its primes went first.
  if (rest != 1) {
    // A prime factor above kMaxRadix: Bluestein, a cyclic convolution of length m_ >= 2n - 1
    // computed with two transforms of the (5-smooth) length m_.
    m_ = next_smooth(2 * n - 1);
    sub_ = complex_plan<T>(m_);
    // a (2m) and the sub-plan's ping-pong buffer (2m).
    work_size_ = 4 * m_;
    chirp_re_.resize(n);
    chirp_im_.resize(n);
    const unsigned __int128 two_n = 2 * static_cast<unsigned __int128>(n);
    for (int64_t k = 0; k < n; ++k) {
      // k^2 mod 2n keeps the angle small, so the chirp is accurate for large n.
      const auto t = static_cast<int64_t>((static_cast<unsigned __int128>(k) * k) % two_n);
      const double angle = kTwoPi * 0.5 * static_cast<double>(t) / static_cast<double>(n);
      chirp_re_[k] = static_cast<T>(std::cos(angle));
      chirp_im_[k] = static_cast<T>(-std::sin(angle));
    }
    std::vector<T> b(2 * m_, T(0)), w(sub_->work_size());
    for (int64_t k = 0; k < n; ++k) {
      b[k] = chirp_re_[k];
      b[m_ + k] = -chirp_im_[k];
      if (k > 0) {
        b[m_ - k] = chirp_re_[k];
        b[2 * m_ - k] = -chirp_im_[k];
      }
    }
    const T* kb = sub_->template execute<true>(b.data(), w.data());
    kern_re_.resize(m_);
    kern_im_.resize(m_);
    const T inv_m = T(1) / static_cast<T>(m_);
    for (int64_t k = 0; k < m_; ++k) {
      kern_re_[k] = kb[k] * inv_m;
      kern_im_[k] = kb[m_ + k] * inv_m;
    }
    return;
  }
  work_size_ = 2 * n;
  if (const int64_t n1 = four_step_split(n, shape)) {
    // work: the 2n T's of twiddled column transforms.
    n1_ = n1;
    n2_ = n / n1;
    col_plan_ = complex_plan<T>(n1_);
    row_plan_ = complex_plan<T>(n2_);
    constexpr int64_t W = vec::Vec<T>::size;
    const int64_t coarse = (n1_ + W - 1) / W;
    tw_coarse_.resize(2 * coarse * n2_);
    tw_fine_.resize(2 * W * n2_);
    auto angle = [&](int64_t t) {
      return kTwoPi * static_cast<double>(t % n) / static_cast<double>(n);
    };
    for (int64_t j2 = 0; j2 < n2_; ++j2) {
      for (int64_t c = 0; c < coarse; ++c) {
        const double a = angle(j2 * c * W);
        tw_coarse_[2 * coarse * j2 + c] = static_cast<T>(std::cos(a));
        tw_coarse_[2 * coarse * j2 + coarse + c] = static_cast<T>(-std::sin(a));
      }
      for (int64_t d = 0; d < W; ++d) {
        const double a = angle(j2 * d);
        tw_fine_[2 * W * j2 + d] = static_cast<T>(std::cos(a));
        tw_fine_[2 * W * j2 + W + d] = static_cast<T>(-std::sin(a));
      }
    }
    return;
  }
  int64_t cur = n, s = 1;
  for (int r : radices) {
    const int64_t m = cur / r;
    PassData pd{r, m, s, static_cast<int64_t>(tables_.size()), 0};
    tables_.resize(tables_.size() + 2 * (r - 1) * m);
    T* tw = tables_.data() + pd.tw_offset;
    // Passes along q (s >= W) broadcast the r - 1 twiddles of one p: p-major, the real parts
    // then the imaginary parts of each p next to each other. Passes along p load vectors of
    // consecutive p: k-major, all real parts then all imaginary parts.
    const bool p_major = s >= vec::Vec<T>::size;
    for (int k = 1; k < r; ++k) {
      for (int64_t p = 0; p < m; ++p) {
        const double angle = kTwoPi * static_cast<double>((p * k) % cur) / static_cast<double>(cur);
        const int64_t re = p_major ? 2 * (r - 1) * p + (k - 1) : (k - 1) * m + p;
        const int64_t im = p_major ? re + (r - 1) : re + (r - 1) * m;
        tw[re] = static_cast<T>(std::cos(angle));
        tw[im] = static_cast<T>(-std::sin(angle));
      }
    }
    pd.const_offset = static_cast<int64_t>(tables_.size());
    tables_.resize(tables_.size() + 2 * r);
    for (int t = 0; t < r; ++t) {
      tables_[pd.const_offset + t] = static_cast<T>(std::cos(kTwoPi * t / r));
      tables_[pd.const_offset + r + t] = static_cast<T>(std::sin(kTwoPi * t / r));
    }
    passes_.push_back(pd);
    cur = m;
    s *= r;
  }
}

namespace {

// Interleaved (std::complex layout) to split and back, the latter scaled.
template <typename T>
void deinterleave_row(const T* in, int64_t n, T* out) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V re, im;
    lanes::deinterleave<T>(V::load(in + 2 * i), V::load(in + 2 * i + W), re, im);
    re.store(out + i);
    im.store(out + n + i);
  }
  for (; i < n; ++i) {
    out[i] = in[2 * i];
    out[n + i] = in[2 * i + 1];
  }
}

template <typename T>
void interleave_row(const T* in, int64_t n, T scale, T* out) {
  using V = vec::Vec<T>;
  constexpr int W = V::size;
  const V sc(scale);
  int64_t i = 0;
  for (; i + W <= n; i += W) {
    V lo, hi;
    lanes::interleave<T>(V::load(in + i) * sc, V::load(in + n + i) * sc, lo, hi);
    lo.store(out + 2 * i);
    hi.store(out + 2 * i + W);
  }
  for (; i < n; ++i) {
    out[2 * i] = in[i] * scale;
    out[2 * i + 1] = in[n + i] * scale;
  }
}

// Calls f(std::integral_constant<int, R>{}) with R the pass's compile-time radix (0: an odd
// radix above 7, run with a runtime loop).
template <typename F>
void with_radix(int radix, const F& f) {
  switch (radix) {
    case 2:
      return f(std::integral_constant<int, 2>{});
    case 3:
      return f(std::integral_constant<int, 3>{});
    case 4:
      return f(std::integral_constant<int, 4>{});
    case 5:
      return f(std::integral_constant<int, 5>{});
    case 7:
      return f(std::integral_constant<int, 7>{});
    case 8:
      return f(std::integral_constant<int, 8>{});
    case 16:
      return f(std::integral_constant<int, 16>{});
    default:
      return f(std::integral_constant<int, 0>{});
  }
}

}  // namespace

template <typename T>
template <bool Fwd>
void ComplexPlan<T>::transform(const T* in, bool in_cx, T* out, bool out_cx, T scale,
                               T* work) const {
  const int64_t n = n_;
  if (col_plan_) {
    run_four_step<Fwd>(in, in_cx, out, out_cx, scale, work);
    return;
  }
  const int passes = static_cast<int>(passes_.size());
  if (sub_ || passes < 2) {
    // Bluestein or a single pass: through a split buffer.
    T* buf = work;
    if (in_cx) {
      deinterleave_row(in, n, buf);
    } else {
      std::copy(in, in + 2 * n, buf);
    }
    const T* res = execute<Fwd>(buf, work + 2 * n);
    if (out_cx) {
      interleave_row(res, n, scale, out);
    } else {
      std::copy(res, res + 2 * n, out);
    }
    return;
  }
  T* const bufs[2] = {work, work + 2 * n};
  const PassData& first = passes_.front();
  const bool fuse_out = passes_.back().s >= vec::Vec<T>::size;
  const T* src = in;
  bool src_cx = in_cx;
  int next = 0;  // the buffer the next pass writes
  if (in_cx && !transposing_pass<T>(first.radix, first.s)) {
    deinterleave_row(in, n, bufs[0]);
    src = bufs[0];
    src_cx = false;
    next = 1;
  }
  for (int i = 0; i < passes; ++i) {
    const PassData& pd = passes_[i];
    const bool last = i + 1 == passes;
    const bool dst_cx = last && fuse_out && out_cx;
    T* dst = last && fuse_out ? out : bufs[next];
    const Pass<T> ps = pass_of(pd);
    const PassIo<T> io{src, n, dst, n, scale};
    auto run = [&](auto radix_tag, auto in_tag, auto out_tag) {
      constexpr int R = decltype(radix_tag)::value;
      constexpr bool InC = decltype(in_tag)::value, OutC = decltype(out_tag)::value;
      split_pass<T>(pd.radix, pd.m, pd.s, [&](int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
        run_pass<R, Fwd, InC, OutC>(ps, io, p0, p1, q0, q1);
      });
    };
    // Interleaved input only reaches the radices of transposing passes (8, 16).
    auto with_io = [&](auto radix_tag, auto in_tag) {
      if (dst_cx) {
        run(radix_tag, in_tag, std::true_type{});
      } else {
        run(radix_tag, in_tag, std::false_type{});
      }
    };
    auto with_in = [&](auto radix_tag) {
      if (src_cx) {
        with_io(radix_tag, std::true_type{});
      } else {
        with_io(radix_tag, std::false_type{});
      }
    };
    with_radix(pd.radix, [&](auto radix_tag) {
      constexpr int R = decltype(radix_tag)::value;
      if constexpr (R == 8 || R == 16) {
        with_in(radix_tag);
      } else {
        with_io(radix_tag, std::false_type{});
      }
    });
    src = dst;
    src_cx = dst_cx;
    next = dst == bufs[0] ? 1 : 0;
  }
  if (!fuse_out) {
    if (out_cx) {
      interleave_row(src, n, scale, out);
    } else {
      std::copy(src, src + 2 * n, out);
    }
  }
}

template <typename T>
Pass<T> ComplexPlan<T>::pass_of(const PassData& pd) const {
  const T* consts = tables_.data() + pd.const_offset;
  return Pass<T>{pd.radix, pd.m, pd.s, tables_.data() + pd.tw_offset, consts, consts + pd.radix};
}

template <typename T>
template <bool Fwd>
T* ComplexPlan<T>::run_passes(T* buf, T* work) const {
  T* x = buf;
  T* y = work;
  const int64_t n = n_;
  for (const PassData& pd : passes_) {
    const Pass<T> ps = pass_of(pd);
    const PassIo<T> io{x, n, y, n, T(1)};
    auto run = [&](auto radix_tag) {
      constexpr int R = decltype(radix_tag)::value;
      split_pass<T>(pd.radix, pd.m, pd.s, [&](int64_t p0, int64_t p1, int64_t q0, int64_t q1) {
        run_pass<R, Fwd, false, false>(ps, io, p0, p1, q0, q1);
      });
    };
    with_radix(pd.radix, run);
    std::swap(x, y);
  }
  return x;
}

template <typename T>
template <bool Fwd>
T* ComplexPlan<T>::run_bluestein(T* buf, T* work) const {
  // X_k = c_k sum_j (x_j c_j) conj(c_{k-j}), c_k = e^{-i pi k^2/n}: a cyclic convolution of
  // length m_. The inverse transform is conj(forward(conj(x))).
  const int64_t n = n_, m = m_;
  T* a = work;
  T* spare = work + 2 * m;
  const T sign = Fwd ? T(1) : T(-1);
  parallel_units(m, 1, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      if (k < n) {
        const T xr = buf[k], xi = sign * buf[n + k];
        a[k] = xr * chirp_re_[k] - xi * chirp_im_[k];
        a[m + k] = xr * chirp_im_[k] + xi * chirp_re_[k];
      } else {
        a[k] = T(0);
        a[m + k] = T(0);
      }
    }
  });
  // spare is the sub-plan's ping-pong buffer: its result lands in a or spare.
  T* f = sub_->template execute<true>(a, spare);
  parallel_units(m, 1, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const T fr = f[k], fi = f[m + k];
      f[k] = fr * kern_re_[k] - fi * kern_im_[k];
      f[m + k] = fr * kern_im_[k] + fi * kern_re_[k];
    }
  });
  T* g = sub_->template execute<false>(f, f == a ? spare : a);
  parallel_units(n, 1, 1, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      const T gr = g[k], gi = g[m + k];
      buf[k] = gr * chirp_re_[k] - gi * chirp_im_[k];
      buf[n + k] = sign * (gr * chirp_im_[k] + gi * chirp_re_[k]);
    }
  });
  return buf;
}

template <typename T>
template <bool Fwd>
void ComplexPlan<T>::run_four_step(const T* in, bool in_cx, T* out, bool out_cx, T scale,
                                   T* t) const {
  // With j = j1 n2 + j2 and k = k1 + n1 k2:
  //   X[k1 + n1 k2] = sum_j2 w_n2^{j2 k2} (w_n^{j2 k1} sum_j1 x[j1 n2 + j2] w_n1^{j1 k1}).
  // Step one transforms the columns j2 (stride n2) in blocks of kBlock, gathered into split rows,
  // twiddles them and stores row j2 to t (split: t[j2 n1 + k1], t[n + ...]). Step two gathers
  // kBlock columns k1 of t (stride n1), transforms them as rows and scatters them to
  // out[k1 + n1 k2]. Each step is one parallel region; the block it transforms stays in L2.
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  // Blocks of 256 / sizeof(T) columns: 256 contiguous bytes of each split plane's row per
  // gather (blocks of 16 float columns, 64-byte pieces, ran 2.5x slower: each piece a cache and
  // TLB miss of its own; 512 bytes was no faster). A block of 1024-point columns is 512 KB.
  constexpr int64_t kBlock = 256 / sizeof(T);
  // The gathered rows are spaced a cache line more than their length: at a power-of-two spacing
  // every row would map to the same L1 sets, and the block's streams would evict each other.
  constexpr int64_t kPad = 64 / sizeof(T);
  const int64_t n = n_, n1 = n1_, n2 = n2_;
  const int64_t coarse = (n1 + W - 1) / W;
  const int64_t col_work = col_plan_->io_work_size(), row_work = row_plan_->io_work_size();
  parallel_for(0, (n2 + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
    const int64_t rs = 2 * n1 + kPad;
    T* g = scratch<T>(1, kBlock * rs + col_work);
    T* work = g + kBlock * rs;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t c0 = blk * kBlock, cols = std::min(kBlock, n2 - c0);
      if (in_cx) {
        transpose_from_complex(in + 2 * c0, n2, n1, cols, g, g + n1, rs);
      } else {
        transpose_plane(in + c0, n2, n1, cols, g, rs, T(1));
        transpose_plane(in + n + c0, n2, n1, cols, g + n1, rs, T(1));
      }
      for (int64_t b = 0; b < cols; ++b) {
        T* row = g + b * rs;
        col_plan_->template transform<Fwd>(row, false, row, false, T(1), work);
        const int64_t j2 = c0 + b;
        const T* cr = tw_coarse_.data() + 2 * coarse * j2;
        const T* ci = cr + coarse;
        const T* fr = tw_fine_.data() + 2 * W * j2;
        const T* fi = fr + W;
        T* tr = t + j2 * n1;
        T* ti = t + n + j2 * n1;
        const V vfr = V::load(fr), vfi = V::load(fi);
        int64_t k = 0;
        for (int64_t c = 0; k + W <= n1; ++c, k += W) {
          // w = coarse[c] * fine[0..W), conjugated for the inverse.
          const V wr = V(cr[c]) * vfr - V(ci[c]) * vfi;
          V wi = V(cr[c]) * vfi + V(ci[c]) * vfr;
          if (!Fwd) wi = -wi;
          const V xr = V::load(row + k), xi = V::load(row + n1 + k);
          (xr * wr - xi * wi).store(tr + k);
          (xr * wi + xi * wr).store(ti + k);
        }
        for (; k < n1; ++k) {
          const int64_t c = k / W, d = k % W;
          const T wr = cr[c] * fr[d] - ci[c] * fi[d];
          T wi = cr[c] * fi[d] + ci[c] * fr[d];
          if (!Fwd) wi = -wi;
          const T xr = row[k], xi = row[n1 + k];
          tr[k] = xr * wr - xi * wi;
          ti[k] = xr * wi + xi * wr;
        }
      }
    }
  });
  parallel_for(0, (n1 + kBlock - 1) / kBlock, 1, [&](int64_t b0, int64_t b1) {
    const int64_t rs = 2 * n2 + kPad;
    T* g = scratch<T>(1, kBlock * rs + row_work);
    T* work = g + kBlock * rs;
    for (int64_t blk = b0; blk < b1; ++blk) {
      const int64_t k0 = blk * kBlock, cols = std::min(kBlock, n1 - k0);
      transpose_plane(t + k0, n1, n2, cols, g, rs, T(1));
      transpose_plane(t + n + k0, n1, n2, cols, g + n2, rs, T(1));
      for (int64_t b = 0; b < cols; ++b) {
        T* row = g + b * rs;
        row_plan_->template transform<Fwd>(row, false, row, false, T(1), work);
      }
      // out[k0 + b + n1 k2] = row b at k2.
      if (out_cx) {
        transpose_to_complex(g, g + n2, rs, cols, n2, out + 2 * k0, n1, scale);
      } else {
        transpose_plane(g, rs, cols, n2, out + k0, n1, scale);
        transpose_plane(g + n2, rs, cols, n2, out + n + k0, n1, scale);
      }
    }
  });
}

template <typename T>
template <bool Fwd>
T* ComplexPlan<T>::execute(T* buf, T* work) const {
  if (col_plan_) {
    run_four_step<Fwd>(buf, false, buf, false, T(1), work);
    return buf;
  }
  return sub_ ? run_bluestein<Fwd>(buf, work) : run_passes<Fwd>(buf, work);
}

template <typename T>
RealPlan<T>::RealPlan(int64_t n_) : n(n_) {
  if (n % 2 != 0) {
    complex = complex_plan<T>(n);
    return;
  }
  complex = complex_plan<T>(n / 2);
  wr.resize(n / 2 + 1);
  wi.resize(n / 2 + 1);
  for (int64_t k = 0; k <= n / 2; ++k) {
    const double angle = kTwoPi * static_cast<double>(k) / static_cast<double>(n);
    wr[k] = static_cast<T>(std::cos(angle));
    wi[k] = static_cast<T>(-std::sin(angle));
  }
}

namespace {

// One cache per plan type. A plan is built outside the lock (building a Bluestein plan asks the
// cache for its sub-plan); when two threads race, the first one stored wins. The cache is
// bounded: past kMaxCached plans it starts over, dropping the cache's references only (a plan
// in use lives on through its shared_ptr).
template <typename P>
std::shared_ptr<const P> cached_plan(int64_t n) {
  constexpr size_t kMaxCached = 128;
  static std::mutex mu;
  static std::unordered_map<int64_t, std::shared_ptr<const P>> cache;
  {
    std::lock_guard<std::mutex> lock(mu);
    auto it = cache.find(n);
    if (it != cache.end()) return it->second;
  }
  auto plan = std::make_shared<const P>(n);
  std::lock_guard<std::mutex> lock(mu);
  if (cache.size() >= kMaxCached) cache.clear();
  return cache.emplace(n, std::move(plan)).first->second;
}

}  // namespace

namespace {

struct ScratchBuffer {
  void* ptr = nullptr;
  size_t bytes = 0;
  ScratchBuffer() = default;
  ScratchBuffer(const ScratchBuffer&) = delete;
  ScratchBuffer& operator=(const ScratchBuffer&) = delete;
  ~ScratchBuffer() { std::free(ptr); }
};

void* scratch_bytes(int slot, size_t bytes) {
  constexpr size_t kHugePage = size_t(2) << 20;
  thread_local ScratchBuffer buffers[2];
  ScratchBuffer& b = buffers[slot];
  if (b.bytes >= bytes) return b.ptr;
  std::free(b.ptr);
  b.ptr = nullptr;
  b.bytes = 0;
  const bool huge = bytes >= 2 * kHugePage;
  const size_t align = huge ? kHugePage : 64;
  const size_t rounded = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded);
  if (p == nullptr) throw std::bad_alloc();
#ifdef MADV_HUGEPAGE
  if (huge) madvise(p, rounded, MADV_HUGEPAGE);  // advisory: failure is harmless
#endif
  b.ptr = p;
  b.bytes = rounded;
  return p;
}

}  // namespace

template <typename T>
T* scratch(int slot, int64_t count) {
  return static_cast<T*>(scratch_bytes(slot, static_cast<size_t>(count) * sizeof(T)));
}

template <typename T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n) {
  return cached_plan<ComplexPlan<T>>(n);
}
template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n) {
  return cached_plan<RealPlan<T>>(n);
}

#define EMBER_FFT_INSTANTIATE(T)                                                         \
  template class ComplexPlan<T>;                                                         \
  template T* ComplexPlan<T>::execute<true>(T*, T*) const;                               \
  template T* ComplexPlan<T>::execute<false>(T*, T*) const;                              \
  template void ComplexPlan<T>::transform<true>(const T*, bool, T*, bool, T, T*) const;  \
  template void ComplexPlan<T>::transform<false>(const T*, bool, T*, bool, T, T*) const; \
  template struct RealPlan<T>;                                                           \
  template std::shared_ptr<const ComplexPlan<T>> complex_plan<T>(int64_t);               \
  template std::shared_ptr<const RealPlan<T>> real_plan<T>(int64_t);                     \
  template T* scratch<T>(int, int64_t);
EMBER_FFT_INSTANTIATE(float)
EMBER_FFT_INSTANTIATE(double)
#undef EMBER_FFT_INSTANTIATE

}  // namespace fft
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
