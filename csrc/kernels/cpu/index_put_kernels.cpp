// CPU kernels for the put side of indexing (setitem, index_put_, scatter*, index_add/copy/fill)
// and the mean finalisation of scatter_reduce. Plain writes move words; accumulating ops
// dispatch on dtype.
#include <cmath>

#include "dispatch/dtype_dispatch.h"
#include "kernels/cpu/index_loops.h"
#include "kernels/indexing_stubs.h"

namespace ember {
namespace native {
namespace {

template <typename T>
inline bool is_nan_value(T v) {
  if constexpr (is_floating_v<T>)
    return std::isnan(static_cast<double>(static_cast<acc_type<T>>(v)));
  else
    return false;
}

// The accumulation functors compute in acc_type (float for Half / BFloat16) and round once.
template <typename T>
struct AddOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a || b;
    else if constexpr (is_reduced_float_v<T>)
      return T(static_cast<float>(a) + static_cast<float>(b));
    else
      return static_cast<T>(a + b);
  }
};
template <typename T>
struct MulOp {
  T operator()(T a, T b) const {
    if constexpr (std::is_same_v<T, bool>)
      return a && b;
    else if constexpr (is_reduced_float_v<T>)
      return T(static_cast<float>(a) * static_cast<float>(b));
    else
      return static_cast<T>(a * b);
  }
};
// amax / amin propagate NaN from either side, as PyTorch's scatter_reduce does.
template <typename T>
struct MaxOp {
  T operator()(T a, T b) const {
    if (is_nan_value(b)) return b;
    using A = acc_type<T>;
    return static_cast<A>(a) < static_cast<A>(b) ? b : a;
  }
};
template <typename T>
struct MinOp {
  T operator()(T a, T b) const {
    if (is_nan_value(b)) return b;
    using A = acc_type<T>;
    return static_cast<A>(b) < static_cast<A>(a) ? b : a;
  }
};

template <typename E>
void assign_loop(TensorIterator& iter, const IndexOffsets& offs, bool serial) {
  auto body = [&](char** data, const int64_t* st, int64_t len) {
    char* dst = data[0];
    const char* src = data[1];
    const int64_t sd = st[0], ss = st[1];
    if (offs.constant(st + 2)) {
      char* base = dst + offs.at(data + 2, st + 2, 0);
      if (sd == sizeof(E) && ss == sizeof(E)) {
        std::memcpy(base, src, len * sizeof(E));
        return;
      }
      for (int64_t k = 0; k < len; ++k) copy_word<E>(base + k * sd, src + k * ss);
      return;
    }
    if (offs.n == 1 && sd == 0 && st[2] == sizeof(int64_t)) {
      const int64_t* idx = reinterpret_cast<const int64_t*>(data[2]);
      const int64_t size = offs.sizes[0], stride = offs.strides[0];
      for (int64_t k = 0; k < len; ++k) {
        int64_t i = idx[k];
        i += (i >> 63) & size;
        copy_word<E>(dst + i * stride, src + k * ss);
      }
      return;
    }
    for (int64_t k = 0; k < len; ++k) {
      copy_word<E>(dst + k * sd + offs.at(data + 2, st + 2, k), src + k * ss);
    }
  };
  if (serial) {
    iter.serial_for_each(body, 0, iter.numel());
  } else {
    iter.for_each_reduction_safe(body);
  }
}

void index_put_kernel(TensorIterator& iter, IntArrayRef sizes, IntArrayRef byte_strides, PutOp op,
                      bool serial) {
  IndexOffsets offs{static_cast<int>(sizes.size()), sizes.data(), byte_strides.data()};
  const ScalarType dt = iter.dtype(0);
  switch (op) {
    case PutOp::Assign:
      dispatch_word(element_size(dt), [&](auto tag) {
        using E = typename decltype(tag)::type;
        assign_loop<E>(iter, offs, serial);
      });
      return;
    case PutOp::Add:
      dispatch_dtype<kAllTypes>(dt, "index_put_", [&](auto tag) {
        using T = typename decltype(tag)::type;
        put_loop<T>(iter, offs, serial, AddOp<T>{});
      });
      return;
    case PutOp::Multiply:
      dispatch_dtype<kAllTypes>(dt, "scatter_reduce", [&](auto tag) {
        using T = typename decltype(tag)::type;
        put_loop<T>(iter, offs, serial, MulOp<T>{});
      });
      return;
    case PutOp::Max:
      dispatch_dtype<kRealAndBool>(dt, "scatter_reduce", [&](auto tag) {
        using T = typename decltype(tag)::type;
        put_loop<T>(iter, offs, serial, MaxOp<T>{});
      });
      return;
    case PutOp::Min:
      dispatch_dtype<kRealAndBool>(dt, "scatter_reduce", [&](auto tag) {
        using T = typename decltype(tag)::type;
        put_loop<T>(iter, offs, serial, MinOp<T>{});
      });
      return;
  }
}

// Operands [out (T), count (int64)]: out /= count where count > 0. Integers divide with floor,
// as PyTorch's scatter_reduce(mean) does.
void scatter_mean_kernel(TensorIterator& iter) {
  dispatch_dtype<kNumericTypes>(iter.dtype(0), "scatter_reduce", [&](auto tag) {
    using T = typename decltype(tag)::type;
    iter.for_each([](char** data, const int64_t* st, int64_t n) {
      for (int64_t k = 0; k < n; ++k) {
        T* o = reinterpret_cast<T*>(data[0] + k * st[0]);
        const int64_t c = *reinterpret_cast<const int64_t*>(data[1] + k * st[1]);
        if (c <= 0) continue;
        if constexpr (std::is_integral_v<T>) {
          int64_t v = static_cast<int64_t>(*o), q = v / c;
          if ((v % c != 0) && ((v < 0) != (c < 0))) --q;
          *o = static_cast<T>(q);
        } else if constexpr (is_complex_v<T>) {
          *o = *o / static_cast<typename T::value_type>(c);
        } else {
          using A = acc_type<T>;
          *o = static_cast<T>(static_cast<A>(*o) / static_cast<A>(c));
        }
      }
    });
  });
}

}  // namespace

EMBER_REGISTER_KERNEL(index_put_stub, CPU, index_put_kernel);
EMBER_REGISTER_KERNEL(scatter_mean_stub, CPU, scatter_mean_kernel);

}  // namespace native
}  // namespace ember
