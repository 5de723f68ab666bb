// Decoders of sample fields that are worth doing in C++: .npy headers and JPEG images.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace ember::data {

struct NpyHeader {
  std::string descr;  // a NumPy dtype string such as "<f4"
  bool fortran_order = false;
  std::vector<int64_t> shape;
  size_t data_offset = 0;
  size_t data_bytes = 0;  // itemsize x elements, overflow-checked
};

// Parses a .npy header (format versions 1-3). Returns false for what only NumPy's own reader
// handles (structured dtypes); raises ValueError for what is not a valid .npy, for object arrays
// (loading them would unpickle), and when the data is shorter than the header says.
bool parse_npy_header(const char* data, size_t size, NpyHeader& header);

// Decodes a JPEG into `channels` (1, 3 or 4) 8-bit channels, height x width x channels, into
// the buffer `allocate(height, width)` returns. Gray output from a colour image uses PIL's
// luma weights, and RGBA gets an opaque alpha, so the pixels equal PIL's convert("L"/"RGB"/"RGBA").
// Returns false for colour spaces left to PIL (CMYK, YCCK); raises ValueError for corrupt data.
bool decode_jpeg(const uint8_t* data, size_t size, int channels,
                 const std::function<uint8_t*(int height, int width)>& allocate);

}  // namespace ember::data
