// Loop templates for CPU kernels over a TensorIterator. A kernel is a scalar lambda; the loop
// picks a contiguous path (which the compiler vectorises), a scalar-broadcast path, or a general
// strided path:
//
//   cpu_kernel(iter, [](float a, float b) { return a + b; });
//
// Argument types come from the lambda's signature and must match the operands' dtypes (inputs
// have been promoted by the iterator); the return type must match the output dtype.
#pragma once
#include <immintrin.h>
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>
#include "kernels/cpu/cpu_level.h"

#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

template <typename F>
struct function_traits : function_traits<decltype(&F::operator())> {};
template <typename C, typename R, typename... A>
struct function_traits<R (C::*)(A...) const> {
  using result_type = R;
  using args_tuple = std::tuple<std::decay_t<A>...>;
  static constexpr int arity = sizeof...(A);
  template <int I>
  using arg = std::tuple_element_t<I, args_tuple>;
};

// The loops below are flattened: the op (and everything it calls) is inlined into the loop body,
// which is what lets GCC vectorise it. Without this, an op that is large after inlining its
// helpers (sigmoid, tanh, gelu, ...) stays an out-of-line call per element, 5-20x slower.
#define EMBER_FLATTEN __attribute__((flatten))

namespace detail {

template <typename F, size_t... I>
EMBER_FLATTEN inline void basic_loop(char** data, const int64_t* strides, int64_t n, const F& op,
                                     std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  char* out = data[0];
  for (int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<R*>(out + k * strides[0]) =
        op(*reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1] +
                                                                      k * strides[I + 1])...);
  }
}

template <typename F, size_t... I>
EMBER_FLATTEN inline void contiguous_loop(char** data, int64_t n, const F& op,
                                          std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  R* out = reinterpret_cast<R*>(data[0]);
  std::tuple<const typename traits::template arg<I>*...> in{
      reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
  for (int64_t k = 0; k < n; ++k) out[k] = op(std::get<I>(in)[k]...);
}

// Input S (0-based among inputs) is a broadcast scalar; the others are contiguous.
template <int S, typename F, size_t... I>
EMBER_FLATTEN inline void scalar_loop(char** data, int64_t n, const F& op,
                                      std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  R* out = reinterpret_cast<R*>(data[0]);
  using ST = typename traits::template arg<S>;
  const ST scalar = *reinterpret_cast<const ST*>(data[S + 1]);
  std::tuple<const typename traits::template arg<I>*...> in{
      reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
  for (int64_t k = 0; k < n; ++k) out[k] = op((I == S ? scalar : std::get<I>(in)[k])...);
}

template <typename F, size_t... I>
inline bool is_contiguous_loop_impl(const int64_t* strides, std::index_sequence<I...>) {
  using traits = function_traits<F>;
  return strides[0] == sizeof(typename traits::result_type) &&
         ((strides[I + 1] == sizeof(typename traits::template arg<I>)) && ...);
}

template <typename F>
inline bool is_contiguous_loop(const int64_t* strides) {
  return is_contiguous_loop_impl<F>(strides, std::make_index_sequence<function_traits<F>::arity>{});
}

// Note [Streaming Stores]: an output much larger than the last-level cache will not be read back
// from cache, so writing it with ordinary stores wastes bandwidth: each cache line is first read
// from memory (write-allocate) and later evicted. Non-temporal stores skip both. Results are
// computed into a small block in L1 with the ordinary vectorised loop, then streamed out in whole
// cache lines. Measured on this project's machine (Zen 4, 2 cores), a 256 MiB float32 add: 40 /
// 44 GB/s on 1 / 2 threads with 1 KiB blocks, 27-30 / 33 GB/s with ordinary stores. The block
// must stay small: with 4 KiB blocks the block and the output share their low 12 address bits
// (4K aliasing) and the loop ran at 22 GB/s. Outputs below the threshold keep ordinary stores,
// because the next op will likely read them from cache.
// Broadcast ops stream row by row (a per-sample outer product g[:, :, None] * x[:, None, :] of
// 98 MiB: 4.9 ms with ordinary stores, 3.8 ms streamed, on 1 thread). That needs every store of
// the row to be non-temporal, the partial cache lines at its ends too, and no fence per row: with
// either an ordinary store per row or a fence per row it ran no faster than ordinary stores.
constexpr int64_t kStreamingStoreBytes = int64_t(16) << 20;
constexpr int64_t kStreamingBlockBytes = 1024;

// Copies `bytes` (a multiple of 64) from 64-byte aligned src to 64-byte aligned dst with
// non-temporal stores.
inline void stream_out(char* dst, const char* src, int64_t bytes) {
#if defined(__AVX512F__)
  for (int64_t i = 0; i < bytes; i += 64) {
    _mm512_stream_si512(reinterpret_cast<__m512i*>(dst + i),
                        _mm512_load_si512(reinterpret_cast<const void*>(src + i)));
  }
#elif defined(__AVX__)
  for (int64_t i = 0; i < bytes; i += 32) {
    _mm256_stream_si256(reinterpret_cast<__m256i*>(dst + i),
                        _mm256_load_si256(reinterpret_cast<const __m256i*>(src + i)));
  }
#else
  std::memcpy(dst, src, bytes);
#endif
}

// Stores one element with a non-temporal store where the element is 4 or a multiple of 8 bytes
// wide and suitably aligned, else with an ordinary store. The partial cache lines at the ends of
// a streamed row go through here: an ordinary store there costs a write-allocate read of the
// line and breaks up the write-combining of its neighbours, and with one such line per row of a
// broadcast product the rows ran no faster than with ordinary stores throughout.
template <typename R>
inline void stream_element(R* dst, const R& value) {
  const auto addr = reinterpret_cast<uintptr_t>(dst);
  if constexpr (sizeof(R) == 4) {
    if (addr % 4 == 0) {
      int32_t bits;
      std::memcpy(&bits, &value, 4);
      _mm_stream_si32(reinterpret_cast<int*>(dst), bits);
      return;
    }
  } else if constexpr (sizeof(R) % 8 == 0) {
    if (addr % 8 == 0) {
      for (size_t piece = 0; piece < sizeof(R); piece += 8) {
        long long bits;
        std::memcpy(&bits, reinterpret_cast<const char*>(&value) + piece, 8);
        _mm_stream_si64(reinterpret_cast<long long*>(reinterpret_cast<char*>(dst) + piece), bits);
      }
      return;
    }
  }
  *dst = value;
}

// Writes n results of type R to `out` with non-temporal stores. compute(k, block, count) puts the
// results for elements [k, k + count) into `block`, a buffer of kStreamingBlockBytes in L1; whole
// cache lines of it are streamed out and the partial lines at either end element by element. No
// fence here: TensorIterator::serial_for_each fences once at the end of its range, because a fence
// per row (a broadcast product calls this once per output row) cost more than streaming saved.
template <typename R, typename Compute>
EMBER_FLATTEN inline void stream_results(char* out, int64_t n, const Compute& compute) {
  constexpr int64_t kBlock = kStreamingBlockBytes / int64_t(sizeof(R));
  static_assert(kStreamingBlockBytes % sizeof(R) == 0, "a block holds whole elements");
  alignas(64) R block[kBlock];
  R* dst = reinterpret_cast<R*>(out);
  auto stream_partial = [&](int64_t k, int64_t count) {
    if (count <= 0) return;
    compute(k, block, count);
    const int64_t lines =
        reinterpret_cast<uintptr_t>(dst + k) % 64 == 0 ? count * int64_t(sizeof(R)) / 64 * 64 : 0;
    stream_out(reinterpret_cast<char*>(dst + k), reinterpret_cast<const char*>(block), lines);
    for (int64_t j = lines / int64_t(sizeof(R)); j < count; ++j)
      stream_element(dst + k + j, block[j]);
  };
  const auto addr = reinterpret_cast<uintptr_t>(out);
  // Head: element by element until the output is cache-line aligned (elements whose size does not
  // divide 64 never align; they are streamed element by element throughout).
  int64_t head = addr % 64 == 0 ? 0 : (64 - addr % 64) / sizeof(R);
  if ((64 - addr % 64) % sizeof(R) != 0) head = n;
  head = std::min(head, n);
  for (int64_t k = 0; k < head; k += kBlock) stream_partial(k, std::min(kBlock, head - k));
  int64_t k = head;
  for (; k + kBlock <= n; k += kBlock) {
    compute(k, block, kBlock);
    stream_out(reinterpret_cast<char*>(dst + k), reinterpret_cast<const char*>(block),
               kStreamingBlockBytes);
  }
  stream_partial(k, n - k);
}

template <typename F, size_t... I>
EMBER_FLATTEN inline void contiguous_loop_streaming(char** data, int64_t n, const F& op,
                                                    std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  std::tuple<const typename traits::template arg<I>*...> in{
      reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
  stream_results<R>(data[0], n, [&](int64_t k, R* block, int64_t count) {
    for (int64_t j = 0; j < count; ++j) block[j] = op(std::get<I>(in)[k + j]...);
  });
}

// As scalar_loop, with non-temporal stores (a broadcast product such as a per-sample outer
// product).
template <int S, typename F, size_t... I>
EMBER_FLATTEN inline void scalar_loop_streaming(char** data, int64_t n, const F& op,
                                                std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  using ST = typename traits::template arg<S>;
  const ST scalar = *reinterpret_cast<const ST*>(data[S + 1]);
  std::tuple<const typename traits::template arg<I>*...> in{
      reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
  stream_results<R>(data[0], n, [&](int64_t k, R* block, int64_t count) {
    for (int64_t j = 0; j < count; ++j)
      block[j] = op((I == S ? scalar : std::get<I>(in)[k + j])...);
  });
}

// A row is streamed when the whole output is large (Note [Streaming Stores]) and the row spans a
// few cache lines: shorter rows of a strided output would stream mostly partial lines.
constexpr int64_t kStreamingRowBytes = 256;

}  // namespace detail

// Elementwise kernel: output 0 = op(inputs...).
template <typename F>
void cpu_kernel(const TensorIterator& iter, const F& op, int64_t grain = kGrainSize) {
  using traits = function_traits<F>;
  constexpr int N = traits::arity;
  using Idx = std::make_index_sequence<N>;
  using R = typename traits::result_type;
  const bool streaming = iter.numel() * int64_t(sizeof(R)) >= detail::kStreamingStoreBytes;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        const bool stream_row = streaming && n * int64_t(sizeof(R)) >= detail::kStreamingRowBytes;
        if (detail::is_contiguous_loop<F>(strides)) {
          if (stream_row) {
            detail::contiguous_loop_streaming(data, n, op, Idx{});
          } else {
            detail::contiguous_loop(data, n, op, Idx{});
          }
          return;
        }
        if constexpr (N == 2) {
          if (strides[0] == sizeof(R) && strides[1] == 0 &&
              strides[2] == sizeof(typename traits::template arg<1>)) {
            if (stream_row) {
              detail::scalar_loop_streaming<0>(data, n, op, Idx{});
            } else {
              detail::scalar_loop<0>(data, n, op, Idx{});
            }
            return;
          }
          if (strides[0] == sizeof(R) && strides[2] == 0 &&
              strides[1] == sizeof(typename traits::template arg<0>)) {
            if (stream_row) {
              detail::scalar_loop_streaming<1>(data, n, op, Idx{});
            } else {
              detail::scalar_loop<1>(data, n, op, Idx{});
            }
            return;
          }
        }
        detail::basic_loop(data, strides, n, op, Idx{});
      },
      grain);
}

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
