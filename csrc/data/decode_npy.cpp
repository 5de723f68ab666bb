#include <cctype>
#include <cstring>

#include "core/error.h"
#include "data/decode.h"

namespace ember::data {

namespace {

[[noreturn]] void bad(const std::string& why) {
  EMBER_THROW(ValueError, "[decode npy] ", why);
}

// The value after 'key': in the header's dict literal.
size_t find_value(const std::string& header, const char* key) {
  const std::string quoted = std::string("'") + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos) bad(std::string("header has no ") + quoted);
  at = header.find(':', at + quoted.size());
  if (at == std::string::npos) bad(std::string("header has no value for ") + quoted);
  ++at;
  while (at < header.size() && header[at] == ' ') ++at;
  return at;
}

size_t item_size(const std::string& descr) {
  // [<>|=] kind digits, e.g. <f4, |u1, |b1, <c16; datetime units as <M8[ns].
  size_t i = 0;
  if (i < descr.size() && std::strchr("<>|=", descr[i]) != nullptr) ++i;
  if (i >= descr.size()) bad("empty dtype");
  const char kind = descr[i++];
  if (kind == 'O')
    bad("object arrays cannot be loaded: they are pickled, and Ember never unpickles a sample "
        "field unless asked (decode(..., allow_pickle=True))");
  if (std::strchr("biufcSUVmM?", kind) == nullptr) bad("unsupported dtype '" + descr + "'");
  size_t size = 0;
  const size_t digits = i;
  while (i < descr.size() && std::isdigit(static_cast<unsigned char>(descr[i]))) {
    size = size * 10 + static_cast<size_t>(descr[i] - '0');
    if (size > (size_t{1} << 20)) bad("dtype too large");
    ++i;
  }
  if (i == digits) size = kind == '?' ? 1 : 0;
  if (i < descr.size() && descr[i] == '[' && (kind == 'M' || kind == 'm'))
    i = descr.find(']', i) + 1;
  if (i != descr.size() || size == 0) bad("unsupported dtype '" + descr + "'");
  if (kind == 'U') size *= 4;
  return size;
}

}  // namespace

bool parse_npy_header(const char* data, size_t size, NpyHeader& header) {
  if (size < 10 || std::memcmp(data, "\x93NUMPY", 6) != 0) bad("not a .npy file (bad magic)");
  const int major = static_cast<unsigned char>(data[6]);
  size_t header_len = 0, start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(data[8]) | static_cast<unsigned char>(data[9]) << 8;
    start = 10;
  } else if (major == 2 || major == 3) {
    if (size < 12) bad("truncated header");
    header_len = 0;
    for (int b = 3; b >= 0; --b)
      header_len = header_len << 8 | static_cast<unsigned char>(data[8 + b]);
    start = 12;
  } else {
    bad("unsupported format version " + std::to_string(major));
  }
  if (header_len > size - start) bad("truncated header");
  const std::string text(data + start, header_len);
  size_t at = find_value(text, "descr");
  if (text[at] == '[') return false;  // a structured dtype: NumPy's reader
  if (text[at] != '\'' && text[at] != '"') bad("bad descr");
  const size_t close = text.find(text[at], at + 1);
  if (close == std::string::npos) bad("bad descr");
  header.descr = text.substr(at + 1, close - at - 1);
  at = find_value(text, "fortran_order");
  if (text.compare(at, 4, "True") == 0) {
    header.fortran_order = true;
  } else if (text.compare(at, 5, "False") == 0) {
    header.fortran_order = false;
  } else {
    bad("bad fortran_order");
  }
  at = find_value(text, "shape");
  if (text[at] != '(') bad("bad shape");
  ++at;
  header.shape.clear();
  size_t elements = 1;
  for (;;) {
    while (at < text.size() && (text[at] == ' ' || text[at] == ',')) ++at;
    if (at >= text.size()) bad("bad shape");
    if (text[at] == ')') break;
    if (!std::isdigit(static_cast<unsigned char>(text[at]))) bad("bad shape");
    int64_t dim = 0;
    while (at < text.size() && std::isdigit(static_cast<unsigned char>(text[at]))) {
      dim = dim * 10 + (text[at] - '0');
      if (dim > (int64_t{1} << 48)) bad("shape too large");
      ++at;
    }
    if (dim != 0 && elements > (size_t{1} << 62) / static_cast<size_t>(dim)) bad("shape too large");
    elements *= static_cast<size_t>(dim);
    header.shape.push_back(dim);
  }
  const size_t item = item_size(header.descr);
  if (elements != 0 && item > (size_t{1} << 62) / elements) bad("array too large");
  header.data_offset = start + header_len;
  header.data_bytes = item * elements;
  if (header.data_bytes > size - header.data_offset)
    bad("truncated data: the header promises " + std::to_string(header.data_bytes) + " bytes, " +
        std::to_string(size - header.data_offset) + " follow");
  return true;
}

}  // namespace ember::data
