// dst <- src when either is on a device other than the CPU (Note [Copies across devices]).
#pragma once
#include "core/tensor.h"

namespace ember {

// dst and src may be on any devices with a loaded backend; src broadcasts to dst's shape and is
// converted to dst's dtype. Does not bump dst's version (copy_into does).
void copy_across_devices(const Tensor& dst, const Tensor& src, const char* op);

}  // namespace ember
