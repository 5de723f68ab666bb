// Loop templates for CPU kernels over a TensorIterator. A kernel is a scalar lambda; the loop
// picks a contiguous path (which the compiler vectorises), a scalar-broadcast path, or a general
// strided path:
//
//   cpu_kernel(iter, [](float a, float b) { return a + b; });
//
// Argument types come from the lambda's signature and must match the operands' dtypes (inputs
// have been promoted by the iterator); the return type must match the output dtype.
#pragma once
#include <cstdint>
#include <tuple>
#include <type_traits>
#include <utility>

#include "dispatch/tensor_iterator.h"

namespace ember {

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

namespace detail {

template <typename F, size_t... I>
inline void basic_loop(char** data, const int64_t* strides, int64_t n, const F& op,
                       std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  char* out = data[0];
  for (int64_t k = 0; k < n; ++k) {
    *reinterpret_cast<R*>(out + k * strides[0]) = op(
        *reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1] + k * strides[I + 1])...);
  }
}

template <typename F, size_t... I>
inline void contiguous_loop(char** data, int64_t n, const F& op, std::index_sequence<I...>) {
  using traits = function_traits<F>;
  using R = typename traits::result_type;
  R* out = reinterpret_cast<R*>(data[0]);
  std::tuple<const typename traits::template arg<I>*...> in{
      reinterpret_cast<const typename traits::template arg<I>*>(data[I + 1])...};
  for (int64_t k = 0; k < n; ++k) out[k] = op(std::get<I>(in)[k]...);
}

// Input S (0-based among inputs) is a broadcast scalar; the others are contiguous.
template <int S, typename F, size_t... I>
inline void scalar_loop(char** data, int64_t n, const F& op, std::index_sequence<I...>) {
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
  return is_contiguous_loop_impl<F>(strides,
                                    std::make_index_sequence<function_traits<F>::arity>{});
}

}  // namespace detail

// Elementwise kernel: output 0 = op(inputs...).
template <typename F>
void cpu_kernel(const TensorIterator& iter, const F& op, int64_t grain = kGrainSize) {
  using traits = function_traits<F>;
  constexpr int N = traits::arity;
  using Idx = std::make_index_sequence<N>;
  iter.for_each(
      [&](char** data, const int64_t* strides, int64_t n) {
        if (detail::is_contiguous_loop<F>(strides)) {
          detail::contiguous_loop(data, n, op, Idx{});
          return;
        }
        if constexpr (N == 2) {
          using R = typename traits::result_type;
          if (strides[0] == sizeof(R) && strides[1] == 0 &&
              strides[2] == sizeof(typename traits::template arg<1>)) {
            detail::scalar_loop<0>(data, n, op, Idx{});
            return;
          }
          if (strides[0] == sizeof(R) && strides[2] == 0 &&
              strides[1] == sizeof(typename traits::template arg<0>)) {
            detail::scalar_loop<1>(data, n, op, Idx{});
            return;
          }
        }
        detail::basic_loop(data, strides, n, op, Idx{});
      },
      grain);
}

}  // namespace ember
