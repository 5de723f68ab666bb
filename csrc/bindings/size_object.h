// ember.Size objects made from C++ (Tensor.shape, Tensor.size()).
#pragma once
#include "bindings/pybind_ember.h"

namespace ember {

// An ember.Size holding `sizes`.
py::object size_object(IntArrayRef sizes);

}  // namespace ember
