// Headers for writing tar archives that GNU tar, Python's tarfile and the webdataset package read:
// POSIX ustar, with a pax extended header in front when a name or size does not fit ustar.
#pragma once
#include <cstdint>
#include <string>

namespace ember::data {

// The header block(s) of one regular file; the caller writes the data and pads it to 512 bytes.
std::string tar_file_header(const std::string& name, int64_t size, int64_t mtime, int mode,
                            const std::string& user = "", const std::string& group = "");

}  // namespace ember::data
