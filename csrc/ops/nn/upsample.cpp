// upsample (nearest, nearest-exact, linear / bilinear / trilinear, bicubic) and its backward:
// the per-dim index and weight tables, computed exactly as PyTorch's CPU kernels do (same
// floating type, same special cases), then one separable interpolation kernel.
#include <cmath>

#include "core/factory.h"
#include "kernels/nn/sampling_stubs.h"
#include "ops/nn/conv_util.h"
#include "ops/nn/sampling.h"
#include "ops/quantized/quantize.h"
#include "ops/views.h"

namespace ember {
namespace native {

namespace {

const char* mode_op(UpsampleMode mode, int64_t nd) {
  switch (mode) {
    case UpsampleMode::kNearest:
      return nd == 1 ? "upsample_nearest1d" : nd == 2 ? "upsample_nearest2d" : "upsample_nearest3d";
    case UpsampleMode::kNearestExact:
      return nd == 1   ? "_upsample_nearest_exact1d"
             : nd == 2 ? "_upsample_nearest_exact2d"
                       : "_upsample_nearest_exact3d";
    case UpsampleMode::kLinear:
      return nd == 1   ? "upsample_linear1d"
             : nd == 2 ? "upsample_bilinear2d"
                       : "upsample_trilinear3d";
    default:
      return "upsample_bicubic2d";
  }
}

// PyTorch's compute_scales_value: the given scale factor's inverse, else in / out.
template <typename F>
F scales_value(const std::optional<double>& scale, int64_t in, int64_t out) {
  const double given = scale.value_or(0.0);
  return given > 0 ? static_cast<F>(1.0 / given) : static_cast<F>(in) / static_cast<F>(out);
}

// area_pixel_compute_scale
template <typename F>
F area_scale(int64_t in, int64_t out, bool align_corners, const std::optional<double>& scale) {
  if (align_corners) {
    return out > 1 ? static_cast<F>(in - 1) / static_cast<F>(out - 1) : F(0);
  }
  return scales_value<F>(scale, in, out);
}

// area_pixel_compute_source_index
template <typename F>
F area_source(F scale, int64_t dst, bool align_corners, bool cubic) {
  if (align_corners) return scale * static_cast<F>(dst);
  const F src = scale * (static_cast<F>(dst) + F(0.5)) - F(0.5);
  return (!cubic && src < F(0)) ? F(0) : src;
}

template <typename F>
F cubic1(F x, F a) {
  return ((a + 2) * x - (a + 3)) * x * x + 1;
}
template <typename F>
F cubic2(F x, F a) {
  return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a;
}

// Fills slot k of the tables for one dim.
template <typename F>
void dim_table(InterpTables& t, int k, int64_t in, int64_t out, UpsampleMode mode,
               bool align_corners, const std::optional<double>& scale) {
  t.in[k] = in;
  t.out[k] = out;
  auto& idx = t.idx[k];
  auto& w = t.w[k];
  switch (mode) {
    case UpsampleMode::kNearest:
    case UpsampleMode::kNearestExact: {
      t.taps[k] = 1;
      const float s = scales_value<float>(scale, in, out);
      for (int64_t o = 0; o < out; ++o) {
        int64_t i;
        if (mode == UpsampleMode::kNearest) {
          // PyTorch's nearest_idx: exact integer paths for scale 1 and 2.
          if (out == in) {
            i = o;
          } else if (out == 2 * in) {
            i = o >> 1;
          } else {
            i = std::min(static_cast<int64_t>(std::floor(static_cast<float>(o) * s)), in - 1);
          }
        } else {
          i = std::min(static_cast<int64_t>(std::floor((static_cast<float>(o) + 0.5f) * s)),
                       in - 1);
        }
        idx.push_back(i);
        w.push_back(1.0);
      }
      return;
    }
    case UpsampleMode::kLinear: {
      t.taps[k] = 2;
      const F s = area_scale<F>(in, out, align_corners, scale);
      for (int64_t o = 0; o < out; ++o) {
        if (out == in) {
          idx.push_back(o);
          idx.push_back(o);
          w.push_back(1.0);
          w.push_back(0.0);
          continue;
        }
        const F real = area_source<F>(s, o, align_corners, false);
        const int64_t i0 = std::min(static_cast<int64_t>(std::floor(real)), in - 1);
        const F l1 = std::min(std::max(real - static_cast<F>(i0), F(0)), F(1));
        const int64_t i1 = i0 + (i0 < in - 1 ? 1 : 0);
        idx.push_back(i0);
        idx.push_back(i1);
        w.push_back(static_cast<double>(F(1) - l1));
        w.push_back(static_cast<double>(l1));
      }
      return;
    }
    default: {
      t.taps[k] = 4;
      const F s = area_scale<F>(in, out, align_corners, scale);
      const F a = F(-0.75);
      for (int64_t o = 0; o < out; ++o) {
        const F real = area_source<F>(s, o, align_corners, true);
        const int64_t i = static_cast<int64_t>(std::floor(real));
        const F x1 = real - static_cast<F>(i), x2 = F(1) - x1;
        const F c[4] = {cubic2<F>(x1 + 1, a), cubic1<F>(x1, a), cubic1<F>(x2, a),
                        cubic2<F>(x2 + 1, a)};
        for (int64_t j = 0; j < 4; ++j) {
          idx.push_back(std::clamp<int64_t>(i - 1 + j, 0, in - 1));
          w.push_back(static_cast<double>(c[j]));
        }
      }
      return;
    }
  }
}

InterpTables make_tables(ScalarType dtype, IntArrayRef in_spatial, IntArrayRef out_spatial,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales) {
  InterpTables t;
  const int64_t nd = static_cast<int64_t>(in_spatial.size());
  for (int k = 0; k < 3; ++k) {
    t.idx[k] = {0};
    t.w[k] = {1.0};
  }
  for (int64_t d = 0; d < nd; ++d) {
    const int k = static_cast<int>(3 - nd + d);
    t.idx[k].clear();
    t.w[k].clear();
    // A reference, not a copy made from std::nullopt: GCC 12 reports the copy's value as maybe
    // uninitialised once inlined.
    static const std::optional<double> kNoScale;
    const std::optional<double>& s = scales.empty() ? kNoScale : scales[d];
    // PyTorch computes the tables in the op's math type: double for float64, else float.
    if (dtype == ScalarType::Float64) {
      dim_table<double>(t, k, in_spatial[d], out_spatial[d], mode, align_corners, s);
    } else {
      dim_table<float>(t, k, in_spatial[d], out_spatial[d], mode, align_corners, s);
    }
  }
  return t;
}

void check_upsample(IntArrayRef in_sizes, IntArrayRef output_size, UpsampleMode mode,
                    const std::vector<std::optional<double>>& scales, const char* op) {
  const int64_t dim = static_cast<int64_t>(in_sizes.size());
  EMBER_CHECK(dim >= 3 && dim <= 5, "[", op, "] expected a 3D, 4D or 5D input (N, C, *spatial), ",
              "but got input of size ", sizes_list(in_sizes));
  const int64_t nd = dim - 2;
  EMBER_CHECK(mode != UpsampleMode::kCubic || nd == 2, "[", op,
              "] bicubic upsampling needs a 4D input, but got input of size ",
              sizes_list(in_sizes));
  EMBER_CHECK(static_cast<int64_t>(output_size.size()) == nd, "[", op,
              "] It is expected output_size equals to ", nd, ", but got size ", output_size.size());
  EMBER_CHECK(scales.empty() || static_cast<int64_t>(scales.size()) == nd, "[", op, "] expected ",
              nd, " scale factors, but got ", scales.size());
  EMBER_CHECK(in_sizes[1] > 0, "[", op, "] Non-empty ", dim,
              "D data tensor expected but got a tensor with sizes ", sizes_list(in_sizes));
  bool ok = true;
  std::string in_s, out_s;
  static const char* names[3] = {"D", "H", "W"};
  for (int64_t d = 0; d < nd; ++d) {
    ok = ok && in_sizes[2 + d] > 0 && output_size[d] > 0;
    const char* nm = names[3 - nd + d];
    in_s += std::string(d ? ", " : "") + nm + ": " + std::to_string(in_sizes[2 + d]);
    out_s += std::string(d ? ", " : "") + nm + ": " + std::to_string(output_size[d]);
  }
  EMBER_CHECK(ok, "[", op, "] Input and output sizes should be greater than 0, but got input (",
              in_s, ") output (", out_s, ")");
}

DimVector with_spatial(IntArrayRef sizes, IntArrayRef spatial) {
  DimVector s{sizes[0], sizes[1]};
  for (int64_t v : spatial) s.push_back(v);
  return s;
}

}  // namespace

Tensor upsample(const Tensor& input, IntArrayRef output_size, UpsampleMode mode, bool align_corners,
                const std::vector<std::optional<double>>& scales) {
  const char* op = mode_op(mode, input.dim() - 2);
  check_upsample(input.sizes(), output_size, mode, scales, op);
  if (is_quantized(input.dtype())) {  // PyTorch's quantized upsampling keeps the parameters
    return quantized_via_float(input, op, [&](const Tensor& real) {
      return upsample(real, output_size, mode, align_corners, scales);
    });
  }
  const bool integral = input.dtype() == ScalarType::UInt8;
  EMBER_CHECK_T(NotImplementedError, input.is_floating_point() || integral, "[", op, "] \"", op,
                "\" not implemented for '", dtype_name(input.dtype()), "'");
  // The output first: its allocation checks the size (overflow, memory) before any work that
  // grows with it, such as the index tables.
  Tensor out =
      empty_tensor(with_spatial(input.sizes(), output_size), input.dtype(), input.device(), op);
  if (out.numel() == 0) return out;
  const DimVector in_spatial = dims_slice(input.sizes(), 2);
  const InterpTables t =
      make_tables(input.dtype(), in_spatial, output_size, mode, align_corners, scales);
  interp_stub(input.device(), t, contiguous(input), out);
  return out;
}

Tensor upsample_backward(const Tensor& grad_output, IntArrayRef input_size, IntArrayRef output_size,
                         UpsampleMode mode, bool align_corners,
                         const std::vector<std::optional<double>>& scales) {
  const char* op = "upsample_backward";
  check_upsample(input_size, output_size, mode, scales, op);
  const DimVector expected = with_spatial(input_size, output_size);
  EMBER_CHECK(grad_output.sizes().equals(expected), "[", op, "] expected grad_output of size ",
              sizes_list(expected), ", but got ", sizes_list(grad_output.sizes()));
  EMBER_CHECK_T(NotImplementedError, grad_output.is_floating_point(), "[", op, "] \"", op,
                "\" not implemented for '", dtype_name(grad_output.dtype()), "'");
  const DimVector in_spatial = dims_slice(input_size, 2);
  const InterpTables t =
      make_tables(grad_output.dtype(), in_spatial, output_size, mode, align_corners, scales);
  Tensor grad_input = empty_tensor(input_size, grad_output.dtype(), grad_output.device(), op);
  if (grad_input.numel() > 0) {
    interp_backward_stub(grad_output.device(), t, contiguous(grad_output), grad_input);
  }
  return grad_input;
}

}  // namespace native
}  // namespace ember
