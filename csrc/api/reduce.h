// Public ops of ops/reduce.h that have no node of their own (the native functions).
#pragma once
#include "ops/reduce.h"

namespace ember {

using native::DimList;
using native::TensorPair;
using native::sum;
using native::nansum;
using native::mean;
using native::nanmean;
using native::prod;
using native::amax;
using native::amin;
using native::max;
using native::min;
using native::aminmax;
using native::argmax;
using native::argmin;
using native::var;
using native::std;
using native::var_mean;
using native::std_mean;
using native::NormOrder;
using native::norm;
using native::logsumexp;
using native::all;
using native::any;
using native::count_nonzero;
using native::cumsum;
using native::cumprod;
using native::cummax;
using native::cummin;
using native::logcumsumexp;
using native::median;
using native::nanmedian;
using native::mode;
using native::QuantileInterpolation;
using native::parse_quantile_interpolation;
using native::quantile;
using native::nanquantile;

}  // namespace ember
