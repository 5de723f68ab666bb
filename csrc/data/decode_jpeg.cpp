// JPEG decoding through libjpeg(-turbo), the library PIL uses, with PIL's defaults (accurate
// integer IDCT, fancy upsampling), so the pixels equal PIL's.
#include <csetjmp>
#include <cstdio>
#include <vector>

// jpeglib.h needs size_t and FILE declared first.
#include <jerror.h>
#include <jpeglib.h>

#include "core/error.h"
#include "data/decode.h"

namespace ember::data {

namespace {

struct ErrorManager {
  jpeg_error_mgr base;
  std::jmp_buf jump;
  char message[JMSG_LENGTH_MAX];
};

void on_error(j_common_ptr info) {
  auto* errors = reinterpret_cast<ErrorManager*>(info->err);
  (*info->err->format_message)(info, errors->message);
  std::longjmp(errors->jump, 1);
}

// Warnings (extraneous bytes, say) are not errors, as in PIL, except a premature end of data:
// PIL refuses a truncated image rather than return it padded with gray.
void on_message(j_common_ptr info, int level) {
  if (level < 0 && info->err->msg_code == JWRN_JPEG_EOF) on_error(info);
}

// PIL's RGB -> L: L = (299 R + 587 G + 114 B) / 1000 in 16-bit fixed point, rounded.
inline uint8_t luma(const uint8_t* rgb) {
  return static_cast<uint8_t>((rgb[0] * 19595u + rgb[1] * 38470u + rgb[2] * 7471u + 0x8000u) >> 16);
}

// Runs the decompression; POD locals only, so the longjmp from libjpeg skips no destructor.
// Returns 0 on success, 1 on a libjpeg error (message in `errors`), 2 for a colour space left to
// PIL.
int run(jpeg_decompress_struct* info, ErrorManager* errors, const uint8_t* data, size_t size,
        int channels, const std::function<uint8_t*(int, int)>* allocate, uint8_t** row_buffer,
        size_t* row_buffer_size) {
  if (setjmp(errors->jump)) return 1;
  jpeg_create_decompress(info);
  jpeg_mem_src(info, data, static_cast<unsigned long>(size));
  jpeg_read_header(info, TRUE);
  const J_COLOR_SPACE in = info->jpeg_color_space;
  if (in == JCS_CMYK || in == JCS_YCCK) return 2;
  const bool gray_source = in == JCS_GRAYSCALE;
  // Gray from a colour image goes through RGB (PIL's weights, not libjpeg's Y channel).
  info->out_color_space = (channels == 1 && gray_source) ? JCS_GRAYSCALE : JCS_RGB;
  info->dct_method = JDCT_ISLOW;
  info->do_fancy_upsampling = TRUE;
  jpeg_start_decompress(info);
  const int width = static_cast<int>(info->output_width);
  const int height = static_cast<int>(info->output_height);
  const int decoded = info->output_components;
  uint8_t* out = (*allocate)(height, width);
  const bool direct = decoded == channels;
  const size_t row_bytes = static_cast<size_t>(width) * static_cast<size_t>(decoded);
  if (!direct && *row_buffer_size < row_bytes) {
    std::free(*row_buffer);
    *row_buffer = static_cast<uint8_t*>(std::malloc(row_bytes));
    *row_buffer_size = *row_buffer ? row_bytes : 0;
    if (*row_buffer == nullptr) return 3;
  }
  while (info->output_scanline < info->output_height) {
    const size_t y = info->output_scanline;
    uint8_t* target = out + y * static_cast<size_t>(width) * static_cast<size_t>(channels);
    JSAMPROW row = direct ? target : *row_buffer;
    jpeg_read_scanlines(info, &row, 1);
    if (direct) continue;
    const uint8_t* src = *row_buffer;
    for (int x = 0; x < width; ++x, src += decoded) {
      uint8_t* px = target + static_cast<size_t>(x) * static_cast<size_t>(channels);
      if (channels == 1) {
        px[0] = luma(src);
      } else {  // 4: RGB (gray already expanded by libjpeg) plus opaque alpha
        px[0] = src[0];
        px[1] = src[1];
        px[2] = src[2];
        px[3] = 255;
      }
    }
  }
  jpeg_finish_decompress(info);
  return 0;
}

}  // namespace

bool decode_jpeg(const uint8_t* data, size_t size, int channels,
                 const std::function<uint8_t*(int height, int width)>& allocate) {
  EMBER_CHECK_T(ValueError, channels == 1 || channels == 3 || channels == 4,
                "[decode jpeg] channels must be 1, 3 or 4, got ", channels);
  EMBER_CHECK_T(ValueError, size > 0, "[decode jpeg] empty data");
  jpeg_decompress_struct info{};
  ErrorManager errors{};
  info.err = jpeg_std_error(&errors.base);
  errors.base.error_exit = on_error;
  errors.base.emit_message = on_message;
  uint8_t* row_buffer = nullptr;
  size_t row_buffer_size = 0;
  int rc = 0;
  try {
    rc = run(&info, &errors, data, size, channels, &allocate, &row_buffer, &row_buffer_size);
  } catch (...) {  // `allocate` may throw (a Python MemoryError, say)
    jpeg_destroy_decompress(&info);
    std::free(row_buffer);
    throw;
  }
  jpeg_destroy_decompress(&info);
  std::free(row_buffer);
  if (rc == 1) EMBER_THROW(ValueError, "[decode jpeg] corrupt JPEG data: ", errors.message);
  if (rc == 3) EMBER_THROW(OutOfMemoryError, "[decode jpeg] out of memory");
  return rc == 0;
}

}  // namespace ember::data
