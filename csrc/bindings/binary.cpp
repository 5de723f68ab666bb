// Binary arithmetic ops: div with rounding_mode, floor_divide (//), remainder (%), fmod,
// pow (**), float_power, atan2, minimum / maximum / fmin / fmax, hypot, logaddexp(2), xlogy,
// copysign and lerp.
#include "api/binary.h"
#include "bindings/elementwise_bindings.h"

namespace ember {

namespace {

using BinaryFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&);

#define EMBER_BINARY(name) \
  [](const Tensor& a, const Tensor& b, const Tensor& o) { return ember::name(a, b, o); }

RoundingMode rounding_mode_arg(py::handle mode) {
  if (mode.is_none()) return RoundingMode::None;
  if (!PyUnicode_Check(mode.ptr())) {
    throw py::type_error(
        str_cat("[div] rounding_mode must be None or a str, not ", Py_TYPE(mode.ptr())->tp_name));
  }
  return parse_rounding_mode(mode.cast<std::string>());
}

void def_div(py::module_& m, TensorClass& cls, const char* name) {
  m.def(
      name,
      [name](py::handle a, py::handle b, py::object mode, py::object out) {
        Tensor o = out_arg(out, name);
        Tensor x = to_operand(a, name), y = to_operand(b, name);
        RoundingMode rm = rounding_mode_arg(mode);
        NoGilIfLarge nogil(max_numel(x, y));
        return ember::div(x, y, rm, o);
      },
      py::arg("input"), py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none(),
      py::arg("out") = py::none());
  cls.def(
      name,
      [name](const Tensor& a, py::handle b, py::object mode) {
        Tensor y = to_operand(b, name);
        RoundingMode rm = rounding_mode_arg(mode);
        NoGilIfLarge nogil(max_numel(a, y));
        return ember::div(a, y, rm);
      },
      py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
  cls.def((std::string(name) + "_").c_str(),
          [name](py::object self, py::handle b, py::object mode) {
            Tensor t = self.cast<Tensor>();
            Tensor y = to_operand(b, name);
            RoundingMode rm = rounding_mode_arg(mode);
            {
              NoGilIfLarge nogil(max_numel(t, y));
              ember::div(t, y, rm, t);
            }
            return self;
          },
          py::arg("other"), py::kw_only(), py::arg("rounding_mode") = py::none());
}

// lerp's weight is a Python number or a Tensor.
Tensor lerp_any(const Tensor& start, const Tensor& end, py::handle weight, const Tensor& out) {
  if (!is_tensor(weight)) {
    if (auto w = try_parse_scalar(weight)) {
      NoGilIfLarge nogil(max_numel(start, end));
      return lerp(start, end, *w, out);
    }
  }
  Tensor w = to_operand(weight, "lerp");
  NoGilIfLarge nogil(max_numel(start, end));
  return lerp(start, end, w, out);
}

}  // namespace

void init_binary(py::module_& m, TensorClass& cls) {
  def_div(m, cls, "div");
  def_div(m, cls, "divide");

  def_binary(m, cls, "floor_divide", BinaryFn(EMBER_BINARY(floor_divide)),
             {"__floordiv__", "__rfloordiv__", "__ifloordiv__"});
  def_binary(m, cls, "remainder", BinaryFn(EMBER_BINARY(remainder)),
             {"__mod__", "__rmod__", "__imod__"});
  def_binary(m, cls, "fmod", BinaryFn(EMBER_BINARY(fmod)));

  // pow(input, exponent): either side may be a Python number.
  BinaryFn pow_fn = [](const Tensor& a, const Tensor& b, const Tensor& o) { return pow(a, b, o); };
  def_binary(m, cls, "pow", pow_fn, {"__pow__", "__rpow__", "__ipow__"});
  def_binary(m, cls, "float_power", BinaryFn(EMBER_BINARY(float_power)));

  def_binary(m, cls, "atan2", BinaryFn(EMBER_BINARY(atan2)));
  def_binary(m, cls, "arctan2", BinaryFn(EMBER_BINARY(atan2)));
  const BinaryForms no_inplace{nullptr, nullptr, nullptr, false};
  def_binary(m, cls, "minimum", BinaryFn(EMBER_BINARY(minimum)), no_inplace);
  def_binary(m, cls, "maximum", BinaryFn(EMBER_BINARY(maximum)), no_inplace);
  def_binary(m, cls, "fmin", BinaryFn(EMBER_BINARY(fmin)), no_inplace);
  def_binary(m, cls, "fmax", BinaryFn(EMBER_BINARY(fmax)), no_inplace);
  def_binary(m, cls, "hypot", BinaryFn(EMBER_BINARY(hypot)));
  def_binary(m, cls, "logaddexp", BinaryFn(EMBER_BINARY(logaddexp)), no_inplace);
  def_binary(m, cls, "logaddexp2", BinaryFn(EMBER_BINARY(logaddexp2)), no_inplace);
  def_binary(m, cls, "xlogy", BinaryFn(EMBER_BINARY(xlogy)));
  def_binary(m, cls, "copysign", BinaryFn(EMBER_BINARY(copysign)));

  // lerp(input, end, weight, *, out=None)
  m.def(
      "lerp",
      [](const Tensor& start, py::handle end, py::handle weight, py::object out) {
        return lerp_any(start, to_operand(end, "lerp"), weight, out_arg(out, "lerp"));
      },
      py::arg("input"), py::arg("end"), py::arg("weight"), py::kw_only(),
      py::arg("out") = py::none());
  cls.def(
      "lerp",
      [](const Tensor& start, py::handle end, py::handle weight) {
        return lerp_any(start, to_operand(end, "lerp"), weight, Tensor());
      },
      py::arg("end"), py::arg("weight"));
  cls.def(
      "lerp_",
      [](py::object self, py::handle end, py::handle weight) {
        Tensor t = self.cast<Tensor>();
        lerp_any(t, to_operand(end, "lerp"), weight, t);
        return self;
      },
      py::arg("end"), py::arg("weight"));
}

}  // namespace ember
