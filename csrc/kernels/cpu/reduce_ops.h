// Reduction "Ops" structs shared by several CPU kernel files (see Note [Reduction Driver] in
// kernels/cpu/reduce_loops.h).
#pragma once
#include <cmath>
#include <complex>
#include <limits>
#include <type_traits>
#include "kernels/cpu/cpu_level.h"

#include "kernels/cpu/reduce_loops.h"
#include "kernels/cpu/reduce_vec.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {

template <typename T>
using real_of_t = typename RealOf<T>::type;

// Reads an input element into compute type A. float16 goes through the branch-free conversion
// so that the reduction loops vectorise (core's Half -> float conversion branches).
template <typename A, typename T>
inline A load(T x) {
  if constexpr (std::is_same_v<T, Half>) {
    return convert<A>(half_bits_to_float_fast(x.bits));
  } else {
    return convert<A>(x);
  }
}

// x != 0 (for complex: either part), as a conversion to bool.
template <typename T>
inline bool nonzero(T x) {
  if constexpr (std::is_same_v<T, Half>) {
    return half_bits_to_float_fast(x.bits) != 0.0f;
  } else {
    return convert<bool>(x);
  }
}

// Integers accumulate in uint64: wrap-around is then defined behaviour and, cast back to int64,
// gives exactly PyTorch's two's-complement results. 16-bit floats accumulate in float.
template <typename T>
using sum_acc_t = std::conditional_t<std::is_integral_v<T>, uint64_t, acc_type<T>>;

template <typename Acc, typename In>
inline Acc to_acc(In x) {
  if constexpr (std::is_same_v<Acc, uint64_t>) {
    return static_cast<uint64_t>(static_cast<int64_t>(x));
  } else {
    return load<Acc>(x);
  }
}

template <typename Out, typename Acc>
inline Out from_acc(Acc a) {
  if constexpr (std::is_same_v<Acc, uint64_t>) {
    return static_cast<Out>(static_cast<int64_t>(a));
  } else {
    return convert<Out>(a);
  }
}

template <typename T>
inline bool is_nan_value(T x) {
  if constexpr (is_complex_v<T>) {
    return std::isnan(x.real()) || std::isnan(x.imag());
  } else if constexpr (is_floating_v<T>) {
    const acc_type<T> v = load<acc_type<T>>(x);
    return v != v;
  } else {
    return false;
  }
}

// sum(map(x)) with cascade summation; project turns the sum into the output value.
template <typename In, typename Acc, typename Out, typename Map, typename Project>
struct MapSumOps : ReduceOpsBase<MapSumOps<In, Acc, Out, Map, Project>, In, Acc, Out> {
  static constexpr bool kPairwise = is_floating_v<Acc> || is_complex_v<Acc>;
  Map map;
  Project proj;
  MapSumOps(Map m, Project p) : map(m), proj(p) {}
  Acc identity() const { return Acc(0); }
  Acc fold(Acc a, In x) const { return a + map(x); }
  Acc combine(Acc a, Acc b) const { return a + b; }
  Out project(Acc a) const { return proj(a); }
  Acc fold_run(Acc acc, const char* p, int64_t stride, int64_t n) const {
    return acc + cascade_sum<Acc, In>(p, stride, n, map);
  }
};

template <typename In, typename Acc, typename Out, typename Map, typename Project>
void run_map_sum(const TensorIterator& iter, Map map, Project proj) {
  run_reduction(iter, MapSumOps<In, Acc, Out, Map, Project>(map, proj));
}

// The extreme of the elements with NaN propagation: once a NaN is seen it wins.
template <typename T, bool IsMax>
struct ExtremumOps : ReduceOpsBase<ExtremumOps<T, IsMax>, T, acc_type<T>, T> {
  using A = acc_type<T>;
  A identity() const {
    if constexpr (std::is_same_v<T, bool>) {
      return !IsMax;
    } else if constexpr (std::numeric_limits<A>::has_infinity) {
      return IsMax ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::infinity();
    } else {
      return IsMax ? std::numeric_limits<A>::lowest() : std::numeric_limits<A>::max();
    }
  }
  static A pick(A a, A x) {
    if constexpr (std::is_floating_point_v<A>) {
      return ((IsMax ? x > a : x < a) || x != x) ? x : a;
    } else {
      return (IsMax ? x > a : x < a) ? x : a;
    }
  }
  A fold(A a, T x) const { return pick(a, load<A>(x)); }
  A combine(A a, A b) const { return pick(a, b); }
  T project(A a) const { return static_cast<T>(a); }
};

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
