// Sum, mean, nansum, prod and element counts.
#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/cpu_level.h"
#include "kernels/cpu/reduce_ops.h"
#include "kernels/reduce_stubs.h"

namespace ember {
namespace native {
inline namespace EMBER_CPU_NS {
namespace {

template <typename In, typename Out>
void sum_impl(TensorIterator& iter) {
  using Acc = sum_acc_t<In>;
  run_map_sum<In, Acc, Out>(
      iter, [](auto x) { return to_acc<Acc>(x); }, [](Acc a) { return from_acc<Out>(a); });
}

// Bool and integer inputs may sum straight into int64; otherwise input and output agree.
void sum_kernel(TensorIterator& iter) {
  const ScalarType in = iter.dtype(1), out = iter.dtype(0);
  if (out == ScalarType::Int64 && is_integral(in, /*include_bool=*/true)) {
    dispatch_dtype<kIntegralAndBool>(
        in, "sum", [&](auto tag) { sum_impl<typename decltype(tag)::type, int64_t>(iter); });
    return;
  }
  dispatch_dtype<kAllTypes>(in, "sum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    sum_impl<T, T>(iter);
  });
}

void mean_kernel(TensorIterator& iter, int64_t count) {
  dispatch_dtype<kFloatingAndComplex>(iter.dtype(1), "mean", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = acc_type<T>;
    using Real = real_of_t<Acc>;
    // Divides (not multiplies by 1/n) like PyTorch; an empty mean is 0/0 = nan.
    const Acc n = Acc(static_cast<Real>(count));
    run_map_sum<T, Acc, T>(
        iter, [](auto x) { return load<Acc>(x); }, [n](Acc a) { return convert<T>(a / n); });
  });
}

void nansum_kernel(TensorIterator& iter) {
  const ScalarType in = iter.dtype(1);
  if (!is_floating(in)) {
    sum_kernel(iter);  // no NaN in integers
    return;
  }
  dispatch_dtype<kFloatingTypes>(in, "nansum", [&](auto tag) {
    using T = typename decltype(tag)::type;
    using Acc = acc_type<T>;
    run_map_sum<T, Acc, T>(
        iter,
        [](auto x) {
          const Acc v = load<Acc>(x);
          return v != v ? Acc(0) : v;
        },
        [](Acc a) { return convert<T>(a); });
  });
}

void count_kernel(TensorIterator& iter, CountKind kind) {
  auto project = [](uint64_t a) { return static_cast<int64_t>(a); };
  if (kind == CountKind::NonNan) {
    dispatch_dtype<kFloatingTypes>(iter.dtype(1), "count", [&](auto tag) {
      using T = typename decltype(tag)::type;
      run_map_sum<T, uint64_t, int64_t>(
          iter, [](auto x) { return uint64_t(!is_nan_value(x)); }, project);
    });
    return;
  }
  dispatch_dtype<kAllTypes>(iter.dtype(1), "count_nonzero", [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_map_sum<T, uint64_t, int64_t>(
        iter, [](auto x) { return uint64_t(nonzero(x)); }, project);
  });
}

template <typename In, typename Out>
struct ProdOps : ReduceOpsBase<ProdOps<In, Out>, In, sum_acc_t<In>, Out> {
  using Acc = sum_acc_t<In>;
  Acc identity() const { return Acc(1); }
  Acc fold(Acc a, In x) const { return a * to_acc<Acc>(x); }
  Acc combine(Acc a, Acc b) const { return a * b; }
  Out project(Acc a) const { return from_acc<Out>(a); }
};

void prod_kernel(TensorIterator& iter) {
  const ScalarType in = iter.dtype(1), out = iter.dtype(0);
  if (out == ScalarType::Int64 && is_integral(in, /*include_bool=*/true)) {
    dispatch_dtype<kIntegralAndBool>(in, "prod", [&](auto tag) {
      run_reduction(iter, ProdOps<typename decltype(tag)::type, int64_t>{});
    });
    return;
  }
  dispatch_dtype<kAllTypes>(in, "prod", [&](auto tag) {
    using T = typename decltype(tag)::type;
    run_reduction(iter, ProdOps<T, T>{});
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(sum_stub, CPU, sum_kernel);
EMBER_REGISTER_KERNEL(mean_stub, CPU, mean_kernel);
EMBER_REGISTER_KERNEL(nansum_stub, CPU, nansum_kernel);
EMBER_REGISTER_KERNEL(count_stub, CPU, count_kernel);
EMBER_REGISTER_KERNEL(prod_stub, CPU, prod_kernel);

}  // namespace EMBER_CPU_NS
}  // namespace native
}  // namespace ember
