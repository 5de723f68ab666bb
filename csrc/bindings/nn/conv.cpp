// Convolutions, linear layers, im2col / col2im, pooling, padding, resampling and pixel shuffles:
// torch.<name> where PyTorch has it at top level (conv2d, max_pool1d, pixel_shuffle, ...),
// torch._C._nn.<name> otherwise (linear, avg_pool2d, pad, upsample_*, im2col, ...).
// Argument conversion only; heavy ops run with the GIL released.
#include <cmath>

#include "api/nn/conv.h"
#include "api/nn/pool.h"
#include "api/nn/sampling.h"
#include "bindings/list_args.h"

namespace ember {

namespace {

DimVector ints(py::handle h, const char* op, const char* what) {
  return parse_int_sequence(h, op, what);
}

// A padding argument of conv1d / conv2d: an int, a tuple of ints, or 'same' / 'valid'.
ConvPadding conv_padding(py::handle h, const char* op) {
  ConvPadding p;
  if (PyUnicode_Check(h.ptr())) {
    p.mode = h.cast<std::string>();
  } else {
    p.values = ints(h, op, "padding");
  }
  return p;
}

// An optional list of scale factors (None, a float, or a sequence of floats / None).
std::vector<std::optional<double>> scale_list(py::handle h) {
  std::vector<std::optional<double>> out;
  if (h.is_none()) return out;
  if (!PySequence_Check(h.ptr())) {
    out.push_back(h.cast<double>());
    return out;
  }
  for (py::handle item : py::reinterpret_borrow<py::sequence>(h)) {
    out.push_back(item.is_none() ? std::nullopt : std::optional<double>(item.cast<double>()));
  }
  return out;
}

void def_conv(py::module_& m) {
  auto conv = [](auto fn, const char* op) {
    return [fn, op](const Tensor& input, const Tensor& weight, py::handle bias, py::handle stride,
                    py::handle padding, py::handle dilation, int64_t groups) {
      Tensor b = opt_tensor(bias);
      DimVector s = ints(stride, op, "stride"), d = ints(dilation, op, "dilation");
      ConvPadding p = conv_padding(padding, op);
      return without_gil([&] { return fn(input, weight, b, s, p, d, groups); });
    };
  };
  m.def("conv1d", conv(&conv1d, "conv1d"), py::arg("input"), py::arg("weight"),
        py::arg("bias") = py::none(), py::arg("stride") = 1, py::arg("padding") = 0,
        py::arg("dilation") = 1, py::arg("groups") = 1);
  m.def("conv2d", conv(&conv2d, "conv2d"), py::arg("input"), py::arg("weight"),
        py::arg("bias") = py::none(), py::arg("stride") = 1, py::arg("padding") = 0,
        py::arg("dilation") = 1, py::arg("groups") = 1);
  auto conv_t = [](auto fn, const char* op) {
    return [fn, op](const Tensor& input, const Tensor& weight, py::handle bias, py::handle stride,
                    py::handle padding, py::handle output_padding, int64_t groups,
                    py::handle dilation) {
      Tensor b = opt_tensor(bias);
      if (PyUnicode_Check(padding.ptr())) {
        throw py::type_error(
            str_cat("[", op, "] ", op, "(): argument 'padding' must be tuple of ints, not str"));
      }
      DimVector s = ints(stride, op, "stride"), p = ints(padding, op, "padding"),
                op_ = ints(output_padding, op, "output_padding"),
                d = ints(dilation, op, "dilation");
      return without_gil([&] { return fn(input, weight, b, s, p, op_, groups, d); });
    };
  };
  m.def("conv_transpose1d", conv_t(&conv_transpose1d, "conv_transpose1d"), py::arg("input"),
        py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
        py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1,
        py::arg("dilation") = 1);
  m.def("conv_transpose2d", conv_t(&conv_transpose2d, "conv_transpose2d"), py::arg("input"),
        py::arg("weight"), py::arg("bias") = py::none(), py::arg("stride") = 1,
        py::arg("padding") = 0, py::arg("output_padding") = 0, py::arg("groups") = 1,
        py::arg("dilation") = 1);
  m.def(
      "convolution",
      [](const Tensor& input, const Tensor& weight, py::handle bias, py::handle stride,
         py::handle padding, py::handle dilation, bool transposed, py::handle output_padding,
         int64_t groups) {
        const char* op = "convolution";
        Tensor b = opt_tensor(bias);
        DimVector s = ints(stride, op, "stride"), p = ints(padding, op, "padding"),
                  d = ints(dilation, op, "dilation"),
                  o = ints(output_padding, op, "output_padding");
        return without_gil(
            [&] { return convolution(input, weight, b, s, p, d, transposed, o, groups); });
      },
      py::arg("input"), py::arg("weight"), py::arg("bias"), py::arg("stride"), py::arg("padding"),
      py::arg("dilation"), py::arg("transposed"), py::arg("output_padding"), py::arg("groups"));
}

void def_nn_conv(py::module_& nn) {
  nn.def(
      "_convolution_backward",
      [](const Tensor& grad_output, const Tensor& input, const Tensor& weight, py::handle stride,
         py::handle padding, py::handle dilation, bool transposed, py::handle output_padding,
         int64_t groups, std::array<bool, 3> output_mask) {
        const char* op = "convolution_backward";
        DimVector s = ints(stride, op, "stride"), p = ints(padding, op, "padding"),
                  d = ints(dilation, op, "dilation"),
                  o = ints(output_padding, op, "output_padding");
        return without_gil([&] {
          return convolution_backward(grad_output, input, weight, s, p, d, transposed, o, groups,
                                      output_mask);
        });
      },
      py::arg("grad_output"), py::arg("input"), py::arg("weight"), py::arg("stride"),
      py::arg("padding"), py::arg("dilation"), py::arg("transposed"), py::arg("output_padding"),
      py::arg("groups"), py::arg("output_mask"));
  nn.def(
      "im2col",
      [](const Tensor& input, py::handle kernel_size, py::handle dilation, py::handle padding,
         py::handle stride) {
        const char* op = "im2col";
        DimVector k = ints(kernel_size, op, "kernel_size"), d = ints(dilation, op, "dilation"),
                  p = ints(padding, op, "padding"), s = ints(stride, op, "stride");
        return without_gil([&] { return im2col(input, k, d, p, s); });
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("dilation"), py::arg("padding"),
      py::arg("stride"));
  nn.def(
      "col2im",
      [](const Tensor& input, py::handle output_size, py::handle kernel_size, py::handle dilation,
         py::handle padding, py::handle stride) {
        const char* op = "col2im";
        DimVector o = ints(output_size, op, "output_size"),
                  k = ints(kernel_size, op, "kernel_size"), d = ints(dilation, op, "dilation"),
                  p = ints(padding, op, "padding"), s = ints(stride, op, "stride");
        return without_gil([&] { return col2im(input, o, k, d, p, s); });
      },
      py::arg("input"), py::arg("output_size"), py::arg("kernel_size"), py::arg("dilation"),
      py::arg("padding"), py::arg("stride"));
}

// ---- pooling ---------------------------------------------------------------------------------

void def_pool(py::module_& m, py::module_& nn) {
  using MaxFn = Tensor (*)(const Tensor&, IntArrayRef, IntArrayRef, IntArrayRef, IntArrayRef, bool);
  using MaxIdxFn = std::tuple<Tensor, Tensor> (*)(const Tensor&, IntArrayRef, IntArrayRef,
                                                  IntArrayRef, IntArrayRef, bool);
  auto max_args = [](const char* op, py::handle k, py::handle s, py::handle p, py::handle d) {
    return std::array<DimVector, 4>{ints(k, op, "kernel_size"),
                                    s.is_none() ? DimVector() : ints(s, op, "stride"),
                                    ints(p, op, "padding"), ints(d, op, "dilation")};
  };
  auto def_max = [&](py::module_& mod, const char* name, MaxFn f) {
    mod.def(
        name,
        [f, name, max_args](const Tensor& input, py::handle kernel_size, py::handle stride,
                            py::handle padding, py::handle dilation, bool ceil_mode) {
          auto a = max_args(name, kernel_size, stride, padding, dilation);
          return without_gil([&] { return f(input, a[0], a[1], a[2], a[3], ceil_mode); });
        },
        py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::tuple(),
        py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false);
  };
  auto def_max_idx = [&](py::module_& mod, const char* name, MaxIdxFn f) {
    mod.def(
        name,
        [f, name, max_args](const Tensor& input, py::handle kernel_size, py::handle stride,
                            py::handle padding, py::handle dilation, bool ceil_mode) {
          auto a = max_args(name, kernel_size, stride, padding, dilation);
          return without_gil([&] { return f(input, a[0], a[1], a[2], a[3], ceil_mode); });
        },
        py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::tuple(),
        py::arg("padding") = 0, py::arg("dilation") = 1, py::arg("ceil_mode") = false);
  };
  def_max(m, "max_pool1d", &max_pool1d);
  def_max(m, "max_pool2d", &max_pool2d);
  def_max_idx(m, "max_pool1d_with_indices", &max_pool1d_with_indices);
  def_max_idx(nn, "max_pool2d_with_indices", &max_pool2d_with_indices);

  m.def(
      "avg_pool1d",
      [](const Tensor& input, py::handle kernel_size, py::handle stride, py::handle padding,
         bool ceil_mode, bool count_include_pad) {
        const char* op = "avg_pool1d";
        DimVector k = ints(kernel_size, op, "kernel_size"),
                  s = stride.is_none() ? DimVector() : ints(stride, op, "stride"),
                  p = ints(padding, op, "padding");
        return without_gil(
            [&] { return avg_pool1d(input, k, s, p, ceil_mode, count_include_pad); });
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::tuple(),
      py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true);
  nn.def(
      "avg_pool2d",
      [](const Tensor& input, py::handle kernel_size, py::handle stride, py::handle padding,
         bool ceil_mode, bool count_include_pad, std::optional<int64_t> divisor_override) {
        const char* op = "avg_pool2d";
        DimVector k = ints(kernel_size, op, "kernel_size"),
                  s = stride.is_none() ? DimVector() : ints(stride, op, "stride"),
                  p = ints(padding, op, "padding");
        return without_gil([&] {
          return avg_pool2d(input, k, s, p, ceil_mode, count_include_pad, divisor_override);
        });
      },
      py::arg("input"), py::arg("kernel_size"), py::arg("stride") = py::tuple(),
      py::arg("padding") = 0, py::arg("ceil_mode") = false, py::arg("count_include_pad") = true,
      py::arg("divisor_override") = py::none());
  m.def(
      "adaptive_avg_pool1d",
      [](const Tensor& input, py::handle output_size) {
        DimVector o = ints(output_size, "adaptive_avg_pool1d", "output_size");
        return without_gil([&] { return adaptive_avg_pool1d(input, o); });
      },
      py::arg("input"), py::arg("output_size"));
  nn.def(
      "adaptive_avg_pool2d",
      [](const Tensor& input, py::handle output_size) {
        DimVector o = ints(output_size, "adaptive_avg_pool2d", "output_size");
        if (o.size() == 1) o.push_back(o[0]);
        return without_gil([&] { return adaptive_avg_pool2d(input, o); });
      },
      py::arg("input"), py::arg("output_size"));
  m.def(
      "adaptive_max_pool1d",
      [](const Tensor& input, py::handle output_size) {
        DimVector o = ints(output_size, "adaptive_max_pool1d", "output_size");
        return without_gil([&] { return adaptive_max_pool1d(input, o); });
      },
      py::arg("input"), py::arg("output_size"));
  nn.def(
      "adaptive_max_pool2d",
      [](const Tensor& input, py::handle output_size) {
        DimVector o = ints(output_size, "adaptive_max_pool2d", "output_size");
        if (o.size() == 1) o.push_back(o[0]);
        return without_gil([&] { return adaptive_max_pool2d(input, o); });
      },
      py::arg("input"), py::arg("output_size"));
}

// ---- padding, resampling, pixel shuffles -------------------------------------------------------

UpsampleMode parse_upsample_mode(const std::string& mode) {
  if (mode == "nearest") return UpsampleMode::kNearest;
  if (mode == "nearest-exact") return UpsampleMode::kNearestExact;
  if (mode == "linear" || mode == "bilinear" || mode == "trilinear") return UpsampleMode::kLinear;
  if (mode == "bicubic") return UpsampleMode::kCubic;
  throw py::value_error(str_cat("[upsample] unknown interpolation mode '", mode, "'"));
}

void def_sampling(py::module_& m, py::module_& nn) {
  nn.def(
      "pad",
      [](const Tensor& input, py::handle pad_arg, const std::string& mode,
         std::optional<double> value) {
        DimVector p = ints(pad_arg, "pad", "pad");
        return without_gil([&] { return pad(input, p, mode, value); });
      },
      py::arg("input"), py::arg("pad"), py::arg("mode") = "constant",
      py::arg("value") = py::none());
  m.def(
      "constant_pad_nd",
      [](const Tensor& input, py::handle pad_arg, const Scalar& value) {
        DimVector p = ints(pad_arg, "constant_pad_nd", "pad");
        return without_gil([&] { return constant_pad_nd(input, p, value); });
      },
      py::arg("input"), py::arg("pad"), py::arg("value") = 0);
  // The generic entry F.interpolate uses.
  nn.def(
      "_upsample",
      [](const Tensor& input, py::handle output_size, const std::string& mode, bool align_corners,
         py::handle scales) {
        DimVector o = ints(output_size, "upsample", "output_size");
        auto s = scale_list(scales);
        UpsampleMode md = parse_upsample_mode(mode);
        return without_gil([&] { return ember::upsample(input, o, md, align_corners, s); });
      },
      py::arg("input"), py::arg("output_size"), py::arg("mode"), py::arg("align_corners") = false,
      py::arg("scales") = py::none());
  // PyTorch's named kernels: upsample_<mode><n>d(input, output_size[, align_corners], scales...).
  struct Named {
    const char* name;
    UpsampleMode mode;
    int nd;
    bool has_align;
  };
  static const Named named[] = {
      {"upsample_nearest1d", UpsampleMode::kNearest, 1, false},
      {"upsample_nearest2d", UpsampleMode::kNearest, 2, false},
      {"upsample_nearest3d", UpsampleMode::kNearest, 3, false},
      {"_upsample_nearest_exact1d", UpsampleMode::kNearestExact, 1, false},
      {"_upsample_nearest_exact2d", UpsampleMode::kNearestExact, 2, false},
      {"_upsample_nearest_exact3d", UpsampleMode::kNearestExact, 3, false},
      {"upsample_linear1d", UpsampleMode::kLinear, 1, true},
      {"upsample_bilinear2d", UpsampleMode::kLinear, 2, true},
      {"upsample_trilinear3d", UpsampleMode::kLinear, 3, true},
      {"upsample_bicubic2d", UpsampleMode::kCubic, 2, true},
  };
  for (const Named& n : named) {
    // (input, output_size, [align_corners,] scale_factors) with output_size None and a list
    // of scale factors, or (input, output_size, [align_corners,] scales_d, scales_h, ...).
    auto run = [n](const Tensor& input, py::handle output_size, bool align_corners,
                   const py::args& rest) {
      std::vector<std::optional<double>> s;
      if (rest.size() == 1 && (rest[0].is_none() || PySequence_Check(rest[0].ptr()))) {
        s = scale_list(rest[0]);
      } else {
        for (py::handle h : rest) {
          s.push_back(h.is_none() ? std::nullopt : std::optional<double>(h.cast<double>()));
        }
      }
      bool any_scale = false;
      for (const auto& v : s) any_scale = any_scale || v.has_value();
      if (!any_scale) s.clear();
      DimVector o;
      if (output_size.is_none()) {
        EMBER_CHECK(static_cast<int>(s.size()) == n.nd && input.dim() == n.nd + 2, "[", n.name,
                    "] Must specify exactly one of output_size and scale_factors");
        for (int d = 0; d < n.nd; ++d) {
          o.push_back(static_cast<int64_t>(std::floor(static_cast<double>(input.size(2 + d)) *
                                                      s[static_cast<size_t>(d)].value())));
        }
      } else {
        o = ints(output_size, n.name, "output_size");
      }
      if (!s.empty()) s.resize(static_cast<size_t>(n.nd));
      return without_gil([&] { return ember::upsample(input, o, n.mode, align_corners, s); });
    };
    if (n.has_align) {
      nn.def(
          n.name,
          [run](const Tensor& input, py::handle output_size, bool align_corners, py::args rest) {
            return run(input, output_size, align_corners, rest);
          },
          py::arg("input"), py::arg("output_size"), py::arg("align_corners"));
    } else {
      nn.def(
          n.name,
          [run](const Tensor& input, py::handle output_size, py::args rest) {
            return run(input, output_size, false, rest);
          },
          py::arg("input"), py::arg("output_size"));
    }
  }
  m.def(
      "pixel_shuffle",
      [](const Tensor& input, int64_t upscale_factor) {
        return without_gil([&] { return pixel_shuffle(input, upscale_factor); });
      },
      py::arg("input"), py::arg("upscale_factor"));
  m.def(
      "pixel_unshuffle",
      [](const Tensor& input, int64_t downscale_factor) {
        return without_gil([&] { return pixel_unshuffle(input, downscale_factor); });
      },
      py::arg("input"), py::arg("downscale_factor"));
}

}  // namespace

void init_nn_conv(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls) {
  py::module_ nn = m.def_submodule("_nn", "torch._C._nn: functions behind torch.nn.functional");
  def_conv(m);
  def_nn_conv(nn);
  def_pool(m, nn);
  def_sampling(m, nn);
}

}  // namespace ember
