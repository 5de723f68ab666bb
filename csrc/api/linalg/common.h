// Public ops of ops/linalg/common.h that have no node of their own (the native functions).
#pragma once
#include "ops/linalg/common.h"

namespace ember {

namespace linalg {
using native::linalg::batch_count;
using native::linalg::batch_prefix;
using native::linalg::check_at_least_2d;
using native::linalg::check_float_or_complex;
using native::linalg::check_same_dtype;
using native::linalg::check_square;
using native::linalg::check_square_float_matrix;
using native::linalg::cols;
using native::linalg::column_major_copy;
using native::linalg::column_major_strides;
using native::linalg::empty_column_major;
using native::linalg::for_each_matrix;
using native::linalg::is_column_major_batch;
using native::linalg::raise_for_infos;
using native::linalg::rows;
}  // namespace linalg

}  // namespace ember
