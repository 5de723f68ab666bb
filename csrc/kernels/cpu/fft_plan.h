// Plans of Ember's 1-D FFTs: a complex transform of any length n (mixed-radix Stockham passes, or
// Bluestein's chirp-z convolution when n has a prime factor above kMaxRadix) and the real
// transforms built on a complex one of half the length. Plans are immutable once built and shared
// through a thread-safe cache keyed by length and element type; the direction is a template
// argument of the executor (the twiddles of the inverse are the conjugates). docs/design/fft.md.
#pragma once
#include "kernels/cpu/cpu_level.h"

#include <cstdint>
#include <memory>
#include <vector>

#include "kernels/cpu/fft_butterflies.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace fft {

// How a plan of passes is laid out: chosen by length (kAuto), or four steps wherever the length
// splits (kFourStep; the tests use it to reach the four-step code at lengths they can check).
enum class PlanShape { kAuto, kFourStep };

template <typename T>
class ComplexPlan {
 public:
  explicit ComplexPlan(int64_t n, PlanShape shape = PlanShape::kAuto);
  int64_t size() const { return n_; }
  bool four_step() const { return col_plan_ != nullptr; }
  // T's of work memory execute() needs besides its buffer.
  int64_t work_size() const { return work_size_; }
  // Transforms the split-complex buffer `buf` (re[0, n) then im[0, n)) without normalisation,
  // e^{-2 pi i jk/n} when Fwd, e^{+...} otherwise. `work` holds work_size() T's. Returns where
  // the result is: buf or work (same layout). Large transforms split their passes over the
  // thread pool (serial when called inside a parallel region).
  template <bool Fwd>
  T* execute(T* buf, T* work) const;
  // T's of work memory transform() needs.
  int64_t io_work_size() const { return 2 * n_ + work_size_; }
  // Transforms `in` into `out` (each interleaved like std::complex when *_cx, else split), the
  // interleaved output multiplied by `scale` (a split output is not scaled: scale must be 1).
  // in may equal out. The first pass reads interleaved input and the last one writes
  // interleaved output where their shapes allow (docs/design/fft.md), saving two passes over
  // memory. `work` holds io_work_size() T's.
  template <bool Fwd>
  void transform(const T* in, bool in_cx, T* out, bool out_cx, T scale, T* work) const;

 private:
  struct PassData {
    int radix;
    int64_t m, s, tw_offset, const_offset;
  };
  int64_t n_;
  int64_t work_size_ = 0;
  std::vector<PassData> passes_;
  std::vector<T> tables_;  // twiddles and odd-radix constants of every pass
  // Four-step (n = n1 x n2, both sub-plans of passes; empty col_plan_ otherwise): column
  // transforms of n1, twiddles w_n^{j2 k1}, row transforms of n2. The twiddle of row j2 at k1 =
  // c W + d is coarse[j2][c] * fine[j2][d] (W: the vector width), two small tables instead of n.
  int64_t n1_ = 0, n2_ = 0;
  std::shared_ptr<const ComplexPlan<T>> col_plan_, row_plan_;
  std::vector<T> tw_coarse_, tw_fine_;
  // Bluestein (empty sub_ when the passes above do the transform).
  std::shared_ptr<const ComplexPlan<T>> sub_;
  int64_t m_ = 0;                       // the convolution length, 5-smooth, >= 2n - 1
  std::vector<T> chirp_re_, chirp_im_;  // e^{-i pi k^2 / n}, k < n
  std::vector<T> kern_re_, kern_im_;    // DFT_m of conj(chirp) laid out circularly, over m

  Pass<T> pass_of(const PassData& pd) const;
  template <bool Fwd>
  T* run_passes(T* buf, T* work) const;
  template <bool Fwd>
  T* run_bluestein(T* buf, T* work) const;
  // `t` holds 2n T's (the twiddled column transforms, split).
  template <bool Fwd>
  void run_four_step(const T* in, bool in_cx, T* out, bool out_cx, T scale, T* t) const;
};

// A real transform of length n: for even n, a complex transform of n / 2 (the even and odd
// samples as real and imaginary parts) plus one pass that separates the two spectra; for odd n,
// the complex transform of n.
template <typename T>
struct RealPlan {
  explicit RealPlan(int64_t n);
  int64_t n;
  std::shared_ptr<const ComplexPlan<T>> complex;  // of n / 2 (even n) or n (odd n)
  std::vector<T> wr, wi;                          // e^{-2 pi i k / n}, k <= n / 2 (even n)
};

// A per-thread scratch buffer of at least `count` T's, one per `slot` (0: the row kernels, 1: the
// four-step blocks), kept between calls. Buffers of 4 MiB and more are 2 MiB-aligned and advised
// onto transparent huge pages: a four-step transform walks them with page-sized strides, and
// with 4 KiB pages nearly every access of those walks missed the TLB.
template <typename T>
T* scratch(int slot, int64_t count);

// The cached plans (built on first use; safe to call from any thread).
template <typename T>
std::shared_ptr<const ComplexPlan<T>> complex_plan(int64_t n);
template <typename T>
std::shared_ptr<const RealPlan<T>> real_plan(int64_t n);

}  // namespace fft
}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
