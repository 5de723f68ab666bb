// Recurrent cell bindings: torch.rnn_tanh_cell, rnn_relu_cell, lstm_cell, gru_cell.
#include "api/nn/rnn.h"
#include "bindings/pybind_ember.h"

namespace ember {

namespace {
Tensor optional_tensor(const py::object& o) {
  return o.is_none() ? Tensor() : o.cast<Tensor>();
}
int64_t cell_work(const Tensor& input, const Tensor& w_ih) {
  return input.size(0) * w_ih.numel();
}
}  // namespace

void init_nn_rnn(py::module_& m) {
  m.def(
      "lstm_cell",
      [](const Tensor& input, py::sequence hx, const Tensor& w_ih, const Tensor& w_hh,
         py::object b_ih, py::object b_hh) {
        EMBER_CHECK(py::len(hx) == 2, "[lstm_cell] lstm_cell expects two hidden states");
        const Tensor h = hx[0].cast<Tensor>(), c = hx[1].cast<Tensor>();
        const Tensor bi = optional_tensor(b_ih), bh = optional_tensor(b_hh);
        return with_gil_released_if(cell_work(input, w_ih),
                                    [&] { return lstm_cell(input, h, c, w_ih, w_hh, bi, bh); });
      },
      py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
      py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none(),
      "One LSTM step: (h', c') from input (B, I), hx = (h, c) and the (i, f, g, o) weights.");
  m.def(
      "gru_cell",
      [](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
         py::object b_ih, py::object b_hh) {
        const Tensor bi = optional_tensor(b_ih), bh = optional_tensor(b_hh);
        return with_gil_released_if(cell_work(input, w_ih),
                                    [&] { return gru_cell(input, hx, w_ih, w_hh, bi, bh); });
      },
      py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
      py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none(),
      "One GRU step with the (r, z, n) weights.");
  for (const char* name : {"rnn_tanh_cell", "rnn_relu_cell"}) {
    const bool relu = name[4] == 'r';
    m.def(
        name,
        [relu](const Tensor& input, const Tensor& hx, const Tensor& w_ih, const Tensor& w_hh,
               py::object b_ih, py::object b_hh) {
          const Tensor bi = optional_tensor(b_ih), bh = optional_tensor(b_hh);
          return with_gil_released_if(cell_work(input, w_ih), [&] {
            return relu ? rnn_relu_cell(input, hx, w_ih, w_hh, bi, bh)
                        : rnn_tanh_cell(input, hx, w_ih, w_hh, bi, bh);
          });
        },
        py::arg("input"), py::arg("hx"), py::arg("w_ih"), py::arg("w_hh"),
        py::arg("b_ih") = py::none(), py::arg("b_hh") = py::none(),
        relu ? "One Elman RNN step with relu." : "One Elman RNN step with tanh.");
  }
}

}  // namespace ember
