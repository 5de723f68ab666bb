#include "dispatch/mem_overlap.h"

#include <cstdlib>

#include "core/error.h"

namespace ember {

namespace {

// Elements from the first to one past the last reachable one (for dense tensors: numel).
int64_t element_extent(const Tensor& t) {
  if (t.numel() == 0) return 0;
  int64_t extent = 1;
  for (int64_t d = 0; d < t.dim(); ++d) extent += (t.size(d) - 1) * std::abs(t.stride(d));
  return extent;
}

}  // namespace

void assert_no_internal_overlap(const Tensor& t, const char* op) {
  if (t.numel() <= 1) return;
  for (int64_t d = 0; d < t.dim(); ++d) {
    EMBER_CHECK(t.stride(d) != 0 || t.size(d) <= 1, "[", op,
                "] unsupported operation: more than one element of the written-to tensor "
                "refers to a single memory location. Please clone() the tensor before "
                "performing the operation.");
  }
}

void assert_no_partial_overlap(const Tensor& out, const Tensor& in, const char* op) {
  if (!out.defined() || !in.defined() || in.is_same(out) || in.storage() != out.storage()) return;
  const int64_t out_n = element_extent(out), in_n = element_extent(in);
  if (out_n != out.numel() || in_n != in.numel() || out_n == 0 || in_n == 0) return;
  // Addresses only, never dereferenced: valid on any device.
  const char* ob = static_cast<const char*>(out.impl()->device_data());
  const char* ib = static_cast<const char*>(in.impl()->device_data());
  const char* oe = ob + out_n * static_cast<int64_t>(out.itemsize());
  const char* ie = ib + in_n * static_cast<int64_t>(in.itemsize());
  if (oe <= ib || ie <= ob) return;  // disjoint
  const bool full = ob == ib && oe == ie && out.itemsize() == in.itemsize() &&
                    out.sizes().equals(in.sizes()) && out.strides().equals(in.strides());
  EMBER_CHECK(full, "[", op,
              "] unsupported operation: some elements of the input tensor and the "
              "written-to tensor refer to a single memory location. Please clone() the tensor "
              "before performing the operation.");
}

}  // namespace ember
