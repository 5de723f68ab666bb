// The ember._C extension module: a list of init_* calls, one per binding file.
#include "bindings/op_observer.h"
#include "bindings/pybind_ember.h"

namespace ember {
void init_fft(py::module_& m);               // _C._fft (bindings/fft.cpp)
void init_spectral_windows(py::module_& m);  // ember.hann_window & co.
void init_forward_ad_debug(py::module_& m);  // _C._forward_ad_debug (tests only)
// _C._special, ember.i0 / igamma / igammac / mvlgamma (bindings/special.cpp)
void init_special(py::module_& m, py::class_<TensorImpl, TensorImplPtr>& cls);
}  // namespace ember

PYBIND11_MODULE(_C, m) {
  m.doc() = "Ember's C++ core";
  ember::init_errors(m);
  ember::init_dtypes(m);
  ember::init_tensor_class(m);
  auto& cls = ember::tensor_class();
  ember::init_numpy_interop(m, cls);
  ember::init_creation(m, cls);
  ember::init_tensor_new(m, cls);
  ember::init_random(m, cls);
  ember::init_random_sampling(m);
  ember::init_conversion(m, cls);
  ember::init_dlpack(m, cls);
  ember::init_views(m, cls);
  ember::init_elementwise(m, cls);
  ember::init_reductions(m, cls);
  ember::init_indexing(m, cls);
  ember::init_join(m, cls);
  ember::init_join_sort(m, cls);
  ember::init_matmul(m, cls);
  ember::init_linalg_solve(m, cls);
  ember::init_nn_conv(m, cls);
  ember::init_nn_linear(m);  // after init_nn_conv, which makes the _nn submodule
  ember::init_indexing_ops(m, cls);
  ember::init_view_extras(m, cls);
  ember::init_nn_norm(m, cls);
  ember::init_nn_loss(m, cls);
  ember::init_nn_activation(m, cls);
  ember::init_nn_dropout(m);
  ember::init_nn_attention(m);
  ember::init_nn_transformer(m);
  ember::init_device_loader(m);
  ember::init_nn_embedding(m);
  ember::init_nn_rnn(m);
  ember::init_quantized(m, cls);
  ember::init_autograd(m, cls);
  ember::init_autograd_function(m);
  ember::init_forward_ad(m);
  ember::init_forward_ad_debug(m);
  ember::init_config(m);
  ember::init_deterministic(m);
  ember::init_optim(m);
  ember::init_linalg_misc(m, cls);
  ember::init_linalg_spectral(m, cls);
  ember::init_fft(m);
  ember::init_spectral_windows(m);
  ember::init_special(m, cls);
  ember::init_autocast(m);
  ember::init_data(m);
  ember::init_distributed(m);
  // Visits every binding (and the pybind11 fallbacks of the hand-written entry points,
  // bindings/fastcall.h), so after them all.
  ember::make_bool_arguments_strict(m, cls);
  ember::add_numpy_argument_aliases(m, cls);
  ember::observer::init_observer(m, cls);  // last: it observes every function defined above
}
