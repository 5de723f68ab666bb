// Fused scaled-dot-product attention (kernels/nn/attention_stubs.h), flash-attention style.
//
// Forward: for each (n, h) and block of kQueryBlock queries, the keys are visited in blocks of
// kForwardKeyBlock. Each block's scores (scale q k^T + bias, causal mask) live only in a
// block-sized buffer, in base 2 (times log2 e, folded into Q's scale) so that the softmax takes
// 2^x. An online softmax keeps each row's reference m (Note [Stale reference]) and denominator
// l, and rescales the output rows when m grows. Memory is O(block), never O(L x S). The saved
// lse = m + log l (natural units) lets the backward recompute each block's probabilities exactly.
//
// Backward (FlashAttention-2's order): one work unit per (n, key/value head), which owns the
// dk / dv rows of that head and the dq rows of its query heads, so no two threads write the same
// row. For each key block, and each query block of each query head of the group:
//   P = exp(S - lse), dV += P^T dO, dP = dO V^T, dS = P (dP - D) with D = rowsum(dO * O),
//   dQ += scale dS K, dK += scale dS^T Q.
//
// The block products are small GEMMs on explicit vectors (vec::Vec), in attention_tiles.h; the
// score tiles hand their products to an epilogue here, which stores them or first turns them
// into probabilities or score gradients.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <type_traits>
#include <utility>
#include <vector>

#include "core/parallel.h"
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/nn/attention_tiles.h"
#include "kernels/cpu/vec/vec.h"
#include "kernels/cpu/vec/vec_math.h"
#include "kernels/nn/attention_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

using namespace attention_tiles;  // NOLINT: the kernels' own tile primitives

// The backward keeps dK / dV accumulators and three K / V tiles per key block, so its blocks stay
// small enough for L1 / L2. The forward holds one score block: wide key blocks amortise the
// per-row work of the online softmax (two reductions, the rescale of the output row) over more
// columns (on Zen 4, 128 -> 512 keys made the forward 6% faster at L = 2048). Each query block
// streams all of its head's K and V (2 MiB at L = 4096, more than L2), so taller query blocks
// (kForwardQueryBlock) read them less often; with 120 queries, 512 keys keep the score block at
// 240 KiB. On a Cascade Lake Xeon 128 x 512 beat 64 x 1024 by 4% at L = 4096 and 2.5% at 2048
// (avx2: 72 x 512 by 2%); on Zen 4, 1024 keys had been 1% ahead of 512 with 64 queries.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 128;
constexpr int64_t kForwardKeyBlock = 512;

// The score blocks' rows are one cache line longer than their keys: at 128 keys (512 bytes) the
// backward's transposed products, which walk a column of 64 rows, found them in 8 of L1's 64 sets
// only; padded, the Xeon's backward at L = 2048 ran 3-6% faster (the forward's 2 KiB rows, level).
template <typename T>
constexpr int64_t kRowPad = 64 / sizeof(T);

constexpr double kLog2e = 1.4426950408889634074;
constexpr double kLn2 = 0.69314718055994530942;

// The forward's query blocks are whole numbers of 6-row tiles, so that no block ends in a short
// tile (at avx2, 64 rows left a 4-row tile in every block, 5% of the time; at avx512, 120 rows
// beat 128 by 2.5-4% on the Xeon); see kForwardKeyBlock for their height.
template <typename T>
constexpr int64_t kForwardQueryBlock = kWideRegisters<T> ? 120 : 72;

// The strided 4-D operands of one (n, head) slice.
template <typename T>
const T* slice(const Tensor& t, int64_t n, int64_t h) {
  return t.data<T>() + n * t.stride(0) + h * t.stride(1);
}

// Turns a block of raw dot products into scores: s = s * scale + bias * bias_scale, -inf where
// causality or the block's padding masks them. Rows i of the block are queries q0 + i, columns
// j keys k0 + j.
template <typename T>
void finish_scores(T* s, int64_t lds, int64_t rows, int64_t cols, int64_t cols_padded, int64_t q0,
                   int64_t k0, const T* bias, int64_t bias_row, int64_t bias_col, T scale,
                   bool is_causal, T bias_scale = T(1)) {
  using V = vec::Vec<T>;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  const V scale_v(scale), bias_scale_v(bias_scale);
  for (int64_t i = 0; i < rows; ++i) {
    T* si = s + i * lds;
    if (scale != T(1)) {
      for (int64_t j = 0; j < cols_padded; j += V::size) (V::load(si + j) * scale_v).store(si + j);
    }
    if (bias) {
      const T* bi = bias + (q0 + i) * bias_row + k0 * bias_col;
      if (bias_col == 1) {
        int64_t j = 0;
        for (; j + V::size <= cols; j += V::size) {
          vec::fma(V::load(bi + j), bias_scale_v, V::load(si + j)).store(si + j);
        }
        for (; j < cols; ++j) si[j] += bi[j] * bias_scale;
      } else {
        for (int64_t j = 0; j < cols; ++j) si[j] += bi[j * bias_col] * bias_scale;
      }
    }
    int64_t first_masked = cols;
    if (is_causal) first_masked = std::clamp<int64_t>(q0 + i - k0 + 1, 0, cols);
    std::fill(si + first_masked, si + cols_padded, kLow);
  }
}

struct Shapes {
  int64_t N, Hq, Hk, L, S, E, Ev, group;
  Shapes(int64_t n, int64_t heads, int64_t head_dim)
      : N(n), Hq(heads), Hk(heads), L(0), S(0), E(head_dim), Ev(head_dim), group(1) {}
  explicit Shapes(const Tensor& q, const Tensor& k, const Tensor& v)
      : N(q.size(0)),
        Hq(q.size(1)),
        Hk(k.size(1)),
        L(q.size(2)),
        S(k.size(2)),
        E(q.size(3)),
        Ev(v.size(3)),
        group(q.size(1) / k.size(1)) {}
};

// The operands of one (sequence, query head) of the forward: row i of q / k / v / out starts
// i * *_row elements after the pointer; lse may be null (not wanted).
template <typename T>
struct HeadOperands {
  const T* q;
  const T* k;
  const T* v;
  T* out;
  T* lse;
  int64_t q_row, k_row, v_row, out_row;
  int64_t L, S;
  const T* bias;  // null, or element (0, 0) of this head's L x S bias
  int64_t bias_row, bias_col;
};

// Points o at head (n, h) of the (N, H, L, S) additive bias, when there is one.
template <typename T>
void set_bias(HeadOperands<T>& o, const Tensor& bias, int64_t n, int64_t h) {
  if (!bias.defined()) return;
  o.bias = slice<T>(bias, n, h);
  o.bias_row = bias.stride(2);
  o.bias_col = bias.stride(3);
}

// The forward's geometry for 4-D tensors (the op's layout): every sequence has length L / S.
template <typename T>
struct TensorGeometry {
  const Tensor &out, &lse, &q, &k, &v, &bias;
  Shapes g;
  TensorGeometry(const Tensor& out_, const Tensor& lse_, const Tensor& q_, const Tensor& k_,
                 const Tensor& v_, const Tensor& bias_)
      : out(out_), lse(lse_), q(q_), k(k_), v(v_), bias(bias_), g(q_, k_, v_) {}
  int64_t sequences() const { return g.N; }
  int64_t length(int64_t) const { return g.L; }
  int64_t max_keys() const { return g.S; }
  HeadOperands<T> at(int64_t n, int64_t h) const {
    const int64_t hk = h / g.group;
    HeadOperands<T> o{slice<T>(q, n, h),
                      slice<T>(k, n, hk),
                      slice<T>(v, n, hk),
                      out.data<T>() + n * out.stride(0) + h * out.stride(1),
                      lse.data<T>() + (n * g.Hq + h) * g.L,
                      q.stride(2),
                      k.stride(2),
                      v.stride(2),
                      out.stride(2),
                      g.L,
                      g.S,
                      nullptr,
                      0,
                      0};
    set_bias(o, bias, n, h);
    return o;
  }
};

// The fastpath's geometry: self-attention over a packed QKV projection, rows (T, 3 H D) with
// sequence n owning rows [offsets[n], offsets[n + 1]); out (T, H D). Queries, keys and values
// are the three column thirds, heads D columns apart, so no transpose is ever materialised.
template <typename T>
struct PackedGeometry {
  T* out;
  const T* qkv;
  const int64_t* offsets;
  const Tensor& bias;  // undefined, or (N, H, L, L) when every sequence has length L
  Shapes g;
  int64_t longest = 0;
  PackedGeometry(const Tensor& out_, const Tensor& qkv_, const int64_t* offsets_, int64_t n,
                 int64_t heads, const Tensor& bias_)
      : out(out_.data<T>()),
        qkv(qkv_.data<T>()),
        offsets(offsets_),
        bias(bias_),
        g(n, heads, qkv_.size(1) / (3 * heads)) {
    for (int64_t i = 0; i < n; ++i) longest = std::max(longest, offsets[i + 1] - offsets[i]);
    g.L = g.S = longest;
  }
  int64_t sequences() const { return g.N; }
  int64_t length(int64_t n) const { return offsets[n + 1] - offsets[n]; }
  int64_t max_keys() const { return longest; }
  HeadOperands<T> at(int64_t n, int64_t h) const {
    const int64_t width = g.Hq * g.E, row = 3 * width, len = length(n);
    const T* base = qkv + offsets[n] * row + h * g.E;
    HeadOperands<T> o{base,
                      base + width,
                      base + 2 * width,
                      out + offsets[n] * width + h * g.E,
                      nullptr,
                      row,
                      row,
                      row,
                      width,
                      len,
                      len,
                      nullptr,
                      0,
                      0};
    set_bias(o, bias, n, h);
    return o;
  }
};

// 2^x for x <= kHeadroom, -inf or NaN: the softmax works in base 2 (the forward's scores carry
// the factor log2(e), folded into the scale of Q), so the reduction is n = round(x), f = x - n in
// [-1/2, 1/2], with no multiply by log2(e) and no two-part ln 2. float: a degree-5 polynomial
// for 2^f, fitted for relative error (1.9e-7 with float rounding, about 3 ulp; the softmax's sum
// and the products with V round more than that). The clamp keeps -inf (masked scores) out of
// the reduction; vscalefps (or the exponent bits) then give 2^n, 0 below the subnormals.
inline vec::Vec<float> exp2_scores(vec::Vec<float> x) {
  using V = vec::Vec<float>;
  const V xc = vec::max_with(V(-151.0f), x);  // 2^-151 rounds to 0
  const V n = vec::round_nearest(xc);
  const V f = xc - n;
  V p = 1.32647273e-3f;
  p = vec::fma(p, f, V(9.67151299e-3f));
  p = vec::fma(p, f, V(5.55073358e-2f));
  p = vec::fma(p, f, V(2.40222424e-1f));
  p = vec::fma(p, f, V(6.93147004e-1f));
  p = vec::fma(p, f, V(1.0f));
  return vec::scale_by_pow2<float, true>(p, n);  // n <= kHeadroom: no overflow to handle
}
inline vec::Vec<double> exp2_scores(vec::Vec<double> x) {
  return vec::exp<double, true>(x * vec::Vec<double>(kLn2));
}

// Note [Stale reference]
// The online softmax keeps, per query row, a reference m, the sum l of 2^(s - m) over the keys
// seen so far, and the output row O = sum 2^(s - m) v. Any m gives the same result (l and O
// scale together, and lse = m + log2 l), so m need not be the running max: it only has to keep
// 2^(s - m) finite. The forward's score tiles therefore take 2^(s - m) in dot_tile's epilogue,
// against the m they find, while the products are still in registers (ExpScores), instead of
// storing the scores and passing over them twice more (max, then exp) through L2: on a Cascade
// Lake Xeon those passes were 12% of the forward at L = 2048. A tile may hold scores up to
// kHeadroom above m, so probabilities reach 2^kHeadroom; a higher score raises m to the tile's
// max, and what the row has stored in this key block so far, and its sum, are scaled down by
// 2^(m_old - m_new) (rare: at most a few times per row, and once for the row's first tile, when
// m is still -inf). Key blocks that need their scores changed after the product (an additive
// mask, the causal mask inside the block, padding columns) keep the stored passes
// (softmax_block_row), which take m up to the block's max as before: both keep the same
// invariant, so blocks of either kind mix in one row. The price of the headroom: the output
// accumulates up to 2^kHeadroom times more before the final division by l, which overflows
// only for values within a factor 2^kHeadroom * S of float's largest.
constexpr int kHeadroom = 8;

// The tiles take the exp (forward and backward) and dS (backward) at the 32-register levels only.
// At avx2 both directions were 5-8% slower with them on the Xeon (the tiles there are 2 vectors
// wide, so each row's checks and sums cover half as many scores), and keep the stored passes,
// with each row's max taken by the forward's tiles.
template <typename T>
constexpr bool kExpInTiles = kWideRegisters<T>;

// The forward's epilogue: the tile's probabilities p = 2^(s - m) (scores s already in base 2)
// into rows `ldp` apart, each row's lane-wise sum into sums (W lanes a row). m, p and sums are
// indexed by the block's row.
template <typename T>
struct ExpScores {
  T* p;
  int64_t ldp;
  T* m;
  T* sums;

  template <int C>
  void row(vec::Vec<T> (&c)[C], int64_t row, int64_t j) const {
    using V = vec::Vec<T>;
    constexpr int64_t W = V::size;
    constexpr T kLow = -std::numeric_limits<T>::infinity();
    V mx = c[0];
    for (int k = 1; k < C; ++k) mx = vec::max_with(mx, c[k]);
    // A NaN score compares false here and flows through the exp into p and the sum.
    if (m[row] == kLow || vec::any(mx > V(m[row] + T(kHeadroom)))) {
      if (!raise_reference<C>(c, row, j)) return;
    }
    const V mv(m[row]);
    V sum = V::load(sums + row * W);
    for (int k = 0; k < C; ++k) {
      const V e = exp2_scores(c[k] - mv);
      e.store(p + row * ldp + j + k * W);
      sum = sum + e;
    }
    sum.store(sums + row * W);
  }

  // The rare branch of Note [Stale reference]: m[row] becomes the tile's largest score, and the
  // row's earlier probabilities in this block (columns [0, j)) and its sum are rescaled. A row
  // whose scores are all -inf or NaN so far keeps m = -inf and stores here p = 0, or NaN where a
  // score is NaN (which the sum carries to the output); then it returns false.
  template <int C>
  __attribute__((noinline, cold)) bool raise_reference(const vec::Vec<T> (&c)[C], int64_t row,
                                                       int64_t j) const {
    using V = vec::Vec<T>;
    constexpr int64_t W = V::size;
    constexpr T kLow = -std::numeric_limits<T>::infinity();
    // The max instruction returns its second operand when either is NaN, so the running max
    // (second) skips NaN scores.
    V top_lanes(m[row]);
    for (int k = 0; k < C; ++k) top_lanes = vec::max_with(c[k], top_lanes);
    const T top = vec::reduce_max(top_lanes);
    T* p_row = p + row * ldp;
    T* sum_row = sums + row * W;
    if (top == kLow) {
      T scores[C * W];
      for (int k = 0; k < C; ++k) c[k].store(scores + k * W);
      for (int64_t t = 0; t < C * W; ++t) {
        const T e = std::isnan(scores[t]) ? scores[t] : T(0);
        p_row[j + t] = e;
        sum_row[t % W] += e;
      }
      return false;
    }
    if (top > m[row]) {
      const T alpha = m[row] == kLow ? T(0) : std::exp2(m[row] - top);
      for (int64_t t = 0; t < j; ++t) p_row[t] *= alpha;
      for (int64_t t = 0; t < W; ++t) sum_row[t] *= alpha;
      m[row] = top;
    }
    return true;
  }
};

// The backward's first epilogue: P = exp(scale s - lse) = 2^(log2(e) (scale s - lse)), with one
// rounding for the shift (fma), into rows `ldp` apart; lse is indexed by the block's row. A row
// whose every key is masked (lse = -inf) has P = 0.
template <typename T>
struct ProbabilitiesFromLse {
  T* p;
  int64_t ldp;
  const T* lse;
  T scale_log2;

  template <int C>
  void row(vec::Vec<T> (&c)[C], int64_t i, int64_t j) const {
    using V = vec::Vec<T>;
    constexpr int64_t W = V::size;
    T* out = p + i * ldp + j;
    const T li = lse[i];
    if (li == -std::numeric_limits<T>::infinity()) {
      for (int k = 0; k < C; ++k) V(T(0)).store(out + k * W);
      return;
    }
    const V shift(-li * T(kLog2e)), scale(scale_log2);
    for (int k = 0; k < C; ++k) exp2_scores(vec::fma(c[k], scale, shift)).store(out + k * W);
  }
};

// The backward's second epilogue: from dP's tile, dS = scale P (dP - D) into rows `ld` apart, P
// read from the same place in rows `ld` apart; D (rowsum(dO * O)) is indexed by the block's row.
template <typename T>
struct ScoreGradients {
  const T* p;
  T* ds;
  int64_t ld;
  const T* d;
  T scale;

  template <int C>
  void row(vec::Vec<T> (&c)[C], int64_t i, int64_t j) const {
    using V = vec::Vec<T>;
    constexpr int64_t W = V::size;
    const int64_t at = i * ld + j;
    const V dr(d[i]), sv(scale);
    for (int k = 0; k < C; ++k) {
      (V::load(p + at + k * W) * sv * (c[k] - dr)).store(ds + at + k * W);
    }
  }
};

// One row of one key block of the online softmax, in base 2, for blocks whose scores were
// stored (Note [Stale reference]). The row's scores si[0, cols) (cols a multiple of 2 vectors;
// block_max, when given, their lane-wise max) become p = 2^(s - m'), where m' is the larger of
// the reference m and the block's max; the sum l and the output row (out_width wide) are
// rescaled by 2^(m - m').
//
// The max uses the plain max instruction, which may drop a NaN score; the exp of that score is
// NaN all the same, so a NaN still reaches l and the output. The one case where a dropped NaN
// would be lost is a row whose every other score is -inf (m' = -inf, nothing added): that rare
// branch checks for NaN itself.
constexpr int64_t kSoftmaxPrefetch = 128;  // elements ahead of the softmax's reads

template <typename T>
inline void softmax_block_row(T* si, int64_t cols, const T* block_max, T& m, T& l, T* out_row,
                              int64_t out_width) {
  using V = vec::Vec<T>;
  constexpr int64_t W = V::size;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  V mx0(kLow), mx1(kLow);
  if (block_max) {  // the lane-wise max, already taken by the score tiles
    mx0 = V::load(block_max);
  } else {
    for (int64_t j = 0; j < cols; j += 2 * W) {
      mx0 = vec::max_with(mx0, V::load(si + j));
      mx1 = vec::max_with(mx1, V::load(si + j + W));
    }
  }
  const T m_new = std::max(m, vec::reduce_max(vec::max_with(mx0, mx1)));
  if (m_new == kLow) {  // every key so far masked: nothing to add, unless a score is NaN
    const bool has_nan = std::any_of(si, si + cols, [](T x) { return std::isnan(x); });
    std::fill(si, si + cols, has_nan ? std::numeric_limits<T>::quiet_NaN() : T(0));
    if (has_nan) l = std::numeric_limits<T>::quiet_NaN();
    return;
  }
  const V mv(m_new);
  V sum0(T(0)), sum1(T(0));
  for (int64_t j = 0; j < cols; j += 2 * W) {
    // The score block (120 rows x 512 keys) lives in L2; fetching 8 lines ahead took 1% off the
    // forward on a Cascade Lake Xeon. A prefetch never faults, so the row's end needs no test;
    // the address is formed as an integer, as in accumulate_tile.
    const uintptr_t ahead = reinterpret_cast<uintptr_t>(si + j) + sizeof(T) * kSoftmaxPrefetch;
    __builtin_prefetch(reinterpret_cast<const void*>(ahead), 1, 3);
    __builtin_prefetch(reinterpret_cast<const void*>(ahead + sizeof(T) * W), 1, 3);
    const V e0 = exp2_scores(V::load(si + j) - mv);
    const V e1 = exp2_scores(V::load(si + j + W) - mv);
    e0.store(si + j);
    e1.store(si + j + W);
    sum0 = sum0 + e0;
    sum1 = sum1 + e1;
  }
  const T alpha = m == kLow ? T(0) : std::exp2(m - m_new);
  l = l * alpha + vec::reduce_add(sum0 + sum1);
  m = m_new;
  if (alpha != T(1)) {
    const V av(alpha);
    for (int64_t c = 0; c < out_width; c += W) (V::load(out_row + c) * av).store(out_row + c);
  }
}

template <typename T, typename Geometry>
void forward_impl(const Geometry& geo, const SdpaParams& p) {
  using V = vec::Vec<T>;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  const Shapes& g = geo.g;
  const int64_t W = V::size;
  const int64_t Ep = round_up(g.E, W), Evp = round_up(g.Ev, W);
  const int64_t kbp = round_up(kForwardKeyBlock, W);
  const int64_t lds = kbp + kRowPad<T>;
  constexpr int64_t P = kPanel<T>;
  // Scores are kept in base 2 (scale log2(e) q k^T): the softmax then needs 2^x, not e^x.
  const T scale_log2 = static_cast<T>(p.scale * kLog2e);
  // Work units: (sequence, query head, block of queries), numbered sequence by sequence.
  std::vector<int64_t> first_unit(g.N + 1, 0);
  int64_t flops = 0;
  for (int64_t n = 0; n < g.N; ++n) {
    const int64_t len = geo.length(n);
    first_unit[n + 1] =
        first_unit[n] + g.Hq * ((len + kForwardQueryBlock<T> - 1) / kForwardQueryBlock<T>);
    flops += g.Hq * len * len * (g.E + g.Ev);
  }
  const int64_t units = first_unit[g.N];
  if (units == 0) return;
  const int64_t cost = flops / units;
  const int64_t max_s = geo.max_keys();
  parallel_for(
      0, units, std::max<int64_t>(1, kGrainSize / std::max<int64_t>(cost, 1)),
      [&](int64_t u0, int64_t u1) {
        // K (transposed, E x Sp) and V (S x Evp) of one (sequence, key head), packed once for
        // all the query blocks of this thread's range that use them (consecutive units share a
        // head).
        const int64_t Sp_max = round_up(max_s, P);
        std::vector<T> qt(kForwardQueryBlock<T> * Ep), kt(g.E * Sp_max), vt(max_s * Evp),
            sb(kForwardQueryBlock<T> * lds), ot(kForwardQueryBlock<T> * Evp),
            m(kForwardQueryBlock<T>), m_before(kForwardQueryBlock<T>), l(kForwardQueryBlock<T>),
            sums(kForwardQueryBlock<T> * W), row_max(kForwardQueryBlock<T> * W);
        int64_t packed_n = -1, packed_hk = -1;
        int64_t n =
            std::upper_bound(first_unit.begin(), first_unit.end(), u0) - first_unit.begin() - 1;
        for (int64_t u = u0; u < u1; ++u) {
          while (u >= first_unit[n + 1]) ++n;
          const int64_t q_blocks =
              (geo.length(n) + kForwardQueryBlock<T> - 1) / kForwardQueryBlock<T>;
          const int64_t h = (u - first_unit[n]) / q_blocks, qb = (u - first_unit[n]) % q_blocks;
          const HeadOperands<T> o = geo.at(n, h);
          const int64_t q0 = qb * kForwardQueryBlock<T>,
                        rows = std::min(kForwardQueryBlock<T>, o.L - q0);
          const int64_t hk = h / g.group, Sp = round_up(o.S, P);
          if (n != packed_n || hk != packed_hk) {
            pack_panels(o.k, o.k_row, o.S, g.E, kt.data(), Sp);
            pack_rows(o.v, o.v_row, o.S, g.Ev, vt.data(), Evp, o.S);
            packed_n = n;
            packed_hk = hk;
          }
          pack_rows(o.q + q0 * o.q_row, o.q_row, rows, g.E, qt.data(), Ep, rows, scale_log2);
          std::fill(ot.begin(), ot.end(), T(0));
          std::fill(m.begin(), m.end(), kLow);
          std::fill(l.begin(), l.end(), T(0));
          const int64_t k_end = p.is_causal ? std::min(o.S, q0 + rows) : o.S;
          for (int64_t k0 = 0; k0 < k_end; k0 += kForwardKeyBlock) {
            const int64_t cols = std::min(kForwardKeyBlock, k_end - k0), colsp = round_up(cols, P);
            // Columns past `cols` (up to colsp) are the next keys or the zero padding: their
            // scores are set to -inf below. q is already scaled. When nothing changes the
            // scores after the product (no bias, no causal mask within the block, no columns
            // past `cols`), the tiles take the exp themselves (Note [Stale reference]), or, at
            // the 16-register levels, each row's max.
            const bool masked_within = p.is_causal && k0 + cols > q0 + 1;
            const bool plain = !o.bias && cols == colsp && !masked_within;
            const int64_t diag = masked_within ? q0 - k0 : kUnmasked;
            const T* kb = kt.data() + k0 * g.E;
            if (kExpInTiles<T> && plain) {
              std::copy(m.begin(), m.begin() + rows, m_before.begin());
              std::fill(sums.begin(), sums.begin() + rows * W, T(0));
              dot_block(qt.data(), Ep, rows, kb, g.E, colsp,
                        ExpScores<T>{sb.data(), lds, m.data(), sums.data()});
              for (int64_t i = 0; i < rows; ++i) {
                const T alpha = m_before[i] == kLow ? T(0) : std::exp2(m_before[i] - m[i]);
                l[i] = l[i] * alpha + vec::reduce_add(V::load(sums.data() + i * W));
                if (alpha == T(1)) continue;
                T* oi = ot.data() + i * Evp;
                for (int64_t c = 0; c < Evp; c += W) (V::load(oi + c) * V(alpha)).store(oi + c);
              }
            } else {
              if (plain) {
                std::fill(row_max.begin(), row_max.begin() + rows * W, kLow);
                dot_block(qt.data(), Ep, rows, kb, g.E, colsp,
                          StoreProductsAndMax<T>{sb.data(), lds, row_max.data()});
              } else {
                dot_block(qt.data(), Ep, rows, kb, g.E, colsp, StoreProducts<T>{sb.data(), lds},
                          diag);
              }
              finish_scores(sb.data(), lds, rows, cols, colsp, q0, k0, o.bias, o.bias_row,
                            o.bias_col, T(1), p.is_causal, T(kLog2e));
              for (int64_t i = 0; i < rows; ++i) {
                softmax_block_row(sb.data() + i * lds, visible_end<T>(diag, i, colsp, 2 * W),
                                  plain ? row_max.data() + i * W : nullptr, m[i], l[i],
                                  ot.data() + i * Evp, Evp);
              }
            }
            accumulate_rows(sb.data(), lds, rows, cols, vt.data() + k0 * Evp, Evp, Evp, ot.data(),
                            Evp, diag);
          }
          for (int64_t i = 0; i < rows; ++i) {
            // A row with every key masked keeps l = 0: its output is 0 and its lse -inf.
            const T inv = l[i] > T(0) ? T(1) / l[i] : T(0);
            T* oi = o.out + (q0 + i) * o.out_row;
            for (int64_t c = 0; c < g.Ev; ++c) oi[c] = ot[i * Evp + c] * inv;
            if (o.lse) o.lse[q0 + i] = l[i] > T(0) ? (m[i] + std::log2(l[i])) * T(kLn2) : kLow;
          }
        }
      });
}

template <typename T>
void backward_impl(const Tensor& dq, const Tensor& dk, const Tensor& dv, const Tensor& grad_out,
                   const Tensor& q, const Tensor& k, const Tensor& v, const Tensor& bias,
                   const Tensor& out, const Tensor& lse, const SdpaParams& p) {
  using V = vec::Vec<T>;
  constexpr T kLow = -std::numeric_limits<T>::infinity();
  const Shapes g(q, k, v);
  const int64_t W = V::size;
  const int64_t Ep = round_up(g.E, W), Evp = round_up(g.Ev, W);
  const int64_t kbp = round_up(kKeyBlock, W);
  const int64_t lds = kbp + kRowPad<T>;
  constexpr int64_t P = kPanel<T>;
  const T scale = static_cast<T>(p.scale);
  const T scale_log2 = static_cast<T>(p.scale * kLog2e);
  const int64_t units = g.N * g.Hk;
  parallel_for(0, units, 1, [&](int64_t u0, int64_t u1) {
    // Per unit: Q, dO and dQ of the group's query heads as padded tiles of all their rows
    // (packed once, not once per key block), and each key block's K, K^T and V^T.
    const int64_t rows_all = g.group * g.L;
    std::vector<T> kt(Ep * kbp), kp(kbp * Ep), vt(Evp * kbp), qall(rows_all * Ep),
        doall(rows_all * Evp), dqall(rows_all * Ep), sb(kQueryBlock * lds), dpb(kQueryBlock * lds),
        dka(kbp * Ep), dva(kbp * Evp), drow(rows_all);
    for (int64_t u = u0; u < u1; ++u) {
      const int64_t n = u / g.Hk, hk = u % g.Hk;
      const T* ks = slice<T>(k, n, hk);
      const T* vs = slice<T>(v, n, hk);
      std::fill(dqall.begin(), dqall.end(), T(0));
      for (int64_t h = hk * g.group; h < (hk + 1) * g.group; ++h) {
        // D_i = sum(dO_i * O_i), the softmax backward's row term.
        const int64_t r0 = (h - hk * g.group) * g.L;
        pack_rows(slice<T>(q, n, h), q.stride(2), g.L, g.E, qall.data() + r0 * Ep, Ep, g.L);
        pack_rows(slice<T>(grad_out, n, h), grad_out.stride(2), g.L, g.Ev, doall.data() + r0 * Evp,
                  Evp, g.L);
        const T* gs = slice<T>(grad_out, n, h);
        const T* os = slice<T>(out, n, h);
        T* d = drow.data() + (h - hk * g.group) * g.L;
        for (int64_t i = 0; i < g.L; ++i) {
          const T* gi = gs + i * grad_out.stride(2);
          const T* oi = os + i * out.stride(2);
          V acc(T(0));
          int64_t c = 0;
          for (; c + W <= g.Ev; c += W) acc = vec::fma(V::load(gi + c), V::load(oi + c), acc);
          T sum = vec::reduce_add(acc);
          for (; c < g.Ev; ++c) sum += gi[c] * oi[c];
          d[i] = sum;
        }
      }
      for (int64_t k0 = 0; k0 < g.S; k0 += kKeyBlock) {
        const int64_t cols = std::min(kKeyBlock, g.S - k0), colsp = round_up(cols, P);
        pack_panels(ks + k0 * k.stride(2), k.stride(2), cols, g.E, kt.data(), colsp);
        pack_rows(ks + k0 * k.stride(2), k.stride(2), cols, g.E, kp.data(), Ep, cols);
        pack_panels(vs + k0 * v.stride(2), v.stride(2), cols, g.Ev, vt.data(), colsp);
        std::fill(dka.begin(), dka.end(), T(0));
        std::fill(dva.begin(), dva.end(), T(0));
        for (int64_t h = hk * g.group; h < (hk + 1) * g.group; ++h) {
          const int64_t r0 = (h - hk * g.group) * g.L;
          const T* ls = lse.data<T>() + (n * g.Hq + h) * g.L;
          const T* bs = bias.defined() ? slice<T>(bias, n, h) : nullptr;
          const T* d = drow.data() + r0;
          // Causal: query i sees key j only when j <= i, so queries before k0 see none of the
          // block.
          const int64_t q_start = p.is_causal ? k0 / kQueryBlock * kQueryBlock : 0;
          for (int64_t q0 = q_start; q0 < g.L; q0 += kQueryBlock) {
            const int64_t rows = std::min(kQueryBlock, g.L - q0);
            const T* qt = qall.data() + (r0 + q0) * Ep;
            const T* dot = doall.data() + (r0 + q0) * Evp;
            T* dqt = dqall.data() + (r0 + q0) * Ep;
            // Note [Causal blocks]: the products skip what the mask hides.
            const int64_t diag = p.is_causal && k0 + cols > q0 + 1 ? q0 - k0 : kUnmasked;
            // Without a bias, a mask inside the block or padding columns, the tiles take P and dS
            // themselves (the epilogues), as the forward's take its probabilities.
            const bool fused = kExpInTiles<T> && !bs && diag == kUnmasked && cols == colsp;
            if (fused) {
              dot_block(qt, Ep, rows, kt.data(), g.E, colsp,
                        ProbabilitiesFromLse<T>{sb.data(), lds, ls + q0, scale_log2});
            } else {
              dot_block(qt, Ep, rows, kt.data(), g.E, colsp, StoreProducts<T>{sb.data(), lds},
                        diag);
              finish_scores(sb.data(), lds, rows, cols, colsp, q0, k0, bs,
                            bias.defined() ? bias.stride(2) : 0,
                            bias.defined() ? bias.stride(3) : 0, scale, p.is_causal);
              // P = exp(S - lse); rows whose every key is masked (lse = -inf) have P = 0.
              for (int64_t i = 0; i < rows; ++i) {
                T* si = sb.data() + i * lds;
                const T li = ls[q0 + i];
                const int64_t end = visible_end<T>(diag, i, colsp, W);
                if (li == kLow) {
                  std::fill(si, si + end, T(0));
                  continue;
                }
                const V lv(li);
                for (int64_t j = 0; j < end; j += W) {
                  vec::exp(V::load(si + j) - lv).store(si + j);
                }
              }
            }
            // dV += P^T dO.
            accumulate_transposed(sb.data(), lds, rows, cols, dot, Evp, Evp, dva.data(), Evp, diag);
            // dP = dO V^T, then dS = scale * P * (dP - D). In a causal block dP is computed only
            // up to the row's tile end (dot_block), so dS is zeroed from there, not computed: a
            // product 0 * dP with dP never written could be NaN.
            if (fused) {
              dot_block(dot, Evp, rows, vt.data(), g.Ev, colsp,
                        ScoreGradients<T>{sb.data(), dpb.data(), lds, d + q0, scale});
            } else {
              dot_block(dot, Evp, rows, vt.data(), g.Ev, colsp, StoreProducts<T>{dpb.data(), lds},
                        diag);
              for (int64_t i = 0; i < rows; ++i) {
                const V dv_row(d[q0 + i]);
                T* pi = sb.data() + i * lds;
                T* dpi = dpb.data() + i * lds;
                const int64_t end = visible_end<T>(diag, i, colsp, W);
                const int64_t computed = std::min(end, round_up(tile_end(diag, i, 1, cols), W));
                int64_t j = 0;
                for (; j < computed; j += W) {
                  (V::load(pi + j) * (V::load(dpi + j) - dv_row) * V(scale)).store(dpi + j);
                }
                std::fill(dpi + j, dpi + end, T(0));
              }
            }
            // dQ += dS K, dK += dS^T Q.
            accumulate_rows(dpb.data(), lds, rows, cols, kp.data(), Ep, Ep, dqt, Ep, diag);
            accumulate_transposed(dpb.data(), lds, rows, cols, qt, Ep, Ep, dka.data(), Ep, diag);
          }
        }
        T* dks = dk.data<T>() + ((n * g.Hk + hk) * g.S + k0) * g.E;
        T* dvs = dv.data<T>() + ((n * g.Hk + hk) * g.S + k0) * g.Ev;
        for (int64_t j = 0; j < cols; ++j) {
          std::memcpy(dks + j * g.E, dka.data() + j * Ep, sizeof(T) * g.E);
          std::memcpy(dvs + j * g.Ev, dva.data() + j * Evp, sizeof(T) * g.Ev);
        }
      }
      for (int64_t h = hk * g.group; h < (hk + 1) * g.group; ++h) {
        const int64_t r0 = (h - hk * g.group) * g.L;
        T* dqs = dq.data<T>() + (n * g.Hq + h) * g.L * g.E;
        for (int64_t i = 0; i < g.L; ++i) {
          std::memcpy(dqs + i * g.E, dqall.data() + (r0 + i) * Ep, sizeof(T) * g.E);
        }
      }
    }
  });
}

void sdpa_forward_kernel(const Tensor& out, const Tensor& lse, const Tensor& q, const Tensor& k,
                         const Tensor& v, const Tensor& bias, const SdpaParams& p) {
  dispatch_dtype<kFloat32 | kFloat64>(q.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward_impl<T>(TensorGeometry<T>(out, lse, q, k, v, bias), p);
  });
}

void sdpa_packed_forward_kernel(const Tensor& out, const Tensor& qkv, const int64_t* offsets,
                                int64_t sequences, int64_t heads, const Tensor& bias,
                                const SdpaParams& p) {
  dispatch_dtype<kFloat32 | kFloat64>(qkv.dtype(), "scaled_dot_product_attention", [&](auto tag) {
    using T = typename decltype(tag)::type;
    forward_impl<T>(PackedGeometry<T>(out, qkv, offsets, sequences, heads, bias), p);
  });
}

void sdpa_backward_kernel(const Tensor& dq, const Tensor& dk, const Tensor& dv,
                          const Tensor& grad_out, const Tensor& q, const Tensor& k, const Tensor& v,
                          const Tensor& bias, const Tensor& out, const Tensor& lse,
                          const SdpaParams& p) {
  dispatch_dtype<kFloat32 | kFloat64>(
      q.dtype(), "scaled_dot_product_attention_backward", [&](auto tag) {
        using T = typename decltype(tag)::type;
        backward_impl<T>(dq, dk, dv, grad_out, q, k, v, bias, out, lse, p);
      });
}

}  // namespace

EMBER_REGISTER_KERNEL(sdpa_forward_stub, CPU, sdpa_forward_kernel);
EMBER_REGISTER_KERNEL(sdpa_backward_stub, CPU, sdpa_backward_kernel);
EMBER_REGISTER_KERNEL(sdpa_packed_forward_stub, CPU, sdpa_packed_forward_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
