// Kernel stubs of the reduction family (the native ops are in ops/reduce.h, which includes this
// header), with the parameter types their signatures use. Reduction kernels take
// make_reduction's iterator (outputs first, input last); scan and order-statistic kernels take
// make_dim_iterator's iterator plus the walked dim (ops/reduce_common.h).
#pragma once
#include <cmath>
#include <vector>

#include "dispatch/stub.h"
#include "dispatch/tensor_iterator.h"

namespace ember {
namespace native {

// The order of a vector norm; Frobenius is the 2-norm over the given dims.
struct NormOrder {
  enum class Kind { P, Fro, Inf, NegInf, Zero } kind = Kind::Fro;
  double p = 2.0;  // for Kind::P
  static NormOrder from_double(double p) {
    NormOrder o;
    if (std::isinf(p)) {
      o.kind = p > 0 ? Kind::Inf : Kind::NegInf;
    } else if (p == 0) {
      o.kind = Kind::Zero;
    } else {
      o.kind = Kind::P;
      o.p = p;
    }
    return o;
  }
};

// How quantile / nanquantile interpolate between the two nearest order statistics.
enum class QuantileInterpolation { Linear, Lower, Higher, Midpoint, Nearest };

// The dim a scan or order-statistic kernel walks itself: its length and each operand's byte
// stride along it (operands in iterator order: outputs, then the input).
struct DimWalk {
  int64_t size = 1;
  int64_t strides[3] = {0, 0, 0};
};

enum class CountKind { NonZero, NonNan };
enum class MinMaxKind { Max, Min, MinMax };

using ReduceFn = void (*)(TensorIterator& iter);
using MeanFn = void (*)(TensorIterator& iter, int64_t count);
using CountFn = void (*)(TensorIterator& iter, CountKind kind);
using MinMaxFn = void (*)(TensorIterator& iter, MinMaxKind kind);
// One output (indices) or two (values, indices).
using ArgReduceFn = void (*)(TensorIterator& iter, bool is_max);
// One output (var or std) or two (var or std, mean).
using VarFn = void (*)(TensorIterator& iter, double correction, bool take_sqrt);
using NormFn = void (*)(TensorIterator& iter, NormOrder p);
using LogicalFn = void (*)(TensorIterator& iter, bool is_all);

EMBER_DECLARE_STUB(sum_stub, ReduceFn);
EMBER_DECLARE_STUB(mean_stub, MeanFn);
EMBER_DECLARE_STUB(nansum_stub, ReduceFn);
EMBER_DECLARE_STUB(prod_stub, ReduceFn);
EMBER_DECLARE_STUB(count_stub, CountFn);
EMBER_DECLARE_STUB(minmax_stub, MinMaxFn);
EMBER_DECLARE_STUB(arg_reduce_stub, ArgReduceFn);
EMBER_DECLARE_STUB(var_stub, VarFn);
EMBER_DECLARE_STUB(norm_stub, NormFn);
EMBER_DECLARE_STUB(logsumexp_stub, ReduceFn);
EMBER_DECLARE_STUB(logical_stub, LogicalFn);

// Scans: out (and indices) along the walked dim.
using ScanFn = void (*)(TensorIterator& iter, const DimWalk& walk);
using CumMaxMinFn = void (*)(TensorIterator& iter, const DimWalk& walk, bool is_max);
EMBER_DECLARE_STUB(cumsum_stub, ScanFn);
EMBER_DECLARE_STUB(cumprod_stub, ScanFn);
EMBER_DECLARE_STUB(logcumsumexp_stub, ScanFn);
EMBER_DECLARE_STUB(cummaxmin_stub, CumMaxMinFn);

// Order statistics: outputs (values, indices) at each position.
using MedianFn = void (*)(TensorIterator& iter, const DimWalk& walk, bool ignore_nan);
using ModeFn = void (*)(TensorIterator& iter, const DimWalk& walk);
// One output whose leading q dim has byte stride q_stride; q values in [0, 1].
using QuantileFn = void (*)(TensorIterator& iter, const DimWalk& walk, const std::vector<double>& q,
                            int64_t q_stride, QuantileInterpolation interpolation, bool ignore_nan);
EMBER_DECLARE_STUB(median_stub, MedianFn);
EMBER_DECLARE_STUB(mode_stub, ModeFn);
EMBER_DECLARE_STUB(quantile_stub, QuantileFn);

}  // namespace native
}  // namespace ember
