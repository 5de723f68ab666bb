// ember.hann_window, hamming_window, blackman_window, bartlett_window and kaiser_window, with
// PyTorch's signatures (window_length, periodic=True, <shape parameters>, *, dtype=None,
// layout=None, device=None, pin_memory=False, requires_grad=False). Argument conversion only.
#include "api/spectral_windows.h"
#include "bindings/factory_args.h"

namespace ember {

namespace {

Tensor make_window(WindowKind kind, int64_t length, bool periodic, double alpha, double beta,
                   py::handle dtype, py::handle device, py::handle requires_grad, const char* op) {
  RequiresGradRequest grad_request(requires_grad, op);
  const TensorOptions opts = parse_options(dtype, device, op);
  return spectral_window(kind, length, periodic, alpha, beta, opts.dtype, op);
}

}  // namespace

void init_spectral_windows(py::module_& m) {
  struct Simple {
    const char* name;
    WindowKind kind;
    const char* doc;
  };
  const Simple simple[] = {
      {"hann_window", WindowKind::kHann, "The Hann window: 0.5 - 0.5 cos(2 pi n / (N - 1))."},
      {"blackman_window", WindowKind::kBlackman,
       "The Blackman window: 0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))."},
      {"bartlett_window", WindowKind::kBartlett,
       "The Bartlett (triangular) window: 1 - |2 n / (N - 1) - 1|."},
  };
  for (const Simple& s : simple) {
    const WindowKind kind = s.kind;
    const char* name = s.name;
    m.def(
        name,
        [kind, name](int64_t window_length, bool periodic, py::handle dtype, py::handle layout,
                     py::handle device, bool pin_memory, py::handle requires_grad) {
          check_layout(layout, name);
          return make_window(kind, window_length, periodic, 0.0, 0.0, dtype, device, requires_grad,
                             name);
        },
        s.doc, py::arg("window_length"), py::arg("periodic") = true, py::kw_only(),
        py::arg("dtype") = py::none(), py::arg("layout") = py::none(),
        py::arg("device") = py::none(), py::arg("pin_memory") = false,
        py::arg("requires_grad") = false);
  }
  m.def(
      "hamming_window",
      [](int64_t window_length, bool periodic, double alpha, double beta, py::handle dtype,
         py::handle layout, py::handle device, bool pin_memory, py::handle requires_grad) {
        check_layout(layout, "hamming_window");
        return make_window(WindowKind::kHamming, window_length, periodic, alpha, beta, dtype,
                           device, requires_grad, "hamming_window");
      },
      "The Hamming window: alpha - beta cos(2 pi n / (N - 1)).", py::arg("window_length"),
      py::arg("periodic") = true, py::arg("alpha") = 0.54, py::arg("beta") = 0.46, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("layout") = py::none(), py::arg("device") = py::none(),
      py::arg("pin_memory") = false, py::arg("requires_grad") = false);
  m.def(
      "kaiser_window",
      [](int64_t window_length, bool periodic, double beta, py::handle dtype, py::handle layout,
         py::handle device, bool pin_memory, py::handle requires_grad) {
        check_layout(layout, "kaiser_window");
        return make_window(WindowKind::kKaiser, window_length, periodic, 0.0, beta, dtype, device,
                           requires_grad, "kaiser_window");
      },
      "The Kaiser window: I0(beta sqrt(1 - (2 n / (N - 1) - 1)^2)) / I0(beta).",
      py::arg("window_length"), py::arg("periodic") = true, py::arg("beta") = 12.0, py::kw_only(),
      py::arg("dtype") = py::none(), py::arg("layout") = py::none(), py::arg("device") = py::none(),
      py::arg("pin_memory") = false, py::arg("requires_grad") = false);
}

}  // namespace ember
